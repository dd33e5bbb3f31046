package proxy

import (
	"os"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// TestPlainReason: the search page's "why grouped?" starts with one plain
// sentence built from the pair's scores, and never shows the divergence
// placeholder an early-stopped alignment leaves (1.00 where winnow compare
// gives the pair's own).
func TestPlainReason(t *testing.T) {
	sign := func(p string) *similarity.Signature {
		b, err := os.ReadFile("../corpus/sample/html/" + p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := page.Signer{}.Sign(b, "text/html")
		if err != nil {
			t.Fatal(err)
		}
		return &r.Sig
	}
	a, b := sign("13/Benchmarking.html"), sign("22/Benchmarking.html")
	full := similarity.Compare(a, b, similarity.CompareOptions{LCS: true})
	got := plainReason(full)
	if !strings.Contains(got, "% of the words appear in the same order in both pages") {
		t.Errorf("plainReason (aligned) = %q", got)
	}
	noLCS := similarity.Compare(a, b, similarity.CompareOptions{})
	if got := plainReason(noLCS); !strings.Contains(got, "five-word phrases are shared") {
		t.Errorf("plainReason (no alignment) = %q", got)
	}
	cut := full
	cut.LCSCut, cut.Divergence = true, 1
	if got := plainReason(cut); strings.Contains(got, "same order") {
		t.Errorf("plainReason (alignment stopped early) = %q: claims a measured order", got)
	}
	for _, sc := range scoresOf(similarity.Verdict{Scores: cut}) {
		if sc.Name == "divergence" {
			t.Errorf("scoresOf shows divergence %s of an alignment that stopped early", sc.Value)
		}
	}
	found := false
	for _, sc := range scoresOf(similarity.Verdict{Scores: full}) {
		found = found || sc.Name == "divergence"
	}
	if !found {
		t.Error("scoresOf hides the divergence of a whole alignment")
	}
}
