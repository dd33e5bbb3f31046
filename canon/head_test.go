package canon

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/unicode"
)

// TestHeadPages checks the heads of saved real pages (testdata/README.md)
// against the values their markup declares, found by hand.
func TestHeadPages(t *testing.T) {
	tests := []struct {
		file, contentType string
		want              Head
	}{
		{"pages/anglerboard.de-rute.html", "", Head{
			Title:     "Raubfisch-Rute im Test: die Iaconelli Spinning Rod | Anglerboard – Forum mit den besten Tipps zum Angeln",
			Canonical: "https://www.anglerboard.de/ams/raubfisch-rute-im-test-die-iaconelli-spinning-rod.434/",
		}},
		{"pages/bbc.com.52241221.html", "", Head{ // robots "NOODP,NOYDIR": neither flag
			Title:     "Coronavirus: New York ramps up mass burials amid outbreak - BBC News",
			Canonical: "https://www.bbc.com/news/world-us-canada-52241221",
		}},
		{"pages/emacspeak.blogspot.com.meta.html", "", Head{ // href before rel, single quotes
			Title:     "EMACSPEAK The Complete Audio Desktop: Meta-Programming In Emacs Using Defadvice",
			Canonical: "https://emacspeak.blogspot.com/2019/10/meta-programming-in-emacs-using.html",
		}},
		{"pages/github.com.yapapi.html", "", Head{ // canonical at byte 35,337
			Title:     "GitHub - golemfactory/yapapi: Python high-level API for Golem.",
			Canonical: "https://github.com/golemfactory/yapapi",
		}},
		// <base href="https://shop.nmb-media.de/"> after the canonical
		// link, robots "index, follow", windows-1252 declared nowhere.
		{"pages/nmb-media.de.ebay.html", "", Head{
			Title:     ".:: NMB-MEDIA ::. eBay-Templates, JTL-Wawi / Eazyauction Designvorlagen",
			Canonical: "https://shop.nmb-media.de/eBay-Template-Datenschutz-Google-Fonts-Fontawesome",
		}},
		// The canonical link at byte 137,258 of a 140 KB head, past 130 KB
		// of inline scripts.
		{"pages/reddit.com.init.html", "", Head{
			Title:     "What's your opinion on what to include in __init__.py ? : Python",
			Canonical: "https://www.reddit.com/r/Python/comments/1bbbwk/whats_your_opinion_on_what_to_include_in_init_py/",
		}},
		{"pages/rp.pl.unijne-fundusze.html", "", Head{ // windows-1250 (meta)
			Title:     `Unijne fundusze coraz bliżej. Sejm zagłosował "za" - Polityka - rp.pl`,
			Canonical: "https://www.rp.pl/Polityka/305049888-Unijne-fundusze-coraz-blizej-Sejm-zaglosowal-za.html",
		}},
		{"pages/wiki.python.org.Download.html", "", Head{ // robots "index,nofollow", no canonical
			Title:    "BeginnersGuide/Download - Python Wiki",
			NoFollow: true,
		}},
		{"pages/football.ua.podolski.html", "", Head{Title: "Подольски завершил карьеру в сборной — football.ua"}},
		{"charset/football.ua.podolski.windows-1251.html", "", Head{Title: "Подольски завершил карьеру в сборной — football.ua"}},
		{"charset/football.ua.podolski.windows-1251-nometa.html", "text/html; charset=windows-1251", Head{Title: "Подольски завершил карьеру в сборной — football.ua"}},
		// The page's byte order mark, not encodable in Shift_JIS, became
		// a SUB byte before the doctype: dropped, as bytes before the
		// first tag are.
		{"charset/nhk.or.jp.k100.shift_jis.html", "", Head{
			Title:     "NEWS WEB EASY|子どもへの体罰を禁止する法律ができる",
			Canonical: "https://www3.nhk.or.jp/news/easy/k10011959621000/k10011959621000.html",
		}},
		{"charset/nhk.or.jp.k100.shift_jis-nometa.html", "text/html; charset=Shift_JIS", Head{
			Title:     "NEWS WEB EASY|子どもへの体罰を禁止する法律ができる",
			Canonical: "https://www3.nhk.or.jp/news/easy/k10011959621000/k10011959621000.html",
		}},
		{"pages/nhk.or.jp.k100.html", "", Head{ // UTF-8 byte order mark
			Title:     "NEWS WEB EASY|子どもへの体罰を禁止する法律ができる",
			Canonical: "https://www3.nhk.or.jp/news/easy/k10011959621000/k10011959621000.html",
		}},
		{"charset/UTF-16LE-BOM.html", "", Head{Title: "UTF-16LE BOM"}},
		{"charset/UTF-16BE-BOM.html", "", Head{Title: "UTF-16BE BOM"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if got := ParseHead(b, tt.contentType, ""); got != tt.want {
				t.Errorf("ParseHead = %+v\nwant %+v", got, tt.want)
			}
			_, got, err := HTMLHead(b, tt.contentType, "", Options{})
			if err != nil || got != tt.want {
				t.Errorf("HTMLHead = %+v, %v\nwant %+v", got, err, tt.want)
			}
		})
	}
}

// TestHeadAllPages checks that HTMLHead and ParseHead agree on every saved
// page and that HTMLHead's Document is HTML's.
func TestHeadAllPages(t *testing.T) {
	for _, p := range pages(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d, h, err := HTMLHead(b, "", "https://example.org/x/", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if ph := ParseHead(b, "", "https://example.org/x/"); ph != h {
			t.Errorf("%s: ParseHead %+v, HTMLHead %+v", p, ph, h)
		}
		if d2, _ := HTML(b, "", Options{}); d.Text != d2.Text || d.Title != d2.Title {
			t.Errorf("%s: HTMLHead's Document differs from HTML's", p)
		}
		if h.Title == "" {
			t.Errorf("%s: no title", p)
		}
	}
}

func TestHeadURLs(t *testing.T) {
	const page = "https://example.com/a/b.html?q=1"
	tests := []struct {
		name, html, page string
		want             string // Canonical
	}{
		{"absolute", `<link rel=canonical href="HTTPS://Example.COM:443/x/?utm_source=a&b=2&a=1#top">`, "", "https://example.com/x/?a=1&b=2"},
		{"relative", `<link rel=canonical href="../c/d?b=2&a=1">`, page, "https://example.com/c/d?a=1&b=2"},
		{"relative without page URL", `<link rel=canonical href="../c/d">`, "", ""},
		{"root relative", `<link rel="canonical" href="/root">`, page, "https://example.com/root"},
		{"protocol relative", `<link rel=canonical href="//Other.Example/p">`, page, "https://other.example/p"},
		{"protocol relative on http", `<link rel=canonical href="//other.example/p">`, "http://example.com/", "http://other.example/p"},
		{"protocol relative without page URL", `<link rel=canonical href="//other.example/p">`, "", ""},
		{"base relative", `<base href="/dir/"><link rel=canonical href="p">`, page, "https://example.com/dir/p"},
		{"base absolute without page URL", `<base href="https://cdn.example/s/"><link rel=canonical href="../p">`, "", "https://cdn.example/p"},
		{"base after the link", `<link rel=canonical href="p"><base href="https://cdn.example/s/">`, page, "https://cdn.example/s/p"},
		{"first base counts", `<base href="https://one.example/"><base href="https://two.example/"><link rel=canonical href="p">`, "", "https://one.example/p"},
		{"javascript base ignored", `<base href="javascript:alert(1)"><link rel=canonical href="p">`, page, "https://example.com/a/p"},
		{"javascript", `<link rel=canonical href="javascript:alert(1)">`, page, ""},
		{"javascript mixed case", `<link rel=canonical href=" JavaScript:alert(1)">`, page, ""},
		{"javascript with newline", "<link rel=canonical href=\"java\nscript:alert(1)\">", page, ""},
		{"data", `<link rel=canonical href="data:text/html,<p>x</p>">`, page, ""},
		{"mailto", `<link rel=canonical href="mailto:a@example.com">`, page, ""},
		{"ftp", `<link rel=canonical href="ftp://example.com/f">`, page, ""},
		{"empty href", `<link rel=canonical href="">`, page, ""},
		{"bad host", `<link rel=canonical href="https://exa mple.com/">`, page, ""},
		{"spaces and tabs", "<link rel=canonical href=\" \t/x\ty \n\">", page, "https://example.com/xy"},
		{"rel case and list", `<link rel="Alternate CANONICAL" href="/c">`, page, "https://example.com/c"},
		{"rel substring is no token", `<link rel="canonicalx" href="/c">`, page, ""},
		{"invalid one ignored", `<link rel=canonical href="javascript:x"><link rel=canonical href="/c">`, page, "https://example.com/c"},
		{"same twice", `<link rel=canonical href="/c"><link rel=canonical href="https://example.com/c#x">`, page, "https://example.com/c"},
		{"conflicting", `<link rel=canonical href="/c"><link rel=canonical href="/d">`, page, ""},
		{"in body", `</head><body><link rel=canonical href="/c">`, page, ""},
		{"after text opened the body", `<p>text</p><link rel=canonical href="/c">`, page, ""},
		{"in a comment", `<!-- <link rel=canonical href="/c"> -->`, page, ""},
		{"in noscript", `<noscript><link rel=canonical href="/c"></noscript>`, page, ""},
		{"in template", `<template><link rel=canonical href="/c"></template>`, page, ""},
		{"after a script writing <body>", `<script>document.write("<body>")</script><link rel=canonical href="/c">`, page, "https://example.com/c"},
		{"after a style", `<style>a::after{content:"</head>"}</style><link rel=canonical href="/c">`, page, "https://example.com/c"},
		{"after a meta holding <body>", `<meta name="description" content="<body> and </head>"><link rel=canonical href="/c">`, page, "https://example.com/c"},
		{"after a link holding >", `<link rel=stylesheet href='a>b' title=x><link rel=canonical href="/c">`, page, "https://example.com/c"},
		{"after unquoted values", `<meta name=x content=a"b><link rel=canonical href="/c">`, page, "https://example.com/c"},
		{"canonical among other rels", `<link rel=preload href=/x><link href="/c" rel=canonical><link rel=icon href=/i>`, page, "https://example.com/c"},
		{"after an inline svg", `<svg><path d="M0"/></svg><link rel=canonical href="/c">`, page, ""},
		{"after a div", `<div>x</div><link rel=canonical href="/c">`, page, ""},
		{"after a template", `<template><div>x</div></template><link rel=canonical href="/c">`, page, "https://example.com/c"},
		{"after an empty comment", `<!--><link rel=canonical href="/c">`, page, "https://example.com/c"},
		{"junk before the first tag", "\ufeff\ufeffjunk <html><head><link rel=canonical href=\"/c\">", page, "https://example.com/c"},
		{"bad page URL", `<link rel=canonical href="/c">`, "not a url", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "<!doctype html><html><head>" + tt.html + "</head><body><p>text</p></body></html>"
			if strings.Contains(tt.html, "<html>") || strings.Contains(tt.html, "</head>") {
				doc = tt.html
			}
			if got := ParseHead([]byte(doc), "", tt.page).Canonical; got != tt.want {
				t.Errorf("Canonical = %q, want %q", got, tt.want)
			}
			if _, h, _ := HTMLHead([]byte(doc), "", tt.page, Options{}); h.Canonical != tt.want {
				t.Errorf("HTMLHead Canonical = %q, want %q", h.Canonical, tt.want)
			}
		})
	}
}

func TestHeadMeta(t *testing.T) {
	const page = "https://example.com/a/b.html"
	tests := []struct {
		name, html string
		want       Head
	}{
		{"title", "<title>  A &amp;\n\t B  </title>", Head{Title: "A & B"}},
		{"first title", "<title>one</title><title>two</title>", Head{Title: "one"}},
		{"title with markup", "<title><script>x</script></title>", Head{Title: "<script>x</script>"}},
		{"robots", `<meta name="robots" content="NOINDEX, NoFollow">`, Head{NoIndex: true, NoFollow: true}},
		{"robots none", `<meta name=ROBOTS content=none>`, Head{NoIndex: true, NoFollow: true}},
		{"robots spaces", `<meta name="robots" content=" noindex max-snippet:-1">`, Head{NoIndex: true}},
		{"robots index", `<meta name="robots" content="index, follow">`, Head{}},
		{"robots two tags", `<meta name="robots" content="noindex"><meta name="robots" content="nofollow">`, Head{NoIndex: true, NoFollow: true}},
		{"googlebot not robots", `<meta name="googlebot" content="noindex">`, Head{}},
		{"refresh", `<meta http-equiv="refresh" content="5; url=https://Example.com/next?utm_source=x">`, Head{Refresh: "https://example.com/next", RefreshDelay: 5 * time.Second}},
		{"refresh relative quoted", `<meta http-equiv="Refresh" content="0;URL='../x y'">`, Head{Refresh: "https://example.com/x%20y"}},
		{"refresh fraction and comma", `<meta http-equiv="refresh" content="1.5, /y">`, Head{Refresh: "https://example.com/y", RefreshDelay: time.Second}},
		{"refresh reload", `<meta http-equiv="refresh" content="30">`, Head{}},
		{"refresh invalid", `<meta http-equiv="refresh" content="soon; url=/z">`, Head{}},
		{"refresh javascript", `<meta http-equiv="refresh" content="0; url=javascript:alert(1)">`, Head{}},
		{"refresh first with a target", `<meta http-equiv="refresh" content="30"><meta http-equiv="refresh" content="2;url=/a"><meta http-equiv="refresh" content="0;url=/b">`,
			Head{Refresh: "https://example.com/a", RefreshDelay: 2 * time.Second}},
		{"refresh in noscript", `<noscript><meta http-equiv="refresh" content="0; url=/nojs"></noscript>`, Head{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "<html><head>" + tt.html + "</head><body><title>body title</title></body></html>"
			if got := ParseHead([]byte(doc), "", page); got != tt.want {
				t.Errorf("ParseHead = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseRefresh(t *testing.T) {
	tests := []struct {
		content string
		delay   time.Duration
		target  string
		ok      bool
	}{
		{"5; url=https://a/", 5 * time.Second, "https://a/", true},
		{"  0 ; URL = \"/q\" trailing", 0, "/q", true},
		{"0;url='/q", 0, "/q", true},
		{"3", 3 * time.Second, "", true},
		{"3;", 3 * time.Second, "", true},
		{".5; /x", 0, "/x", true},
		{"2 /x", 2 * time.Second, "/x", true},
		{"2/x", 0, "", false},
		{"", 0, "", false},
		{"url=/x", 0, "", false},
		{"1; ur=/x", time.Second, "ur=/x", true},
		{"1; url /x", time.Second, "url /x", true},
		{"99999999999999999999999; url=/x", time.Duration(1<<63-1) / time.Second * time.Second, "/x", true},
	}
	for _, tt := range tests {
		d, target, ok := parseRefresh(tt.content)
		if d != tt.delay || target != tt.target || ok != tt.ok {
			t.Errorf("parseRefresh(%q) = %v, %q, %v; want %v, %q, %v", tt.content, d, target, ok, tt.delay, tt.target, tt.ok)
		}
	}
}

func TestHeadHostile(t *testing.T) {
	const page = "https://example.com/"
	big := func(prefix, fill, suffix string) []byte {
		var b bytes.Buffer
		b.WriteString(prefix)
		for b.Len() < 10<<20 {
			b.WriteString(fill)
		}
		b.WriteString(suffix)
		return b.Bytes()
	}
	tests := []struct {
		name string
		b    []byte
		want Head
	}{
		{"nil", nil, Head{}},
		{"empty", []byte{}, Head{}},
		{"no tags", []byte("just some text, no markup"), Head{}},
		{"no head", []byte("<p>a paragraph</p><p>another</p>"), Head{}},
		{"lone <", []byte("<"), Head{}},
		{"unterminated comment", []byte("<html><head><title>t</title><!-- <link rel=canonical href=/c>"), Head{Title: "t"}},
		{"unterminated script", []byte("<html><head><title>t</title><script>var a = '<link rel=canonical href=/c>'"), Head{Title: "t"}},
		{"unterminated title", []byte("<html><head><title>t <link rel=canonical href=/c>"), Head{Title: "t <link rel=canonical href=/c>"}},
		{"unterminated meta", []byte(`<html><head><title>t</title><meta name="robots" content="noindex`), Head{Title: "t"}},
		{"unterminated tag", []byte(`<html><head><title>t</title><link rel=canonical href="/c`), Head{Title: "t"}},
		// 10 MB heads without </head>: only the first 256 KiB are
		// scanned, so what lies beyond is not seen.
		{"10 MB of meta tags", big("<html><head><title>t</title>", `<meta name="x" content="y">`, `<link rel=canonical href="/c">`), Head{Title: "t"}},
		{"10 MB script", big("<html><head><title>t</title><script>", "var x = 1 < 2;\n", `</script><link rel=canonical href="/c">`), Head{Title: "t"}},
		{"10 MB comment", big("<html><head><title>t</title><!--", "-- - > <body>", `--><link rel=canonical href="/c">`), Head{Title: "t"}},
		{"10 MB title", big("<html><head><title>", "word ", `</title><link rel=canonical href="/c">`),
			Head{Title: strings.Join(strings.Fields(strings.Repeat("word ", headKeep/5)[:headKeep-len("<html><head><title>")]), " ")}},
		{"10 MB of text", big("", "lorem ipsum ", `<link rel=canonical href="/c">`), Head{}},
		{"canonical within the bounds", big(`<html><head><title>t</title><link rel=canonical href="/c">`, `<meta name="x" content="y">`, ""), Head{Title: "t", Canonical: "https://example.com/c"}},
		// A NUL is text, which opens the body before the head's elements.
		{"NUL bytes", []byte("<html>\x00<head><title>t</title><link rel=canonical href=\"/c\">"), Head{}},
		{"NUL in a title", []byte("<html><head><title>a\x00b</title>"), Head{Title: "a\uFFFDb"}},
		{"invalid UTF-8", []byte("<html><head><title>caf\xe9 \xff</title>"), Head{Title: "café ÿ"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseHead(tt.b, "", page); got != tt.want {
				t.Errorf("ParseHead = %.300v\nwant %.300v", got, tt.want)
			}
			if _, h, err := HTMLHead(tt.b, "", page, Options{}); err == nil && h.Canonical != tt.want.Canonical {
				t.Errorf("HTMLHead Canonical = %q, want %q", h.Canonical, tt.want.Canonical)
			}
		})
	}
	// Garbage bytes: never a panic, whatever comes out.
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, r.IntN(4096))
		for i := range b {
			b[i] = byte(r.IntN(256))
			if r.IntN(8) == 0 {
				const markup = "<>/!-\"'= \nheadbodyscripttitlelinkmeta"
				b[i] = markup[r.IntN(len(markup))]
			}
		}
		ParseHead(b, "", page)
		ParseHead(b, "text/html; charset=utf-16le", page)
		HTMLHead(b, "", page, Options{})
	}
}

// TestHeadUTF16 decodes a UTF-16 head declared by the Content-Type header
// alone (no byte order mark): its markup is found after decoding.
func TestHeadUTF16(t *testing.T) {
	src := `<html><head><title>Grüße</title><link rel=canonical href="/ü"></head><body>x</body></html>`
	b, err := unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewEncoder().Bytes([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := Head{Title: "Grüße", Canonical: "https://example.com/%C3%BC"}
	if got := ParseHead(b, "text/html; charset=utf-16le", "https://example.com/"); got != want {
		t.Errorf("ParseHead = %+v, want %+v", got, want)
	}
}

func FuzzParseHead(f *testing.F) {
	for _, s := range []string{
		"<html><head><title>t</title><link rel=canonical href=/c><base href=//x/><meta http-equiv=refresh content=\"1;url=/r\"></head>",
		"<!--><script></script><style></style><noscript></noscript></head><body>",
		"<title></title",
		"\xef\xbb\xbf<head><meta name=robots content=none>",
		"\xff\xfe<\x00h\x00",
	} {
		f.Add([]byte(s), "")
	}
	f.Fuzz(func(t *testing.T, b []byte, contentType string) {
		h := ParseHead(b, contentType, "https://example.com/a/")
		for _, u := range []string{h.Canonical, h.Refresh} {
			if u == "" {
				continue
			}
			if c, err := URL(u); err != nil || c != u {
				t.Errorf("%q is not a canonical URL: %q, %v", u, c, err)
			}
		}
		if h.Refresh == "" && h.RefreshDelay != 0 {
			t.Errorf("RefreshDelay %v without Refresh", h.RefreshDelay)
		}
	})
}

// TestLinkCanonical reads canonical URLs from HTTP Link header values
// (RFC 8288; header lines joined by ", ", as fetch.Page.Link holds them),
// as servers and CMSs send them beside or instead of <link rel=canonical>.
func TestLinkCanonical(t *testing.T) {
	const page = "https://example.com/a/b.html"
	tests := []struct{ link, want string }{
		{`<https://example.com/c>; rel="canonical"`, "https://example.com/c"},
		{`<https://Example.com:443/c?utm_source=x>; rel=canonical`, "https://example.com/c"},
		{`</c>; rel="canonical"`, "https://example.com/c"},
		{`<c>;rel=canonical`, "https://example.com/a/c"},
		{`<https://cdn.example/s.css>; rel=preload; as=style, <https://example.com/c>; rel="canonical"`, "https://example.com/c"},
		{`<https://example.com/a,b>; rel="preload", </c>; title="x, y; z"; rel="alternate canonical"`, "https://example.com/c"},
		{`<https://example.com/c>; REL="Canonical"`, "https://example.com/c"},
		{`</c>; rel="canonical", <https://example.com/c#top>; rel=canonical`, "https://example.com/c"}, // the same twice
		{`</c>; rel="canonical", </d>; rel="canonical"`, ""},                                           // conflicting
		{`</c>; rel="canonicalx"`, ""},
		{`</c>; rel="alternate"`, ""},
		{`<javascript:alert(1)>; rel="canonical"`, ""},
		{`<ftp://example.com/f>; rel="canonical"`, ""},
		{`</c; rel="canonical"`, ""}, // no closing ">"
		{``, ""},
	}
	for _, tt := range tests {
		if got := LinkCanonical(tt.link, page); got != tt.want {
			t.Errorf("LinkCanonical(%q) = %q, want %q", tt.link, got, tt.want)
		}
	}
	if got := LinkCanonical(`</c>; rel="canonical"`, ""); got != "" {
		t.Errorf("LinkCanonical(relative, no page URL) = %q, want none", got)
	}
}
