package warc

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	brotli "github.com/molecule-man/go-brrr"
)

// ErrUnsupportedEncoding is wrapped by the error of [ParseHTTPResponse] for
// a payload whose Content-Encoding it cannot decode (br, zstd, ...).
var ErrUnsupportedEncoding = errors.New("warc: unsupported content encoding")

// ParseHTTPResponse parses the block of a response record whose
// Content-Type is "application/http; msgtype=response": the status line and
// header of the HTTP response, then its body.
//
// The body is the rest of the block, as the crawler received it; the
// payload's own Content-Length is not trusted. A chunked Transfer-Encoding
// and a gzip, x-gzip or deflate Content-Encoding are undone, in that order,
// and the header then no longer lists them (nor Content-Length), as
// net/http's Transport does; br (brotli) and zstd are decoded too. Other
// encodings give an error wrapping [ErrUnsupportedEncoding]; identity is
// no encoding. A header line that is no field is passed over. A chunked
// body that does not start with a chunk-size line was stored de-chunked
// under its original header (pywb's recorder, crau) and is read as it
// is, as warcio reads it. A header over
// [MaxHeaderSize] or a bad status line is [ErrMalformed]. The body reader
// returns the decoders' errors, e.g. for a truncated chunk.
func ParseHTTPResponse(block io.Reader) (status int, header http.Header, body io.Reader, err error) {
	br := bufio.NewReaderSize(block, 4096)
	line, err := readHTTPLine(br)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%w: http status line: %w", ErrMalformed, err)
	}
	proto, rest, _ := strings.Cut(line, " ")
	code, _, _ := strings.Cut(strings.TrimLeft(rest, " "), " ")
	if !strings.HasPrefix(proto, "HTTP/") || len(code) != 3 {
		return 0, nil, nil, fmt.Errorf("%w: bad http status line %.40q", ErrMalformed, line)
	}
	status, err = strconv.Atoi(code)
	if err != nil || status < 100 {
		return 0, nil, nil, fmt.Errorf("%w: bad http status line %.40q", ErrMalformed, line)
	}
	h := make(textproto.MIMEHeader)
	size := len(line)
	var key string
	for {
		line, err := readHTTPLine(br)
		if err != nil {
			return 0, nil, nil, fmt.Errorf("%w: http header: %w", ErrMalformed, err)
		}
		if size += len(line) + 2; size > MaxHeaderSize {
			return 0, nil, nil, fmt.Errorf("%w: http header over 1 MiB", ErrMalformed)
		}
		if line == "" {
			break
		}
		if key, err = addField(h, key, []byte(line)); err != nil {
			// A line that is no field (a status line repeated by a
			// broken server, a name without a colon) is passed over,
			// as browsers and warcio pass it over: the page came.
			key = ""
		}
	}
	header = http.Header(h)
	body = br
	if te := strings.ToLower(header.Get("Transfer-Encoding")); strings.Contains(te, "chunked") {
		if startsChunk(br) {
			body = httputil.NewChunkedReader(br)
		}
		header.Del("Transfer-Encoding")
		header.Del("Content-Length")
	}
	switch ce := strings.ToLower(strings.TrimSpace(header.Get("Content-Encoding"))); ce {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return 0, nil, nil, fmt.Errorf("%w: gzip body: %w", ErrMalformed, err)
		}
		body = zr
	case "deflate":
		// "deflate" means zlib (RFC 9110), but some servers send raw
		// deflate data: tell them apart by the zlib header.
		pb := bufio.NewReader(body)
		b, _ := pb.Peek(2)
		if len(b) == 2 && b[0]&0x0f == 8 && (uint16(b[0])<<8|uint16(b[1]))%31 == 0 {
			zr, err := zlib.NewReader(pb)
			if err != nil {
				return 0, nil, nil, fmt.Errorf("%w: deflate body: %w", ErrMalformed, err)
			}
			body = zr
		} else {
			body = flate.NewReader(pb)
		}
	case "br":
		body = brotli.NewReader(body)
	case "zstd":
		zr, err := zstd.NewReader(body, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxZstdWindow))
		if err != nil {
			return 0, nil, nil, fmt.Errorf("%w: zstd body: %w", ErrMalformed, err)
		}
		body = &zstdBody{zr}
	default:
		return 0, nil, nil, fmt.Errorf("%w %q", ErrUnsupportedEncoding, ce)
	}
	if body != io.Reader(br) {
		header.Del("Content-Encoding")
		header.Del("Content-Length")
	}
	return status, header, body, nil
}

// startsChunk reports whether the body br starts with a chunk-size line:
// hex digits, perhaps extensions after ";", then a line end. An empty
// body does not.
func startsChunk(br *bufio.Reader) bool {
	b, _ := br.Peek(256)
	line, _, ok := bytes.Cut(b, []byte("\n"))
	if !ok {
		return false
	}
	size, _, _ := bytes.Cut(bytes.TrimSuffix(line, []byte("\r")), []byte(";"))
	size = bytes.TrimRight(size, " \t")
	if len(size) == 0 || len(size) > 16 {
		return false
	}
	for _, c := range size {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// maxZstdWindow bounds the memory a zstd body's window may ask for.
const maxZstdWindow = 8 << 20

// zstdBody reads a zstd decoder and releases it at the end of the body or
// on an error, so that a body read to its end leaves no goroutine behind.
type zstdBody struct{ d *zstd.Decoder }

func (z *zstdBody) Read(p []byte) (int, error) {
	if z.d == nil {
		return 0, io.EOF
	}
	n, err := z.d.Read(p)
	if err != nil {
		z.d.Close()
		z.d = nil
	}
	return n, err
}

// readHTTPLine reads one header line without its line ending.
func readHTTPLine(br *bufio.Reader) (string, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > maxLine {
			return "", errLineTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(line) > 0 {
			break // the block may end without a final newline
		}
		if err != nil {
			return "", err
		}
		break
	}
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	return string(line), nil
}
