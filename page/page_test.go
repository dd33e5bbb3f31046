package page

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/internal/renumber"
	"github.com/winnow-search/winnow/similarity"
)

func TestIsText(t *testing.T) {
	tests := []struct {
		body, ct string
		want     bool
	}{
		{"<p>hi</p>", "", false},
		{"  \n<!doctype html>", "", false},
		{"\ufeff<html>", "", false},
		{"plain words", "", true},
		{"<p>hi</p>", "text/plain; charset=utf-8", true},
		{"words", "text/html", false},
		{"words", "bad;;type", true}, // unparsable type: sniffed
		// Spellings servers send (python3 -m http.server, net/http,
		// Tomcat) and ones mime.ParseMediaType refuses for their
		// parameters, read as browsers read them.
		{"<p>hi</p>", "text/plain; charset=utf-8", true},
		{"<p>hi</p>", "TEXT/PLAIN;CHARSET=UTF-8", true},
		{"words", "text/html; charset=utf-8", false},
		{"<stdio.h> declares printf", "text/plain;charset=Shift_JIS;foo", true},
		{"<stdio.h> declares printf", "text/plain;; charset=Shift_JIS", true},
		{"words", "text/html; charset=Shift_JIS; charset=utf-8", false},
		// No type/subtype: sniffed, as browsers sniff.
		{"words", "text", true},
		{"<p>hi</p>", "text/html, text/html", false},
		{"words", "text/html, text/html", true},
	}
	for _, tt := range tests {
		if got := IsText([]byte(tt.body), tt.ct); got != tt.want {
			t.Errorf("IsText(%q, %q) = %v, want %v", tt.body, tt.ct, got, tt.want)
		}
	}
}

func TestSignHTMLAndTextAgree(t *testing.T) {
	words := strings.Repeat("the quick brown fox jumps over the lazy dog near the river bank ", 20)
	html := "<html><head><title>t</title><script>var x = 1;</script></head><body><p>" + words + "</p></body></html>"
	var s Signer
	h, err := s.Sign([]byte(html), "text/html")
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Sign([]byte(words), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h.Doc.Text, "var x") {
		t.Errorf("script text in the canonical text: %q", h.Doc.Text)
	}
	if v := (similarity.Decision{}).Decide(&h.Sig, &p.Sig); !v.Duplicate {
		t.Errorf("the page and its text are not duplicates: %s", v.Explain())
	}
	if _, err := s.Sign([]byte{0x89, 'P', 'N', 'G', 0, 0, 0}, ""); err == nil {
		t.Error("Sign(binary) = nil error")
	}
}

func ExampleSigner_Sign() {
	var s Signer
	a, _ := s.Sign([]byte("<p>"+strings.Repeat("winnow groups near-duplicate pages in search results. ", 10)+"</p>"), "text/html")
	b, _ := s.Sign([]byte(strings.Repeat("winnow groups near-duplicate pages in search results. ", 10)+"Mirror."), "text/plain")
	fmt.Println((similarity.Decision{}).Decide(&a.Sig, &b.Sig).Duplicate)
	// Output: true
}

func TestSignHead(t *testing.T) {
	words := strings.Repeat("the quick brown fox jumps over the lazy dog near the river bank ", 20)
	body := []byte(`<html><head><title>Fox</title><link rel="canonical" href="../original.html"></head><body><p>` + words + `</p></body></html>`)
	plain, err := Signer{}.SignURL(body, "text/html", "https://example.com/copies/fox.html")
	if err != nil {
		t.Fatal(err)
	}
	if plain.Head != (canon.Head{}) {
		t.Errorf("Head without Signer.Head = %+v, want zero", plain.Head)
	}
	s := Signer{Head: true}
	r, err := s.SignURL(body, "text/html", "https://example.com/copies/fox.html")
	if err != nil {
		t.Fatal(err)
	}
	want := canon.Head{Title: "Fox", Canonical: "https://example.com/original.html"}
	if r.Head != want {
		t.Errorf("Head = %+v, want %+v", r.Head, want)
	}
	if sigID(r.Sig) != sigID(plain.Sig) {
		t.Error("reading the head changed the signature")
	}
	// Without a page URL a relative canonical cannot be resolved.
	if r, _ := s.Sign(body, "text/html"); r.Head.Canonical != "" || r.Head.Title != "Fox" {
		t.Errorf("Sign: Head = %+v, want the title only", r.Head)
	}
	// Plain text has no head.
	if r, _ := s.Sign([]byte(words), "text/plain"); r.Head != (canon.Head{}) {
		t.Errorf("text: Head = %+v, want zero", r.Head)
	}
}

// sigID is a signature's encoding, to compare two signatures.
func sigID(s similarity.Signature) string {
	b, err := s.MarshalBinary()
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestChangedPricesAreNotRemoved: two real shop product pages
// (canon/testdata/pages) whose every number in the text changed, the
// words kept, are one product page in two price and stock states: the
// group decision (signed as winnow signs by default, main content) puts
// them together, the remove decision does not hide one behind the other
// (its numbers-only rule) and says which numbers differ; a change of as
// many words instead is left to the model.
func TestChangedPricesAreNotRemoved(t *testing.T) {
	for _, name := range []string{"zooroyal.de.trixie.html", "de.happycoffee.org.sidamo.html"} {
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("..", "canon", "testdata", "pages", name))
			if err != nil {
				t.Fatal(err)
			}
			// Every digit between tags shifted, and every word after a
			// number replaced: the same places, once numbers, once words.
			repriced, reworded := renumber.ShiftDigits(body), renumber.RewordAfterNumbers(body)
			s := Signer{Canon: canon.Options{Content: canon.ContentMain}}
			orig, err := s.Sign(body, "text/html")
			if err != nil {
				t.Fatal(err)
			}
			numbers, err := s.Sign(repriced, "text/html")
			if err != nil {
				t.Fatal(err)
			}
			words, err := s.Sign(reworded, "text/html")
			if err != nil {
				t.Fatal(err)
			}
			if orig.Sig.Simhash == numbers.Sig.Simhash {
				t.Fatal("the numbers did not change the page")
			}
			if g := (similarity.Decision{Purpose: similarity.PurposeGroup}).Decide(&orig.Sig, &numbers.Sig); !g.Duplicate {
				t.Errorf("group, numbers changed: %s, want a duplicate", g.Explain())
			}
			remove := similarity.Decision{Purpose: similarity.PurposeRemove}
			vn := remove.Decide(&orig.Sig, &numbers.Sig)
			if vn.Duplicate || vn.Scores.LCS != 1 || !strings.Contains(vn.Explain(), "only numbers differ") || !strings.Contains(vn.Explain(), "numbers differ") {
				t.Errorf("remove, numbers changed: %s, want refused at LCS ratio 1 as only numbers differ", vn.Explain())
			}
			if vw := remove.Decide(&orig.Sig, &words.Sig); !(vw.Scores.LCS < 1) || strings.Contains(vw.Explain(), "only numbers differ") {
				t.Errorf("remove, the words after the numbers changed: %s, want LCS ratio < 1 and no numbers-only refusal", vw.Explain())
			}
		})
	}
}

// TestLinkTargets signs a real page beside copies of it: a mirror (the
// same HTML) and a syndicated copy (its links to other pages made
// absolute, to another host; its links inside the page kept) keep
// LinksDiffer 0, while a copy whose link targets were all renamed, as
// the AMDGPU instruction tables' were between two LLVM releases
// (gfx9_vdst.html#… to gfx9_vdst_89680f.html#…), links elsewhere
// whatever its text; the same clang manual page of the next release
// links mostly to the same places.
func TestLinkTargets(t *testing.T) {
	read := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "canon", "testdata", "pages", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	s := Signer{Canon: canon.Options{Content: canon.ContentMain, Links: true}}
	type signed struct {
		sig   *similarity.Signature
		links []uint32
	}
	sign := func(b []byte) signed {
		t.Helper()
		r, err := s.Sign(b, "text/html")
		if err != nil {
			t.Fatal(err)
		}
		return signed{&r.Sig, similarity.LinkSketch(r.Doc.Links)}
	}
	body := read("debian.clang-14-doc.ItaniumMangleAbiTags.html")
	href := regexp.MustCompile(`href="([^":#/][^":]*?)"`)
	absolute := href.ReplaceAll(body, []byte(`href="https://mirror.example.org/clang/$1"`))
	renamed := regexp.MustCompile(`href="([^":/][^":]*?)"`).ReplaceAll(body, []byte(`href="${1}-89680f"`))
	orig := sign(body)
	if len(orig.links) < 10 {
		t.Fatalf("%d link targets recorded, want the page's relative links", len(orig.links))
	}
	next := sign(read("debian.clang-15-doc.ItaniumMangleAbiTags.html"))
	for _, c := range []struct {
		name     string
		other    signed
		min, max float64
	}{
		{"mirror", sign(slices.Clone(body)), 0, 0},
		{"links made absolute", sign(absolute), 0, 0},
		{"every target renamed", sign(renamed), 1, 1},
		{"the next release", next, 0, 0.35},
	} {
		got, known := similarity.LinksDiffer(orig.links, c.other.links)
		if !known || got < c.min || got > c.max {
			t.Errorf("%s: LinksDiffer %.3f (known %v), want %.2f..%.2f", c.name, got, known, c.min, c.max)
		}
		if sc := similarity.Compare(orig.sig, c.other.sig, similarity.CompareOptions{LCS: true}); c.name != "the next release" && sc.LCS != 1 {
			t.Errorf("%s: LCS ratio %.3f, want 1: only the links changed", c.name, sc.LCS)
		}
	}
}
