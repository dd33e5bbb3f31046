package ui

import (
	"strings"
	"testing"
)

func TestBreakURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://llvm.org/docs/CommandGuide/llvm-as.html", "https://<wbr>llvm.<wbr>org/<wbr>docs/<wbr>CommandGuide/<wbr>llvm-<wbr>as.<wbr>html"},
		{"http://a.example/x?q=<b>&y=1", "http://<wbr>a.<wbr>example/<wbr>x?<wbr>q=<wbr>&lt;b&gt;&amp;<wbr>y=<wbr>1"},
		{"/", "/"},
		{"", ""},
	} {
		if got := string(breakURL(c.in)); got != c.want {
			t.Errorf("breakURL(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := strings.ReplaceAll(string(breakURL(c.in)), "<wbr>", ""); strings.Contains(got, "<") {
			t.Errorf("breakURL(%q) does not escape: %q", c.in, got)
		}
	}
}
