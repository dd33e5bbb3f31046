package canon

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"golang.org/x/net/html"
)

// lexerEdgeCases are inputs where the tokenizer's rules are subtle: raw
// text and its end tags, the script escape states, comments, bogus
// comments, self-closing tags with unquoted values, repeated attribute
// names, input ending inside each kind of token, carriage returns, NUL
// bytes and entities.
var lexerEdgeCases = []string{
	"", "<", "a<", "</", "a</", "<a", "<a ", "<a b", "<a b=", "<a b='c", "<a b=c", "</a", "</a b", "<!", "<!-", "<!--", "<!-- x --",
	"<?xml", "</ x>", "</>", "<!>", "<!-->x", "<!--->x", "<!-- a --!>b", "<!-- a --!-->b", "<!-- a --!x -->b", "<!-- a ---->b",
	"<!DOCTYPE html><p>x", "<!doctype", "<!DOCTYPE", "<![CDATA[x]]>y",
	"x < y <3 <<b>z</b>", "a<1b>c", "<a/>", "<br/>x", "<p a=/>x", "<p a=b/>x", "<p a=b/ >x", "<p a=x a=/>x", "<p A=x a=/>x",
	"<p a=x b=/>x", "<p =/>x", "<p a='/'/>x", "<p a/ b=/>x", "<img src=x/ />y", "<p\ta\n=\f'1'\r>x", "<p a==b>x", "<P CLASS=Q>x</P>",
	"<title>a &amp; b</title>", "<title>a &amp; b", "<textarea>x\r\ny &lt;</textarea>", "<xmp>&amp;<b></xmp>",
	"<script>if (a<b) x='</scrip';</script>y", "<script>a</script x>y", "<script>a</SCRIPT>y", "<script>a</script",
	"<script><!-- a </script>b", "<script><!-- <script> </script> x --></script>y", "<script><!-- <script></script>--></script>y",
	"<script><!--<script>x</script>y</script>z", "<script><!--x--></script>y", "<script><!-</script>y", "<script><!", "<script><!-",
	"<script><!--", "<script><!--<", "<script><!--<s", "<script><!--<script", "<script><!--<script>", "<script><!--<script></",
	"<script><!--<scriptx></script>y", "<script><!--<x></script>y", "<script><!--</x></script>y", "<script><!--->--></script>y",
	"<script/>x</script>y", "<style>a</style >b", "<style>a</styl", "<iframe>x</iframe>y", "<noscript><p>x</p></noscript>y",
	"<plaintext>a</plaintext><b>", "<noembed></noembed>x", "<script></script>x",
	"a\rb\r\nc\n\rd", "a\x00b<title>c\x00d</title><script>\x00</script>", "&amp;&lt;&#x41;&notit;&notin; &#0; &#13;",
	"<html lang=' en '><p>x", "<html LANG=fr lang=de>x", "<div class=\"a\" id=b><span class=c>x</span></div>",
	"<p a='x>y'>z", "<p a=\"x\"b=c>z", "<p\x00a=b>x", "<a href=x>y</a  >z", "</p\n>x",
}

// lexerTokens lists the tokens of src as the lexer sees them, and the
// attributes of each start tag as tagAttrs reads them.
func lexerTokens(src []byte) []string {
	l := lexer{src: src}
	var attrs tagAttrs
	var out []string
	for {
		tt := l.next()
		if tt == html.ErrorToken {
			return out
		}
		s := fmt.Sprintf("%v %q", tt, l.raw())
		switch tt {
		case html.TextToken:
			s += fmt.Sprintf(" text %q", l.text())
		case html.StartTagToken, html.SelfClosingTagToken:
			s += " attrs " + tokenizerAttrs(attrs.tag(l.raw()))
		}
		out = append(out, s)
	}
}

// tokenizerTokens lists the tokens of src as x/net's Tokenizer returns
// them (doctypes as comments, as the lexer reports them).
func tokenizerTokens(src []byte) []string {
	z := html.NewTokenizer(bytes.NewReader(src))
	var out []string
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out
		}
		raw := string(z.Raw())
		if tt == html.DoctypeToken {
			tt = html.CommentToken
		}
		s := fmt.Sprintf("%v %q", tt, raw)
		switch tt {
		case html.TextToken:
			s += fmt.Sprintf(" text %q", z.Text())
		case html.StartTagToken, html.SelfClosingTagToken:
			s += " attrs " + tokenizerAttrs(z)
		}
		out = append(out, s)
	}
}

// tokenizerAttrs renders the attributes of the tokenizer's current tag.
func tokenizerAttrs(z *html.Tokenizer) string {
	var b bytes.Buffer
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		if k != nil {
			fmt.Fprintf(&b, "%q=%q ", k, v)
		}
	}
	return b.String()
}

// diffTokens reports the first token where the lexer and the tokenizer
// differ.
func diffTokens(t *testing.T, name string, src []byte) {
	t.Helper()
	got, want := lexerTokens(src), tokenizerTokens(src)
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("%s: token %d: lexer %s, tokenizer %s", name, i, g, w)
			return
		}
	}
}

// TestLexerMatchesTokenizer checks that the lexer returns the tokens of
// x/net's Tokenizer, with the same raw bytes, text and attributes, on the
// saved real pages and on the edge cases.
func TestLexerMatchesTokenizer(t *testing.T) {
	for _, p := range pages(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		diffTokens(t, p, b)
	}
	for _, c := range lexerEdgeCases {
		diffTokens(t, fmt.Sprintf("%q", c), []byte(c))
	}
}

// TestLexerKeepsInput checks that the lexer does not write to its input
// (the extractor reads the caller's page in place).
func TestLexerKeepsInput(t *testing.T) {
	src := []byte("a\r\nb &amp; c<title>d\r\x00</title>e")
	orig := bytes.Clone(src)
	lexerTokens(src)
	if !bytes.Equal(src, orig) {
		t.Errorf("input after lexing = %q, want %q", src, orig)
	}
}

func FuzzLexer(f *testing.F) {
	for _, c := range lexerEdgeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		diffTokens(t, "input", b)
	})
}
