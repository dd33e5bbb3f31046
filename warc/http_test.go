package warc

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"net/http/httputil"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	brotli "github.com/molecule-man/go-brrr"
)

func chunked(s string) string {
	var b bytes.Buffer
	w := httputil.NewChunkedWriter(&b)
	for len(s) > 0 {
		n := min(len(s), 7)
		w.Write([]byte(s[:n]))
		s = s[n:]
	}
	w.Close()
	b.WriteString("\r\n")
	return b.String()
}

func compress(kind, s string) string {
	var b bytes.Buffer
	var w io.WriteCloser
	switch kind {
	case "gzip":
		w = gzip.NewWriter(&b)
	case "zlib":
		w = zlib.NewWriter(&b)
	case "flate":
		w, _ = flate.NewWriter(&b, 5)
	case "br":
		w, _ = brotli.NewWriter(&b, 5)
	case "zstd":
		w, _ = zstd.NewWriter(&b)
	}
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

func TestParseHTTPResponse(t *testing.T) {
	const page = "<html><body><p>Hello, chunked and gzipped world.</p></body></html>\n"
	tests := []struct {
		name, block string
		status      int
		ctype, body string
		err         error
	}{
		{"identity", "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 999\r\n\r\n" + page, 200, "text/html; charset=utf-8", page, nil},
		{"bare LF and no reason", "HTTP/1.0 404\nContent-Type: text/plain\n\nnot found", 404, "text/plain", "not found", nil},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html\r\n\r\n" + chunked(page), 200, "text/html", page, nil},
		{"gzip", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Type: text/html\r\n\r\n" + compress("gzip", page), 200, "text/html", page, nil},
		{"chunked gzip", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: x-gzip\r\nContent-Type: text/html\r\n\r\n" + chunked(compress("gzip", page)), 200, "text/html", page, nil},
		{"deflate zlib", "HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\n\r\n" + compress("zlib", page), 200, "", page, nil},
		{"deflate raw", "HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\n\r\n" + compress("flate", page), 200, "", page, nil},
		{"no body", "HTTP/1.1 304 Not Modified\r\n\r\n", 304, "", "", nil},
		{"headers end block", "HTTP/1.1 204 No Content\r\nServer: x", 0, "", "", ErrMalformed},
		{"brotli", "HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Type: text/html\r\n\r\n" + compress("br", page), 200, "text/html", page, nil},
		{"chunked zstd", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: zstd\r\n\r\n" + chunked(compress("zstd", page)), 200, "", page, nil},
		{"unsupported", "HTTP/1.1 200 OK\r\nContent-Encoding: compress\r\n\r\nxx", 0, "", "", ErrUnsupportedEncoding},
		{"bad gzip", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\nnot gzip", 0, "", "", ErrMalformed},
		{"not http", "GET / HTTP/1.1\r\n\r\n", 0, "", "", ErrMalformed},
		{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n", 0, "", "", ErrMalformed},
		{"line without a colon", "HTTP/1.1 200 OK\r\nno colon here\r\nContent-Type: text/plain\r\n\r\nbody", 200, "text/plain", "body", nil},
		{"empty", "", 0, "", "", ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body, err := ParseHTTPResponse(strings.NewReader(tt.block))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Errorf("ParseHTTPResponse(%.30q) error = %v, want %v", tt.block, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseHTTPResponse(%.30q): %v", tt.block, err)
			}
			b, err := io.ReadAll(body)
			if err != nil {
				t.Fatalf("reading body: %v", err)
			}
			if status != tt.status || h.Get("Content-Type") != tt.ctype || string(b) != tt.body {
				t.Errorf("ParseHTTPResponse(%.30q) = %d, %q, %q, want %d, %q, %q", tt.block, status, h.Get("Content-Type"), b, tt.status, tt.ctype, tt.body)
			}
			for _, k := range []string{"Content-Encoding", "Transfer-Encoding"} {
				if h.Get(k) != "" {
					t.Errorf("header %s = %q after decoding", k, h.Get(k))
				}
			}
		})
	}
}

func TestParseHTTPResponseTruncatedChunk(t *testing.T) {
	block := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked("some text that is cut")[:20]
	_, _, body, err := ParseHTTPResponse(strings.NewReader(block))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(body); err == nil {
		t.Error("reading a cut chunked body: no error")
	}
}

// TestPywbDechunked reads the responses pywb 2.10.0's recorder wrote
// (testdata/pywb.warc.gz): it stores a chunked response de-chunked and
// keeps its Transfer-Encoding: chunked header (pywb issue 584), so the
// body is the page itself, gzipped or not.
func TestPywbDechunked(t *testing.T) {
	bodies := map[string]string{}
	eachRecord(t, readFile(t, "testdata/pywb.warc.gz"), func(rec *Record) {
		if rec.Type != "response" {
			return
		}
		status, _, body, err := ParseHTTPResponse(rec.Content)
		if err != nil {
			t.Fatalf("%s: %v", rec.TargetURI, err)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Errorf("%s: reading the body: %v", rec.TargetURI, err)
		}
		if status != 200 {
			t.Errorf("%s: status %d", rec.TargetURI, status)
		}
		bodies[strings.TrimPrefix(rec.TargetURI, "http://127.0.0.1:8766/")] = string(b)
	})
	page := bodies["chunked.html"]
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.HasSuffix(page, "</html>") || len(page) != 1577 {
		t.Errorf("chunked.html: body of %d bytes %.40q...%q, want the page of 1577 bytes", len(page), page, page[max(0, len(page)-10):])
	}
	if bodies["chunked-gzip.html"] != page {
		t.Errorf("chunked-gzip.html: body %.60q, want chunked.html's", bodies["chunked-gzip.html"])
	}
}

// TestWgetJunkHeaderLine reads the response wget 1.21.3 recorded from a
// server whose header repeats its status line and names a field without
// a colon (testdata/wget-junk.warc.gz): wget took the page, and so must
// the parse.
func TestWgetJunkHeaderLine(t *testing.T) {
	var pages []string
	eachRecord(t, readFile(t, "testdata/wget-junk.warc.gz"), func(rec *Record) {
		if rec.Type != "response" {
			return
		}
		status, h, body, err := ParseHTTPResponse(rec.Content)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(body)
		if err != nil || status != 200 || h.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Errorf("status %d, Content-Type %q, %v; want 200, the page's", status, h.Get("Content-Type"), err)
		}
		pages = append(pages, string(b))
	})
	if len(pages) != 1 || !strings.HasSuffix(pages[0], "</p></body></html>") || len(pages[0]) != 1227 {
		t.Errorf("pages %.60q, want the page of 1227 bytes", pages)
	}
}
