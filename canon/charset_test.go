package canon

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestCharset decodes real pages in legacy encodings, declared in the HTTP
// header, in a <meta> tag, or nowhere. The windows-1251 and Shift_JIS pages
// are real UTF-8 pages re-encoded (see testdata/README.md).
func TestCharset(t *testing.T) {
	tests := []struct {
		file, contentType string
		wantCharset       string
		want              string // a canonical phrase of the page
	}{
		{"pages/automobilwoche.de-VW-Betriebsversammlung.html", "", "windows-1252", "betriebsversammlung"},
		{"pages/automobilwoche.de-VW-Betriebsversammlung.html", "text/html; charset=ISO-8859-1", "windows-1252", "betriebsversammlung"},
		{"pages/nmb-media.de.ebay.html", "", "windows-1252", "für"},            // declared nowhere
		{"pages/nmb-media.de.ebay.html", "text/html", "windows-1252", "für"},   // header without charset
		{"pages/rp.pl.unijne-fundusze.html", "", "windows-1250", "zagłosował"}, // meta
		{"pages/archive.org.he.xinhuanet.com.25340717.html", "", "gbk", "话剧"},  // meta after 1024 bytes
		{"pages/archive.org.he.xinhuanet.com.25340717.html", "text/html; charset=GB2312", "gbk", "约定无期限"},
		{"charset/football.ua.podolski.windows-1251.html", "", "windows-1251", "подольски"},
		{"charset/football.ua.podolski.windows-1251-nometa.html", "text/html; charset=windows-1251", "windows-1251", "подольски"},
		{"charset/football.ua.podolski.windows-1251-nometa.html", "", "windows-1252", "ïîäîëüñêè"}, // undeclared: WHATWG default
		{"charset/nhk.or.jp.k100.shift_jis.html", "", "shift_jis", "体罰を禁止する法律"},
		{"charset/nhk.or.jp.k100.shift_jis-nometa.html", "text/html; charset=Shift_JIS", "shift_jis", "体罰を禁止する法律"},
		{"pages/nhk.or.jp.k100.html", "", "utf-8", "体罰を禁止する法律"},
		{"pages/football.ua.podolski.html", "text/html; charset=utf-8", "utf-8", "подольски"},
		// W3C charset tests (from golang.org/x/net/html/charset/testdata).
		{"charset/HTTP-charset.html", "text/html; charset=iso-8859-15", "iso-8859-15", "the character encoding of a page can be set using the http header charset declaration"},
		{"charset/HTTP-vs-UTF-8-BOM.html", "text/html; charset=iso-8859-15", "utf-8", "ýäè"},
		{"charset/HTTP-vs-meta-charset.html", "text/html; charset=iso-8859-15", "iso-8859-15", "the http header has a higher precedence"},
		{"charset/meta-charset-attribute.html", "", "iso-8859-15", "which declares the encoding to be iso 8859 15"},
		{"charset/meta-content-attribute.html", "", "iso-8859-15", "which declares the encoding to be iso 8859 15"},
		{"charset/No-encoding-declaration.html", "", "utf-8", "ýäè"},
		{"charset/UTF-16LE-BOM.html", "", "utf-16le", "utf 16le bom"},
		{"charset/UTF-16BE-BOM.html", "", "utf-16be", "utf 16be bom"},
		{"charset/UTF-8-BOM-vs-meta-charset.html", "", "utf-8", "ýäè"},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.contentType, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			d, err := HTML(b, tt.contentType, Options{})
			if err != nil {
				t.Fatalf("HTML(%s, %q) error: %v", tt.file, tt.contentType, err)
			}
			if d.Charset != tt.wantCharset {
				t.Errorf("HTML(%s, %q).Charset = %q, want %q", tt.file, tt.contentType, d.Charset, tt.wantCharset)
			}
			if !strings.Contains(d.Text, tt.want) {
				t.Errorf("HTML(%s, %q).Text lacks %q; starts %q", tt.file, tt.contentType, tt.want, d.Text[:min(len(d.Text), 300)])
			}
		})
	}
}

// TestCharsetSameText checks that a page decodes to the same text in its
// original and its re-encoded form.
func TestCharsetSameText(t *testing.T) {
	tests := []struct{ orig, enc, contentType string }{
		{"pages/nhk.or.jp.k100.html", "charset/nhk.or.jp.k100.shift_jis.html", ""},
		{"pages/nhk.or.jp.k100.html", "charset/nhk.or.jp.k100.shift_jis-nometa.html", "text/html;charset=shift_jis"},
		{"pages/football.ua.podolski.html", "charset/football.ua.podolski.windows-1251.html", ""},
	}
	for _, tt := range tests {
		t.Run(tt.enc, func(t *testing.T) {
			a, err := os.ReadFile("testdata/" + tt.orig)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile("testdata/" + tt.enc)
			if err != nil {
				t.Fatal(err)
			}
			da, _ := HTML(a, "", Options{})
			db, _ := HTML(b, tt.contentType, Options{})
			if len(da.Tokens) == 0 || da.Text != db.Text {
				t.Errorf("HTML(%s).Text != HTML(%s).Text (%d vs %d bytes)", tt.orig, tt.enc, len(da.Text), len(db.Text))
			}
		})
	}
}

// TestTextIgnoresMeta: plain text is UTF-16 by byte order mark, else UTF-8
// when valid, else windows-1252; a <meta charset> written in the text is
// words, not a declaration.
func TestTextIgnoresMeta(t *testing.T) {
	for _, c := range []struct {
		in, charset string
	}{
		{`<meta charset="shift_jis"> caf` + "\u00e9", "utf-8"},
		{"\xef\xbb\xbfplain caf\u00e9", "utf-8"},
		{"caf\xe9 <meta charset=utf-8>", "windows-1252"},
		{"\xff\xfeh\x00i\x00", "utf-16le"},
		{"\xfe\xff\x00h\x00i", "utf-16be"},
	} {
		d, err := Text([]byte(c.in), Options{})
		if err != nil {
			t.Fatalf("Text(%q): %v", c.in, err)
		}
		if d.Charset != c.charset {
			t.Errorf("Text(%q).Charset = %q, want %q", c.in, d.Charset, c.charset)
		}
	}
}

// TestTextTypeCharset: a text's charset parameter decides its encoding,
// unless a byte order mark does; one that says UTF-8 leaves the sniffing
// as it was.
func TestTextTypeCharset(t *testing.T) {
	for _, c := range []struct {
		in, contentType, charset, text string
	}{
		{"\xd1\xfa\xe5\xf8\xfc", "text/plain; charset=windows-1251", "windows-1251", "съешь\n"},
		{"\x93\xfa\x96\x7b", "text/plain;charset=Shift_JIS", "shift_jis", "日本\n"},
		{"\xef\xbb\xbfcaf\u00e9", "text/plain; charset=windows-1251", "utf-8", "café\n"},
		{"caf\xe9", "text/plain; charset=utf-8", "windows-1252", "café\n"},
		{"caf\xe9", "text/plain; charset=no-such", "windows-1252", "café\n"},
	} {
		d, err := TextType([]byte(c.in), c.contentType, Options{})
		if err != nil {
			t.Fatalf("TextType(%q, %q): %v", c.in, c.contentType, err)
		}
		if d.Charset != c.charset || d.Text != c.text {
			t.Errorf("TextType(%q, %q) = %q in %s, want %q in %s", c.in, c.contentType, d.Text, d.Charset, c.text, c.charset)
		}
	}
}

// TestCharsetDeclarationSpellings declares the real Shift_JIS page's
// charset in spellings that Go's mime.ParseMediaType rejects but the
// standards read: a Content-Type parameter list with an empty or a
// valueless parameter (Fetch's MIME type parser skips them), and a
// <meta http-equiv> content that is not a MIME type at all (HTML's
// "extracting a character encoding from a meta element" looks for
// "charset=" anywhere in it). Both spellings that the standards refuse
// stay refused: the page is then undeclared (windows-1252, as a browser
// without a detector shows it).
func TestCharsetDeclarationSpellings(t *testing.T) {
	page, err := os.ReadFile("testdata/charset/nhk.or.jp.k100.shift_jis-nometa.html")
	if err != nil {
		t.Fatal(err)
	}
	const phrase = "体罰を禁止する法律"
	tests := []struct {
		contentType, meta string
		want              string
	}{
		{"text/html;charset=Shift_JIS;foo", "", "shift_jis"},
		{"text/html;; charset=Shift_JIS", "", "shift_jis"},
		{"text/html; foo; charset=Shift_JIS", "", "shift_jis"},
		{`text/html; charset="Shift_JIS"; foo="a;b"`, "", "shift_jis"},
		{"text/html; charset=Shift_JIS; charset=utf-8", "", "shift_jis"}, // the first wins
		{"text/html; charset = Shift_JIS", "", "shift_jis"},
		{"text/html; charset='Shift_JIS'", "", "windows-1252"}, // quotes are HTTP's double ones only
		{"text/html charset=Shift_JIS", "", "windows-1252"},    // no MIME type
		{"", `<meta http-equiv="Content-Type" content="text/html, charset=Shift_JIS">`, "shift_jis"},
		{"", `<meta http-equiv="Content-Type" content="charset=Shift_JIS">`, "shift_jis"},
		{"", `<meta http-equiv="Content-Type" content="text/html;charset='Shift_JIS'">`, "shift_jis"},
		{"", `<meta http-equiv="Content-Type" content="text/html charset=Shift_JIS">`, "shift_jis"},
		{"", `<meta http-equiv="Content-Type" content="text/html; charset = Shift_JIS;">`, "shift_jis"},
		{"", `<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS; charset=Shift_JIS">`, "shift_jis"},
		{"", `<meta http-equiv="Content-Type" content="text/html; charset='Shift_JIS">`, "windows-1252"}, // unmatched quote
		{"", `<meta content="text/html; charset=Shift_JIS">`, "windows-1252"},                            // no http-equiv
	}
	for _, tt := range tests {
		t.Run(tt.contentType+tt.meta, func(t *testing.T) {
			head := bytes.Index(page, []byte("<head"))
			head += bytes.IndexByte(page[head:], '>') + 1
			b := append(append(append([]byte{}, page[:head]...), tt.meta...), page[head:]...)
			d, err := HTML(b, tt.contentType, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Charset != tt.want || (tt.want == "shift_jis") != strings.Contains(d.Text, phrase) {
				t.Errorf("HTML(meta %q, %q).Charset = %q, want %q", tt.meta, tt.contentType, d.Charset, tt.want)
			}
			if h := ParseHead(b, tt.contentType, ""); h.Title != d.Title {
				t.Errorf("ParseHead(meta %q, %q).Title = %q, want HTML's %q", tt.meta, tt.contentType, h.Title, d.Title)
			}
		})
	}
	for _, ct := range []string{"text/plain;charset=Shift_JIS;foo", "text/plain;; charset=Shift_JIS"} {
		if d, _ := TextType([]byte("\x93\xfa\x96\x7b"), ct, Options{}); d.Charset != "shift_jis" {
			t.Errorf("TextType(%q).Charset = %q, want shift_jis", ct, d.Charset)
		}
	}
}
