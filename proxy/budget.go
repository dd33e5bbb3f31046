package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// errOverBound reports an engine answer that would take the bytes in
// flight past their bound ([Options.AnswerBytesInFlight]): it is not
// read into memory, and the client's own request passes through.
var errOverBound = errors.New("answer over the bound on bytes in flight")

// overBoundError is readAnswer's errOverBound: the engine's stream is
// left open, after head (the bytes already read, which the budget no
// longer counts), so a cursor's page, which must not be asked for
// twice, can still be relayed whole ([relayRest]).
type overBoundError struct{ head []byte }

func (e *overBoundError) Error() string        { return errOverBound.Error() }
func (e *overBoundError) Is(target error) bool { return target == errOverBound }

// answerChunk is the first buffer, and the smallest growth, of an answer
// of unknown length (chunked, or read until the engine closes).
const answerChunk = 64 << 10

// Buffers recycled between answers: at most maxPooledBuffers. Those over
// maxPooledBuffer bytes (large) are kept only while the bytes held and
// the large buffers kept together fit the bound, which take makes room
// in by dropping them: memory the bound allows already, reused rather
// than left to the collector, which under GOGC lets the heap grow by a
// multiple of what is live before it frees an answer-sized buffer.
const (
	maxPooledBuffers = 64
	maxPooledBuffer  = 1 << 20
)

// byteBudget bounds the bytes of engine answers held in memory at once
// across requests: an answer is admitted before it is read (by its
// Content-Length) or as it is read (chunk by chunk), never after. Safe
// for concurrent use; the zero value holds nothing (max 0).
type byteBudget struct {
	max int64
	// wait bounds how long an answer of known length waits for room
	// ([Options.AdmitWait]); zero: it does not wait.
	wait time.Duration

	mu    sync.Mutex // guards n, peak, freed, bufs and kept
	n     int64
	peak  int64         // the most n has been
	freed chan struct{} // closed when bytes are given back; nil when none wait
	// bufs are buffers answers were read into, taking turns with the
	// buffers of fasthttp's pooled responses (SwapBody), so a steady
	// stream of small answers allocates none.
	bufs [][]byte
	kept int64 // the capacity of the large buffers in bufs
}

// take reserves n bytes and reports whether they fit; a caller that got
// true gives them back with give.
func (b *byteBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.takeLocked(n)
}

func (b *byteBudget) takeLocked(n int64) bool {
	if b.n+n > b.max {
		return false
	}
	b.n += n
	b.peak = max(b.peak, b.n)
	b.dropLocked()
	return true
}

// dropLocked drops large kept buffers until the bytes held and kept fit
// the bound.
func (b *byteBudget) dropLocked() {
	for i := len(b.bufs) - 1; i >= 0 && b.n+b.kept > b.max; i-- {
		if c := cap(b.bufs[i]); c > maxPooledBuffer {
			b.kept -= int64(c)
			b.removeLocked(i)
		}
	}
}

// removeLocked takes bufs[i] out of the free list.
func (b *byteBudget) removeLocked(i int) {
	b.bufs[i] = b.bufs[len(b.bufs)-1]
	b.bufs[len(b.bufs)-1] = nil
	b.bufs = b.bufs[:len(b.bufs)-1]
}

// waitBound ends a wait for room: at deadline (zero: none) or once done
// is closed (nil: never). A request's handler bounds its wait by its
// deadline without a context, whose timer a request that never waits
// would pay for.
type waitBound struct {
	deadline time.Time
	done     <-chan struct{}
}

// ctxBound is the waitBound of ctx: its deadline, and its end.
func ctxBound(ctx context.Context) waitBound {
	d, _ := ctx.Deadline()
	return waitBound{d, ctx.Done()}
}

// takeWait is take that waits, up to wait or until wb ends it, for other
// requests to give bytes back. n over the whole bound fails at once.
func (b *byteBudget) takeWait(wb waitBound, n int64, wait time.Duration) bool {
	if n > b.max {
		return false
	}
	var timeout <-chan time.Time
	for {
		b.mu.Lock()
		if b.takeLocked(n) {
			b.mu.Unlock()
			return true
		}
		if b.freed == nil {
			b.freed = make(chan struct{})
		}
		freed := b.freed
		b.mu.Unlock()
		if timeout == nil {
			if !wb.deadline.IsZero() {
				wait = min(wait, time.Until(wb.deadline))
			}
			t := time.NewTimer(wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-freed:
		case <-timeout:
			return false
		case <-wb.done:
			return false
		}
	}
}

// force reserves n bytes whether they fit or not: memory already taken
// (a rendering that outgrew its reservation) is counted, so what comes
// next waits for it.
func (b *byteBudget) force(n int64) {
	b.mu.Lock()
	b.n += n
	b.peak = max(b.peak, b.n)
	b.dropLocked()
	b.mu.Unlock()
}

// give returns n bytes and wakes the requests waiting for room.
func (b *byteBudget) give(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.n -= n
	if b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
	b.mu.Unlock()
}

// used is the bytes held now.
func (b *byteBudget) used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// highWater is the most bytes held at once since the budget was made.
func (b *byteBudget) highWater() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

// buffer returns an empty buffer of capacity at least n, recycled when
// one is free and at most twice as large (or small), so a small answer
// does not take up a large buffer its reservation does not count.
func (b *byteBudget) buffer(n int) []byte {
	b.mu.Lock()
	for i := len(b.bufs) - 1; i >= 0; i-- {
		if buf := b.bufs[i]; cap(buf) >= n && cap(buf) <= max(2*n, maxPooledBuffer) {
			if cap(buf) > maxPooledBuffer {
				b.kept -= int64(cap(buf))
			}
			b.removeLocked(i)
			b.mu.Unlock()
			return buf[:0]
		}
	}
	b.mu.Unlock()
	return make([]byte, 0, n)
}

// recycle keeps buf for a later answer if the free list has room and, for
// a large buffer, the bound has room beside the bytes held; buf must not
// be used after.
func (b *byteBudget) recycle(buf []byte) {
	c := int64(cap(buf))
	if c == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.bufs) >= maxPooledBuffers {
		return
	}
	if c > maxPooledBuffer {
		if b.n+b.kept+c > b.max {
			return
		}
		b.kept += c
	}
	b.bufs = append(b.bufs, buf[:0])
}

// readAnswer reads resp's streamed body (fasthttp's client streams
// every engine answer) into memory within the budget, counting two bytes
// per byte of buffer: the answer and its rendering. An answer with a
// Content-Length is admitted whole before a byte is read, waiting up to
// b.wait for room, or until wb ends the wait; one of unknown length is
// admitted chunk by chunk as it is read. It returns the bytes held, which the caller gives back
// once done with resp.Body(). On errOverBound (an [*overBoundError])
// nothing is held and resp's stream stays open after what was read
// (releasing resp closes it); on any other error reading nothing is
// held and resp's stream is closed.
func (b *byteBudget) readAnswer(wb waitBound, resp *fasthttp.Response) (held int64, err error) {
	st := resp.BodyStream()
	if st == nil {
		// No body (HEAD, 204, 304), or one read already.
		return 0, nil
	}
	var buf []byte
	if n := resp.Header.ContentLength(); n >= 0 {
		held = 2 * int64(n)
		if !b.takeWait(wb, held, b.wait) {
			return 0, &overBoundError{}
		}
		buf = b.buffer(n)[:n]
		_, err = io.ReadFull(st, buf)
	} else {
		buf, held, err = b.readUnknown(st)
	}
	if errors.Is(err, errOverBound) {
		b.give(held)
		return 0, &overBoundError{head: buf}
	}
	if err != nil {
		b.give(held)
		b.recycle(buf)
		resp.CloseBodyStream()
		return 0, err
	}
	// The whole body was read: closing the stream returns its connection
	// to the pool.
	resp.CloseBodyStream()
	b.recycle(resp.SwapBody(buf))
	return held, nil
}

// releaseResponse releases an engine response whose body readAnswer
// read. A large body's buffer goes back to the budget (kept within the
// bound, or left to the collector), never into fasthttp's pool of
// response bodies, which would keep an answer-sized buffer outside the
// bound; a small one stays with the response, taking turns with the
// budget's buffers.
func (b *byteBudget) releaseResponse(resp *fasthttp.Response) {
	if cap(resp.Body()) > maxPooledBuffer {
		b.recycle(resp.SwapBody(nil))
	}
	fasthttp.ReleaseResponse(resp)
}

// heldBody is a refined answer written to the client as a body stream.
// fasthttp closes it once the client has the answer, or is gone, and
// Close gives back the budget's bytes it holds and recycles its buffer:
// a rendering counts against the budget until the client has received
// it (a slow client holds it for as long as it reads), and its buffer
// never enters fasthttp's pools. Safe for a Close during a Read (fasthttp
// compresses a stream in a goroutine of its own and may close it from
// another): the buffer is recycled only once no Read uses it.
type heldBody struct {
	mu   sync.Mutex // guards all below
	b    *byteBudget
	buf  []byte // nil once closed
	off  int
	held int64
}

func (h *heldBody) Read(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.off >= len(h.buf) {
		return 0, io.EOF
	}
	n := copy(p, h.buf[h.off:])
	h.off += n
	return n, nil
}

func (h *heldBody) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.buf != nil {
		h.b.give(h.held)
		h.b.recycle(h.buf)
		h.buf, h.off = nil, 0
	}
	return nil
}

// readUnknown reads a body of unknown length, growing its buffer only
// while the budget has room for the growth.
func (b *byteBudget) readUnknown(st io.Reader) (buf []byte, held int64, err error) {
	for {
		if len(buf) == cap(buf) {
			grow := max(cap(buf), answerChunk)
			if !b.take(2 * int64(grow)) {
				// Doubling does not fit; the last chunks may.
				grow = answerChunk
				if !b.take(2 * int64(grow)) {
					return buf, held, errOverBound
				}
			}
			held += 2 * int64(grow)
			next := b.buffer(cap(buf) + grow)
			next = append(next, buf...)
			b.recycle(buf)
			buf = next
		}
		n, rerr := st.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case rerr == io.EOF:
			return buf, held, nil
		case rerr != nil:
			return buf, held, rerr
		}
	}
}

// engineBody streams an engine's answer to the client: fasthttp reads it
// as it writes the client's response, after the handler has returned, and
// closes it then, which releases the engine's response (and its
// connection, dropped if the answer was not read to the end). When the
// answer is compressed for the client, fasthttp reads it in a goroutine of
// its own, which may still read when a client that went away has it
// closed: mu orders the two, and a read after Close fails.
type engineBody struct {
	mu   sync.Mutex
	head []byte             // read first: what readAnswer read before the bound
	resp *fasthttp.Response // nil once closed
	// cut, if not nil, is told once of a read from the engine that
	// failed (the answer ended short), with the bytes relayed before it.
	cut     func(err error, relayed int64)
	relayed int64
	// client is the client's connection when the answer is compressed
	// for it, closed when the engine's answer ends short. Why: fasthttp compresses a stream for a client
	// that accepts gzip in a goroutine of its own, and when the stream
	// fails it still ends the gzip member and the chunked body, so the
	// client would get a cut answer that reads as whole (a 200 with
	// half the JSON). Closed first, the connection takes no such ending.
	client net.Conn
}

func (e *engineBody) Read(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.resp == nil {
		return 0, io.ErrClosedPipe
	}
	if len(e.head) > 0 {
		n := copy(p, e.head)
		e.head = e.head[n:]
		e.relayed += int64(n)
		return n, nil
	}
	n, err := e.resp.BodyStream().Read(p)
	e.relayed += int64(n)
	if err != nil && err != io.EOF {
		if e.client != nil {
			e.client.Close()
		}
		if e.cut != nil {
			e.cut(err, e.relayed)
			e.cut = nil
		}
	}
	return n, err
}

// relayChunk is the most of a relayed answer moved per step. fasthttp
// would copy the stream through its connection's 4 KB write buffer, a
// read and a write (each under its deadline) per 4 KB; a search answer
// of tens of KB goes in one or two steps of this size instead. A buffer
// is held only while its relay runs, so slow clients hold at most this
// much each.
const relayChunk = 32 << 10

var relayBufs = sync.Pool{New: func() any { b := make([]byte, relayChunk); return &b }}

// WriteTo moves the answer to w in relayChunk steps: fasthttp's copy of a
// body stream prefers it to Read. Each step fills the buffer (or reaches
// the answer's end) before it writes: an engine writes its answer in
// pieces of a few KB, and a write to the client per piece costs a
// system call and, on the client's side, a wake-up and a read each.
func (e *engineBody) WriteTo(w io.Writer) (n int64, err error) {
	bp := relayBufs.Get().(*[]byte)
	defer relayBufs.Put(bp)
	buf := *bp
	for {
		k, rerr := io.ReadFull(e, buf)
		if rerr == io.ErrUnexpectedEOF {
			rerr = io.EOF // the answer's last, short step
		}
		if k > 0 {
			m, werr := w.Write(buf[:k])
			n += int64(m)
			switch {
			case werr != nil:
				return n, werr
			case m < k:
				return n, io.ErrShortWrite
			}
		}
		switch {
		case rerr == io.EOF:
			return n, nil
		case rerr != nil:
			return n, rerr
		}
	}
}

func (e *engineBody) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.resp != nil {
		fasthttp.ReleaseResponse(e.resp)
		e.resp = nil
	}
	return nil
}

// MemoryBaseline is what the proxy's process needs besides the answers
// in flight and the caches' contents: code, goroutine stacks, fasthttp's
// buffers, the parse of the answers in flight and the collector's slack.
// [Server.LimitMemory] adds it to the Go memory limit.
const MemoryBaseline = 112 << 20

// MemoryLimit is the Go memory limit that keeps the process within the
// bound on answers in flight, the bytes the two caches hold now and
// [MemoryBaseline]. It follows what the caches hold, not their bounds:
// a limit at the caches' bounds lets the collector use the room of
// empty caches as headroom, and a heap of answers in flight grows
// towards it before a collection (GOGC 400 as serve runs it: five times
// what is live).
func (s *Server) MemoryLimit() int64 {
	c := s.cache.c
	return s.o.AnswerBytesInFlight + c.MaxCost() - c.RemainingCost() + s.memo.answers.usedBytes() + MemoryBaseline
}

// LimitMemory sets the Go memory limit to [Server.MemoryLimit] now and
// every interval until ctx ends, as the caches fill or empty. For a
// process that runs the proxy (winnow serve); unless the operator set
// GOMEMLIMIT, which it leaves alone.
func (s *Server) LimitMemory(ctx context.Context, every time.Duration) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(s.MemoryLimit())
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				debug.SetMemoryLimit(s.MemoryLimit())
			}
		}
	}()
}
