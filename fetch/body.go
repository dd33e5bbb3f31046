package fetch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	brotli "github.com/molecule-man/go-brrr"
	"github.com/valyala/fasthttp"
)

// errCap is returned by capReader past its limit.
var errCap = errors.New("fetch: cap reached")

// capReader reads at most n bytes of r and fails with errCap when r holds
// more; over records that it did.
type capReader struct {
	r    io.Reader
	left int64
	over bool
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.over {
		return 0, errCap
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1] // one byte more than allowed detects the overflow
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		c.over = true
		return n + int(c.left), errCap
	}
	return n, err
}

// readBody reads and decodes resp's streamed body under both caps. A
// cancelled ctx (every caller gone, or the deadline) closes the stream,
// which interrupts a blocked read at once.
func (c *Client) readBody(ctx context.Context, resp *fasthttp.Response, enc string) (body []byte, truncated bool, err error) {
	maxWire, maxDecoded := c.opt.MaxBodyBytes, c.opt.MaxDecodedBytes
	if cl := resp.Header.ContentLength(); cl > 0 && int64(cl) > maxWire && !c.opt.Truncate {
		return nil, false, fmt.Errorf("%w: Content-Length %d over %d bytes", ErrTooLarge, cl, maxWire)
	}
	stream := resp.BodyStream()
	if stream == nil {
		// Not streamed (fasthttp buffers empty bodies): still apply the caps.
		stream = &byteReader{b: resp.Body()}
	} else if closer, ok := stream.(interface{ CloseWithError(error) error }); ok {
		done := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			defer close(done)
			closer.CloseWithError(ctx.Err()) //nolint:errcheck // interrupt only
		})
		defer func() {
			if !stop() {
				<-done
			}
		}()
	}
	wire := &capReader{r: stream, left: maxWire}
	var r io.Reader = wire
	switch enc {
	case "", "identity":
	case "gzip", "x-gzip":
		br := bufio.NewReaderSize(wire, 512) // a flate.Reader: gzip reads it unbuffered, so Peek sees what follows a member
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, false, c.bodyError(ctx, wire, nil, enc, err)
		}
		defer zr.Close()
		zr.Multistream(false)
		r = &gzipMembers{zr: zr, br: br}
	case "deflate":
		// RFC 9110 deflate is zlib; some servers send raw deflate.
		br := bufio.NewReaderSize(wire, 512)
		if h, err := br.Peek(2); err == nil && h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return nil, false, c.bodyError(ctx, wire, nil, enc, err)
			}
			defer zr.Close()
			r = zr
		} else {
			fr := flate.NewReader(br)
			defer fr.Close()
			r = fr
		}
	case "br":
		r = brotli.NewReader(wire)
	default:
		return nil, false, fmt.Errorf("%w: content encoding %q", ErrContentType, enc)
	}
	decoded := &capReader{r: r, left: maxDecoded}
	if r == io.Reader(wire) {
		decoded = wire // identity: one cap, the smaller of the two
		if maxDecoded < maxWire {
			wire.left = maxDecoded
		}
	}
	hint := int64(32 << 10)
	if cl := int64(resp.Header.ContentLength()); decoded == wire && cl >= 0 {
		hint = min(cl, wire.left) + 1 // bounded by the cap, whatever the header claims
	}
	body, err = readAll(decoded, hint)
	if err == nil {
		return body, false, nil
	}
	if (wire.over || decoded.over) && c.opt.Truncate {
		return body, true, nil
	}
	return nil, false, c.bodyError(ctx, wire, decoded, enc, err)
}

// bodyError names why reading a body failed.
func (c *Client) bodyError(ctx context.Context, wire, decoded *capReader, enc string, err error) error {
	switch {
	case wire.over:
		return fmt.Errorf("%w: over %d bytes on the wire", ErrTooLarge, c.opt.MaxBodyBytes)
	case decoded != nil && decoded.over:
		return fmt.Errorf("%w: over %d bytes decoded", ErrTooLarge, c.opt.MaxDecodedBytes)
	case ctx.Err() != nil:
		return ctxError(ctx)
	case isTimeout(err):
		return ErrTimeout
	case enc != "" && enc != "identity" && !isNetErr(err):
		return fmt.Errorf("fetch: decoding %s body: %v", enc, err)
	}
	return &netError{err}
}

func isNetErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}

// readAll reads r to EOF into a slice that starts at hint bytes and grows.
func readAll(r io.Reader, hint int64) ([]byte, error) {
	b := make([]byte, 0, hint)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// gzipMembers reads the gzip members of a body one after the other, and
// ends at the first bytes after a member that do not start another: a
// newline, padding or junk that some servers append to their compressed
// output, which browsers (Chromium's GzipSourceStream) and urllib3 ignore
// too. gzip's own multistream mode fails on them ("invalid header",
// "unexpected EOF"), losing a page a browser shows.
type gzipMembers struct {
	zr *gzip.Reader
	br *bufio.Reader
}

func (g *gzipMembers) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	if err != io.EOF {
		return n, err
	}
	if h, perr := g.br.Peek(2); perr != nil || h[0] != 0x1f || h[1] != 0x8b {
		return n, io.EOF
	}
	if err := g.zr.Reset(g.br); err != nil {
		return n, err
	}
	g.zr.Multistream(false)
	return n, nil
}

// byteReader reads a byte slice without copying it first.
type byteReader struct{ b []byte }

func (r *byteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
