package canon

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/net/html"
)

// tokenizerRead returns what x/net's tokenizer makes of the attributes of
// the raw start tag, rendered for comparison.
func tokenizerRead(t *tagAttrs, raw []byte) string {
	z := t.tag(raw)
	var kv []attr
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		if k != nil {
			kv = append(kv, attr{k, v})
		}
	}
	return renderAttrs(kv)
}

func renderAttrs(kv []attr) string {
	s := ""
	for _, a := range kv {
		s += fmt.Sprintf("%q=%q ", a.key, a.val)
	}
	return s
}

// checkScan compares scan's answer on raw with the tokenizer's; scan may
// decline a tag, but what it returns must be the tokenizer's answer.
func checkScan(t *testing.T, raw []byte) (scanned bool) {
	t.Helper()
	var own, tok tagAttrs
	if !own.scan(raw) {
		return false
	}
	got := renderAttrs(own.kv)
	if want := tokenizerRead(&tok, raw); got != want {
		t.Errorf("%q: scan %s, tokenizer %s", raw, got, want)
	}
	return true
}

// eachStartTag calls f with the raw bytes of every start tag of the real
// pages in testdata/pages.
func eachStartTag(t *testing.T, f func(raw []byte)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "pages", "*.html"))
	if err != nil || len(files) < 30 {
		t.Fatalf("%d pages (%v), want at least 30", len(files), err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		l := lexer{src: b}
		for tt := l.next(); tt != html.ErrorToken; tt = l.next() {
			if tt == html.StartTagToken || tt == html.SelfClosingTagToken {
				f(l.raw())
			}
		}
	}
}

// TestScanAttrsRealPages compares scan with the tokenizer on every start
// tag of the real pages in testdata.
func TestScanAttrsRealPages(t *testing.T) {
	tags, scanned := 0, 0
	eachStartTag(t, func(raw []byte) {
		tags++
		if checkScan(t, raw) {
			scanned++
		}
	})
	if scanned < tags*9/10 {
		t.Errorf("scan read %d of %d tags, want at least nine tenths", scanned, tags)
	}
	t.Logf("scan read %d of %d start tags", scanned, tags)
}

// TestScanAttrsEdgeCases pins the tokenizer's rules that scan follows.
func TestScanAttrsEdgeCases(t *testing.T) {
	for _, raw := range []string{
		`<div>`, `<div/>`, `<br />`, `<div class="a b">`, `<div class='a'>`, `<div class=a>`,
		`<div CLASS=A Class=B>`, `<div =x>`, `<div ==x>`, `<div a = "b" c>`, `<div a=>`,
		`<div a= >`, `<div a="x"b="y">`, `<div a/b>`, `<div / a>`, `<div a=b/>`, `<div a="/">`,
		`<div a='>'>`, `<div a=b"c>`, `<div "a"=b>`, `<div a="">`, "<div\ta\n=\fb>", `<div a b a=1>`,
		`<p id=x hidden aria-hidden=true role=main itemprop=articleBody>`, `<div/class=x>`,
		`<div a="unterminated>`, `<div a=b`, `<div a="&amp;">`, "<div a=\"x\ry\">",
	} {
		checkScan(t, []byte(raw))
	}
}

// FuzzScanAttrs compares scan with the tokenizer on arbitrary tags.
func FuzzScanAttrs(f *testing.F) {
	for _, s := range []string{`<div class="a b" id=x>`, `<p a=b/c d='e'>`, `<x =y z>`, `<a href=x/ y>`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw := []byte("<div " + s + ">")
		checkScan(t, raw)
	})
}

// TestReadAllocates checks that reading a scannable tag allocates nothing
// once the buffers have grown.
func TestReadAllocates(t *testing.T) {
	var a tagAttrs
	raw := []byte(`<div class="entry-content clearfix" id=main data-x='1' role=main>`)
	a.read(raw)
	if n := testing.AllocsPerRun(100, func() { a.read(raw) }); n != 0 {
		t.Errorf("read allocates %v times a tag, want 0", n)
	}
}

// TestReleaseDropsPageReferences checks that a released tagAttrs keeps no
// slice of the page it read last.
func TestReleaseDropsPageReferences(t *testing.T) {
	var a tagAttrs
	a.read([]byte(`<div class="x" id=y>`))
	a.read([]byte(`<div title="&amp;">`)) // through the tokenizer
	a.release()
	for i, kv := range a.kv[:cap(a.kv)] {
		if kv.key != nil || kv.val != nil {
			t.Errorf("entry %d still holds %q=%q", i, kv.key, kv.val)
		}
	}
	if a.r.b != nil {
		t.Error("the tokenizer's reader still holds the last tag")
	}
}

// checkHref compares href's answer on raw with the tokenizer's href
// attribute, byte for byte (nil and empty alike: no target either way).
func checkHref(t *testing.T, raw []byte) {
	t.Helper()
	var own, tok tagAttrs
	got := string(own.href(raw))
	z := tok.tag(raw)
	want := ""
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		if string(k) == "href" {
			want = string(v)
			break
		}
	}
	if got != want {
		t.Errorf("%q: href %q, tokenizer %q", raw, got, want)
	}
}

// TestHrefRealPages compares href with the tokenizer on every start tag
// of the real pages in testdata, and on the tokenizer's edge cases.
func TestHrefRealPages(t *testing.T) {
	eachStartTag(t, func(raw []byte) { checkHref(t, raw) })
	for _, raw := range []string{
		`<a href=x>`, `<a HREF="x" href="y">`, `<a hReF='x'>`, `<a data-href="x" href="y">`,
		`<a data-x= href=y>`, `<a title="href=x">`, `<a href>`, `<a href=>`, `<a href="">`,
		`<a href="a.html?x=1&amp;y=2">`, "<a href=\"x\ry\">", `<a href="unterminated>`, `<a href=x`,
		`<a/href=x>`, `<a =href=x>`, `<a href = "x" >`, `<a class="reference internal" href="#frag"><`,
	} {
		checkHref(t, []byte(raw))
	}
}

// FuzzHref compares href with the tokenizer on arbitrary <a> tags.
func FuzzHref(f *testing.F) {
	for _, s := range []string{`class="x" href="a.html#b"`, `href=x/ y`, `title='href=z' href=w`, `HREF="&lt;"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkHref(t, []byte("<a "+s+">"))
	})
}
