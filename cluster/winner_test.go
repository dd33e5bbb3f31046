package cluster

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSortKeyOrdersAsDecide: for every pair of a set of candidates that
// differ in each rule's property, the order of the sort keys is Decide's,
// under the default order, a reordered list and a market.
func TestSortKeyOrdersAsDecide(t *testing.T) {
	urls := []string{"http://a.example/x", "https://a.example/x", "https://a.example/x?q=1", "https://b.example.uk/x",
		"https://a.example/xy", "http://b.example.uk/", "https://a.example/x\x00", "https://a.example/x\x01", ""}
	pops := []float64{0, math.Copysign(0, -1), 1, 2.5, -3} // both zeros: equal to Decide
	rng := rand.New(rand.NewPCG(1, 2))
	var cands []Candidate
	for range 200 {
		cands = append(cands, Candidate{URL: urls[rng.IntN(len(urls))], Popularity: pops[rng.IntN(len(pops))]})
	}
	for _, r := range []WinnerRules{
		{},
		{MarketTLDs: []string{".uk"}},
		{MarketTLDs: []string{".uk"}, Order: []string{RuleMarket, RuleStatic, RuleShorter, RuleHTTPS, RulePopularity}},
		{Order: []string{RuleShorter}},
	} {
		t.Run(fmt.Sprint(r.Order, r.MarketTLDs), func(t *testing.T) {
			for _, a := range cands {
				for _, b := range cands {
					better, rule := r.Decide(a, b)
					got := strings.Compare(r.SortKey(a), r.SortKey(b))
					want := 1
					switch {
					case rule == "":
						want = 0
					case better:
						want = -1
					}
					if got != want {
						t.Fatalf("compare(SortKey(%+v), SortKey(%+v)) = %d, want %d (Decide: %v by %q)", a, b, got, want, better, rule)
					}
				}
			}
		})
	}
}

// TestSortKeyUTF8: the key of a UTF-8 URL is UTF-8 (Beam's coders and
// JSON replace invalid bytes).
func TestSortKeyUTF8(t *testing.T) {
	for _, c := range []Candidate{{URL: "https://ä.example/ü", Popularity: 1e300}, {URL: "http://x/", Popularity: -2}, {}} {
		if k := (WinnerRules{}).SortKey(c); !utf8.ValidString(k) {
			t.Errorf("SortKey(%+v) = %q, not UTF-8", c, k)
		}
	}
}
