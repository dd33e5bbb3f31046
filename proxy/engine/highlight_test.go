package engine

import "testing"

func TestHTMLSnippet(t *testing.T) {
	for in, want := range map[string]string{
		"plain text": "plain text",
		"<p>Hello &amp; <b>bye</b></p><!-- c -->":    "Hello & <b>bye</b>",
		"&lt;strong&gt;Bench&lt;/strong&gt; tips":    "<strong>Bench</strong> tips",
		`<a href="x">link</a> a &lt; b, a < b`:       "link a < b, a < b",
		"<EM class=\"hl\">x</EM><br/>y":              `<EM class="hl">x</EM>y`,
		"cut <p":                                     "cut <p",
		"&lt;script&gt;alert(1)&lt;/script&gt; text": "<script>alert(1)</script> text",
	} {
		if got := htmlSnippet(in); got != want {
			t.Errorf("htmlSnippet(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHighlightTag(t *testing.T) {
	for in, want := range map[string]int{
		"<em>x": 4, "</em>x": 5, "<EM class=\"a\">": 14, "<mark>": 6, "<strong>": 8, "</b>": 4,
		"<int>": 0, "< b": 0, "<em": 0, "</em x>": 0, "<emph>": 0, "x<em>": 0,
	} {
		n, _, ok := HighlightTag(in)
		if ok != (want > 0) || n != want {
			t.Errorf("HighlightTag(%q) = %d, %v; want %d", in, n, ok, want)
		}
	}
}
