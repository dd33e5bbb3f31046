package canon

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// pages returns the paths of the saved real pages.
func pages(t testing.TB) []string {
	t.Helper()
	ps, err := filepath.Glob("testdata/pages/*.html")
	if err != nil || len(ps) < 20 {
		t.Fatalf("testdata/pages: %d pages, err %v; want at least 20", len(ps), err)
	}
	return ps
}

// golden renders a Document for a golden file.
func golden(d Document) string {
	return fmt.Sprintf("charset: %s\nlang: %s\ntitle: %s\ntokens: %d\nsentences: %d\n---\n%s",
		d.Charset, d.Lang, d.Title, len(d.Tokens), len(d.Sentences), d.Text)
}

func TestGolden(t *testing.T) {
	for _, p := range pages(t) {
		for _, mode := range []struct {
			name string
			c    ContentMode
		}{{"all", ContentAll}, {"main", ContentMain}} {
			name := strings.TrimSuffix(filepath.Base(p), ".html")
			t.Run(name+"/"+mode.name, func(t *testing.T) {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				d, err := HTML(b, "", Options{Content: mode.c})
				if err != nil {
					t.Fatalf("HTML(%s) error: %v", p, err)
				}
				checkSane(t, d)
				got := golden(d)
				gp := filepath.Join("testdata/golden", name+"."+mode.name+".txt")
				if *update {
					if err := os.WriteFile(gp, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(gp)
				if err != nil {
					t.Fatalf("%v (run go test ./canon -update)", err)
				}
				if got != string(want) {
					t.Errorf("HTML(%s) differs from %s; run go test ./canon -update and review the diff", p, gp)
				}
			})
		}
	}
}

// checkSane checks the invariants of a Document for a real page.
func checkSane(t *testing.T, d Document) {
	t.Helper()
	if len(d.Text) < 200 || len(d.Tokens) < 20 || len(d.Sentences) < 2 {
		t.Errorf("text %d bytes, %d tokens, %d sentences; want a real page's text", len(d.Text), len(d.Tokens), len(d.Sentences))
	}
	if !utf8.ValidString(d.Text) {
		t.Error("Text is not valid UTF-8")
	}
	if !strings.HasSuffix(d.Text, "\n") {
		t.Error("Text does not end with a newline")
	}
	for i, line := range strings.Split(strings.TrimSuffix(d.Text, "\n"), "\n") {
		if line == "" || strings.HasPrefix(line, " ") || strings.HasSuffix(line, " ") || strings.Contains(line, "  ") {
			t.Errorf("line %d %q: blank or badly spaced", i, line)
			break
		}
		if line != Normalize(line) {
			t.Errorf("line %d %q: Normalize gives %q", i, line, Normalize(line))
			break
		}
	}
	if strings.ContainsAny(d.Text, "\"“”«»:\t\r") {
		t.Error("Text holds quotes, colons or tabs")
	}
	for _, tok := range d.Tokens {
		if tok == "" || strings.ContainsAny(tok, " \n") {
			t.Errorf("bad token %q", tok)
			break
		}
	}
	for _, s := range d.Sentences {
		if s == "" || strings.Contains(s, "\n") || s != strings.TrimSpace(s) {
			t.Errorf("bad sentence %q", s)
			break
		}
	}
}
