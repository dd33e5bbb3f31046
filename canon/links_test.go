package canon

import (
	"slices"
	"testing"
)

func TestLinkTarget(t *testing.T) {
	tests := []struct{ in, want string }{
		{"gfx9_vdst.html#amdgpu-synid-gfx9-vdst", "gfx9_vdst.html#amdgpu-synid-gfx9-vdst"},
		{"../AMDGPUModifierSyntax.html#amdgpu-synid-glc", "../AMDGPUModifierSyntax.html#amdgpu-synid-glc"},
		{"  /docs/index.html\n", "/docs/index.html"},
		{"#section", "#section"},
		{"?page=2", "?page=2"},
		{"a:b/c", ""}, // a scheme "a"
		{"./a:b", "./a:b"},
		{"with space/and:colon", "with space/and:colon"},
		{"https://example.org/a.html", ""},
		{"HTTP://example.org/", ""},
		{"mailto:someone@example.org", ""},
		{"javascript:void(0)", ""},
		{"//cdn.example.org/x.html", ""},
		{`\\host\x.html`, ""},
		{"", ""},
		{" \t", ""},
	}
	for _, tt := range tests {
		if got := string(LinkTarget([]byte(tt.in))); got != tt.want {
			t.Errorf("LinkTarget(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHTMLLinks(t *testing.T) {
	page := `<html><head><title>t</title><link href="style.css"></head><body>
<nav><a href="index.html">Home</a></nav>
<main><p>Text with <a href="gfx9_vdst.html#amdgpu-synid-gfx9-vdst">vdst</a> and
<A HREF='../Syntax.html#glc'>glc</A>, <a href="https://example.org/">out</a>,
<a href="mailto:x@example.org">mail</a>, <a name="anchor">no href</a>,
<a href="a.html?x=1&amp;y=2">query</a> and again <a href="index.html">home</a>.</p>
<svg><a href="in-svg.html">svg</a></svg><template><a href="in-template.html">t</a></template>
<script>document.write('<a href="in-script.html">')</script></main></body></html>`
	want := []string{"index.html", "gfx9_vdst.html#amdgpu-synid-gfx9-vdst", "../Syntax.html#glc", "a.html?x=1&y=2", "index.html"}
	for _, c := range []ContentMode{ContentAll, ContentMain} {
		d, err := HTML([]byte(page), "text/html", Options{Content: c, Links: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(d.Links, want) {
			t.Errorf("content %d: Links = %q, want %q", c, d.Links, want)
		}
		if d, _ := HTML([]byte(page), "text/html", Options{Content: c}); d.Links != nil {
			t.Errorf("content %d without Options.Links: Links = %q, want nil", c, d.Links)
		}
	}
	text := []byte("a text page with <a href=\"x.html\">markup</a> in it")
	if d, err := Text(text, Options{}); err != nil || d.Links != nil {
		t.Errorf("Text: Links = %q, %v, want nil", d.Links, err)
	}
	if d, err := Text(text, Options{Links: true}); err != nil || d.Links == nil || len(d.Links) != 0 {
		t.Errorf("Text with Options.Links: Links = %q, %v, want empty, not nil: read, and none", d.Links, err)
	}
}
