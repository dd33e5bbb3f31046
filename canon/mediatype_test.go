package canon

import (
	"encoding/json"
	"errors"
	"mime"
	"os"
	"strings"
	"testing"

	"golang.org/x/net/html/charset"
)

// headerCharsetOwn are the web-platform-tests' cases where headerCharset
// reads another charset than the standard: a space before "=" is trimmed
// from the name, as mime.ParseMediaType trimmed it, and a parameter is
// not checked for code points outside HTTP's quoted-string (U+007F) nor
// counted when its quoted value is empty.
var headerCharsetOwn = map[string]bool{
	"text/html;charset =gbk":                             true,
	"text/html;charset= \"\x7f;charset=GBK":              true,
	"text/html;charset=\"\x7f;charset=foo\";charset=GBK": true,
	"text/html;charset=\"\";charset=GBK":                 true,
}

// TestMediaTypeWHATWG runs the web-platform-tests' MIME type parsing
// cases (testdata/whatwg/mime-types.json, see testdata/README.md): the
// essence of each serialized output, "" for a failure, and for the cases
// a browser navigates to, the encoding their charset names (headerCharset,
// which shares the essence's reading), but for headerCharsetOwn.
func TestMediaTypeWHATWG(t *testing.T) {
	b, err := os.ReadFile("testdata/whatwg/mime-types.json")
	if err != nil {
		t.Fatal(err)
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		var c struct {
			Input    string
			Output   *string
			Encoding *string
		}
		if json.Unmarshal(e, &c) != nil {
			continue // a section title
		}
		n++
		want := ""
		if c.Output != nil {
			want, _, _ = strings.Cut(*c.Output, ";")
		}
		if got := MediaType(c.Input); got != want {
			t.Errorf("MediaType(%q) = %q, want %q", c.Input, got, want)
		}
		if c.Output == nil || !strings.HasPrefix(want, "text/html") || headerCharsetOwn[c.Input] {
			continue
		}
		wantEnc := ""
		if c.Encoding != nil {
			wantEnc = strings.ToLower(*c.Encoding)
		}
		_, gotEnc := charset.Lookup(headerCharset(c.Input))
		if gotEnc != wantEnc {
			t.Errorf("headerCharset(%q) names %q, want %q", c.Input, gotEnc, wantEnc)
		}
	}
	if n < 50 {
		t.Errorf("read %d cases from mime-types.json, want its 57", n)
	}
}

// TestMediaTypeCodePoints is the web-platform-tests' generated cases for
// the essence (generated-mime-types.py): each byte in the type or the
// subtype fails unless it is an HTTP token code point.
func TestMediaTypeCodePoints(t *testing.T) {
	const token = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	for c := 0; c < 256; c++ {
		s := string([]byte{byte(c)})
		valid := strings.Contains(token, s)
		for _, ct := range []string{s + "/x", "x/" + s, "x/x" + s + ";y=z"} {
			want := ""
			if valid {
				want = strings.ToLower(strings.TrimSuffix(ct, ";y=z"))
			}
			if ct == "x/x"+s+";y=z" && (c == ';' || strings.Contains(httpSpace, s)) {
				want = "x/x" // an empty parameter; white space after the subtype
			}
			if got := MediaType(ct); got != want {
				t.Errorf("MediaType(%q) = %q, want %q", ct, got, want)
			}
		}
	}
}

// TestMediaTypeSpellings reads Content-Type values as real servers and
// crawlers write them: python3 -m http.server (3.11), net/http, wget's and
// pywb's WARC records (warc/testdata, corpus/testdata), and the spellings
// that mime.ParseMediaType refuses which docs/reliability-proxy.md
// records from real pages.
func TestMediaTypeSpellings(t *testing.T) {
	tests := []struct{ ct, want string }{
		// python3 -m http.server
		{"text/plain", "text/plain"},
		{"text/html; charset=utf-8", "text/html"}, // its directory listing
		{"application/octet-stream", "application/octet-stream"},
		{"image/svg+xml", "image/svg+xml"},
		{"application/gzip", "application/gzip"},
		// net/http's sniffed types
		{"text/plain; charset=utf-8", "text/plain"},
		// WARC records: wget, pywb, the WARC 1.1 specification
		{"application/http;msgtype=response", "application/http"},
		{"application/http; msgtype=response", "application/http"},
		{"application/warc-fields", "application/warc-fields"},
		{"message/http", "message/http"},
		{"text/html;charset=utf-8", "text/html"},
		{"text/plain; charset=windows-1251", "text/plain"},
		// Servers' variations
		{"TEXT/HTML; Charset=ISO-8859-1", "text/html"},
		{"text/html; charset=\"utf-8\"", "text/html"},
		{"application/xhtml+xml; charset=utf-8", "application/xhtml+xml"},
		{"  text/html  ;charset=utf-8", "text/html"},
		{"text/html\t", "text/html"},
		// mime.ParseMediaType refuses these; browsers read the essence.
		{"text/plain;charset=Shift_JIS;foo", "text/plain"},
		{"text/html;; charset=Shift_JIS", "text/html"},
		{"text/html; charset=Shift_JIS; charset=utf-8", "text/html"},
		{"application/http;msgtype=response;;", "application/http"},
		{"text/html; charset=\"utf-8", "text/html"},
		// No essence: browsers sniff these.
		{"", ""},
		{"text", ""}, // mime.ParseMediaType: "text"
		{"text/", ""},
		{"text/html, text/html", ""},
		{"text /html", ""},
		{"text/ html", ""},
		{"\vtext/html", ""}, // mime.ParseMediaType: "text/html"
		{"text/html garbage", ""},
	}
	for _, tt := range tests {
		if got := MediaType(tt.ct); got != tt.want {
			t.Errorf("MediaType(%q) = %q, want %q", tt.ct, got, tt.want)
		}
	}
}

// FuzzMediaType checks MediaType against mime.ParseMediaType: wherever
// that reads a type/subtype (with or without complaint about the
// parameters), the essence is the same, but for the white space that
// only mime.ParseMediaType trims (Unicode's, besides HTTP's), the
// letters only its Unicode lower-casing makes ASCII (U+212A KELVIN
// SIGN), and "{" and "}", tokens in MIME (RFC 2045) but not in HTTP
// (RFC 9110). MediaType is idempotent.
func FuzzMediaType(f *testing.F) {
	for _, s := range []string{"text/html; charset=utf-8", "text/plain;charset=Shift_JIS;foo", "text", "\vtext/html", "a/b;c=d;c=e", "TEXT/\u212a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		got := MediaType(ct)
		if got != "" && MediaType(got) != got {
			t.Errorf("MediaType(%q) = %q, MediaType of that %q", ct, got, MediaType(got))
		}
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) || !strings.Contains(mt, "/") {
			return
		}
		base, _, _ := strings.Cut(ct, ";")
		if strings.TrimSpace(base) != strings.Trim(base, httpSpace) || strings.ContainsFunc(base, func(r rune) bool { return r >= 0x80 || r == '{' || r == '}' }) {
			return
		}
		if got != mt {
			t.Errorf("MediaType(%q) = %q, mime.ParseMediaType: %q", ct, got, mt)
		}
	})
}
