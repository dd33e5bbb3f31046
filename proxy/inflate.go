package proxy

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/valyala/fasthttp"
)

// errInflatedTooLarge is a compressed request body that inflates past
// the request limit.
var errInflatedTooLarge = errors.New("request body inflates past the request limit")

// inflateRequest replaces a request body the client gzipped
// (Content-Encoding: gzip, the official clients' compression option)
// with the body itself and drops the header, so the gate checks, and
// winnow rewrites and refines, the search itself instead of passing it
// unrefined. The inflated body is at most limit bytes (a small gzip
// stream can inflate to gigabytes); more is errInflatedTooLarge. Other
// encodings are left as they are, for the engine to take or refuse.
func inflateRequest(r *fasthttp.Request, limit int) error {
	enc := strings.ToLower(strings.TrimSpace(string(r.Header.ContentEncoding())))
	if enc != "gzip" && enc != "x-gzip" {
		return nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(r.Body()))
	if err != nil {
		return fmt.Errorf("gzip request body: %w", err)
	}
	body, err := io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err != nil {
		return fmt.Errorf("gzip request body: %w", err)
	}
	if len(body) > limit {
		return fmt.Errorf("%w (%d bytes)", errInflatedTooLarge, limit)
	}
	r.SetBodyRaw(body)
	r.Header.Del("Content-Encoding")
	return nil
}
