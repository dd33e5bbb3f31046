package proxy

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestInflateRequest: a gzipped body (the official clients' compression
// option) becomes the body itself without Content-Encoding; others stay;
// a broken stream and one inflating past the limit are errors.
func TestInflateRequest(t *testing.T) {
	const search = `{"query":{"match":{"body":"benchmark"}},"size":10}`
	cases := []struct {
		name, enc string
		body      []byte
		want      string // the body after; "" with wantErr
		wantEnc   string
		wantErr   error // nil: none; errInflatedTooLarge; or any other error (errAny)
	}{
		{name: "identity", body: []byte(search), want: search},
		{name: "gzip", enc: "gzip", body: gzipped(t, search), want: search},
		{name: "x-gzip upper case", enc: " X-Gzip", body: gzipped(t, search), want: search},
		{name: "br left to the engine", enc: "br", body: []byte("\x8b\x02"), want: "\x8b\x02", wantEnc: "br"},
		{name: "not gzip", enc: "gzip", body: []byte(search), wantErr: errAny},
		{name: "cut short", enc: "gzip", body: gzipped(t, search)[:20], wantErr: errAny},
		{name: "bomb", enc: "gzip", body: gzipped(t, strings.Repeat("a", 1<<20+1)), wantErr: errInflatedTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r fasthttp.Request
			r.Header.SetMethod("POST")
			if c.enc != "" {
				r.Header.Set("Content-Encoding", c.enc)
			}
			r.SetBody(c.body)
			err := inflateRequest(&r, 1<<20)
			switch {
			case c.wantErr == nil && err != nil:
				t.Fatalf("inflateRequest = %v, want no error", err)
			case c.wantErr == errAny && err == nil, c.wantErr == errInflatedTooLarge && !errors.Is(err, errInflatedTooLarge):
				t.Fatalf("inflateRequest = %v, want %v", err, c.wantErr)
			case c.wantErr != nil:
				return
			}
			if got := string(r.Body()); got != c.want {
				t.Errorf("body %q, want %q", got, c.want)
			}
			if got := string(r.Header.ContentEncoding()); got != c.wantEnc {
				t.Errorf("Content-Encoding %q, want %q", got, c.wantEnc)
			}
		})
	}
}

// errAny stands for any error in TestInflateRequest's table.
var errAny = errors.New("any error")
