package proxy

import (
	"io"

	"github.com/valyala/fasthttp"
)

// maxSealedHead bounds what sealCursors reads of an answer streamed to
// the client to find the IDs at its start: an Elasticsearch scroll ID
// grows by some 50 bytes a shard. An answer whose IDs run past it
// passes unsealed, and the client's next request with them is refused.
const maxSealedHead = 1 << 20

// headReader is an answer stream whose first bytes can be read before
// it is sent and put back, rewritten.
type headReader interface {
	io.Reader
	unread(b []byte)
}

// sealCursors seals the engine's scroll and point in time IDs in the
// answer ctx holds ([engine.CursorSeal.SealHead]), for a route whose
// answer carries them ([engine.Route.CursorIDs]): whatever path the
// answer took (refined, relayed or streamed from the engine, from the
// answer cache, winnow_mode=off), it leaves through here. Errors carry
// no IDs and are left alone.
func (s *Server) sealCursors(ctx *fasthttp.RequestCtx) {
	resp := &ctx.Response
	if resp.StatusCode()/100 != 2 || len(resp.Header.ContentEncoding()) != 0 {
		return
	}
	st := resp.BodyStream()
	if st == nil {
		if out, _ := s.seal.SealHead(resp.Body(), true); len(out) != len(resp.Body()) {
			resp.SetBody(out)
		}
		return
	}
	hr, ok := st.(headReader)
	if !ok {
		return
	}
	var head []byte
	for {
		if len(head) == cap(head) {
			head = append(head, make([]byte, max(4<<10, len(head)))...)[:len(head)]
		}
		n, err := hr.Read(head[len(head):cap(head)])
		head = head[:len(head)+n]
		atEnd := err != nil
		out, more := s.seal.SealHead(head, atEnd)
		if !more || len(head) >= maxSealedHead {
			hr.unread(out)
			if cl := resp.Header.ContentLength(); cl >= 0 {
				resp.Header.SetContentLength(cl + len(out) - len(head))
			}
			return
		}
	}
}

// unread puts b in front of what is left to read.
func (e *engineBody) unread(b []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.head = append(b[:len(b):len(b)], e.head...)
}

// unread puts b in front of what is left to read. The buffer held
// stays the budget's to recycle; b is a copy.
func (h *heldBody) unread(b []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.buf == nil {
		return
	}
	rest := h.buf[h.off:]
	if h.off >= len(b) {
		h.off -= len(b)
		copy(h.buf[h.off:], b)
		return
	}
	h.buf = append(append(make([]byte, 0, len(b)+len(rest)), b...), rest...)
	h.off = 0
}
