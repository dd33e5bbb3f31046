package similarity

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zeebo/xxh3"
)

// linkSet returns n link targets named from prefix, each given twice (a
// page links to a place more than once).
func linkSet(prefix string, n int) []string {
	var ls []string
	for i := range n {
		l := fmt.Sprintf("%s%d.html#sec-%d", prefix, i, i)
		ls = append(ls, l, l)
	}
	return ls
}

func TestLinkSketch(t *testing.T) {
	for _, n := range []int{0, 1, 10, MaxLinks, MaxLinks + 1, 1000} {
		links := linkSet("page", n)
		got := appendLinkSketch(make([]uint32, 0, MaxLinks), links)
		var want []uint32
		for _, l := range links {
			want = append(want, uint32(xxh3.HashString(l)))
		}
		slices.Sort(want)
		want = slices.Compact(want)
		want = want[:min(len(want), MaxLinks)]
		if !slices.Equal(got, want) {
			t.Errorf("%d distinct links: sketch %v, want the %d smallest distinct hashes %v", n, got, len(want), want)
		}
	}
}

func TestLinksDiffer(t *testing.T) {
	sign := func(links []string) *Signature {
		s := Sign(sigInput("one two three four five six seven eight nine ten eleven twelve"), Options{})
		s.Links = appendLinkSketch(make([]uint32, 0, MaxLinks), links)
		return &s
	}
	// Exact while both pages have fewer than MaxLinks targets: 10
	// shared, 5 of a's own and 10 of b's leave 5 of a's 15 unshared.
	shared := linkSet("shared", 10)
	a := sign(append(slices.Clone(shared), linkSet("a", 5)...))
	b := sign(append(slices.Clone(shared), linkSet("b", 10)...))
	if got, known := LinksDiffer(a, b); !known || math.Abs(got-1.0/3) > 1e-12 {
		t.Errorf("10 shared, 15 and 20 targets: LinksDiffer = %v, %v, want 1/3, true", got, known)
	}
	if got, _ := LinksDiffer(sign(shared), b); got != 0 {
		t.Errorf("a page whose targets are all among the other's: LinksDiffer = %v, want 0", got)
	}
	if got, _ := LinksDiffer(a, a); got != 0 {
		t.Errorf("a page and itself (a mirror): LinksDiffer = %v, want 0", got)
	}
	none := sign(nil)
	if got, known := LinksDiffer(a, none); !known || got != 0 {
		t.Errorf("against a page without relative links: LinksDiffer = %v, %v, want 0 (no evidence), true", got, known)
	}
	old := *a
	old.Links = nil
	if _, known := LinksDiffer(&old, b); known {
		t.Error("against a signature without its links recorded: known, want unknown")
	}
	if s := Compare(a, b, CompareOptions{Links: true}); !s.HasLinks || math.Abs(s.LinksDiffer-1.0/3) > 1e-12 || FeatureLinks.Value(&s) != s.LinksDiffer {
		t.Errorf("Compare with Links: HasLinks %v, LinksDiffer %v, feature %v; want true, 1/3, 1/3", s.HasLinks, s.LinksDiffer, FeatureLinks.Value(&s))
	}
	if s := Compare(a, b, CompareOptions{}); s.HasLinks {
		t.Error("Compare without Links: HasLinks, want the links not compared")
	}

	// Over MaxLinks the share is estimated from the sketches: over
	// seeded pages of 100 to 2,000 targets, one to two times the other's,
	// within 0.065 of the truth on average (a binomial share of the
	// 32 to 64 sampled targets: about 0.05) and 0.25 at worst.
	r := rand.New(rand.NewPCG(7, 7))
	sum, worst := 0.0, 0.0
	const cases = 200
	for range cases {
		na := 100 + r.IntN(1900)
		nb := na/2 + r.IntN(3*na/2) // a candidate pair's pages are of like length
		nShared := r.IntN(min(na, nb) + 1)
		tag := fmt.Sprint(r.Uint64())
		common := linkSet("c"+tag, nShared)
		pa := sign(append(slices.Clone(common), linkSet("a"+tag, na-nShared)...))
		pb := sign(append(slices.Clone(common), linkSet("b"+tag, nb-nShared)...))
		truth := 1 - float64(nShared)/float64(min(na, nb))
		got, _ := LinksDiffer(pa, pb)
		sum += math.Abs(got - truth)
		worst = max(worst, math.Abs(got-truth))
	}
	if sum/cases > 0.065 || worst > 0.25 {
		t.Errorf("estimated LinksDiffer: mean error %.3f, worst %.3f; want within 0.065 and 0.25", sum/cases, worst)
	}
	t.Logf("estimated LinksDiffer over %d pairs: mean error %.3f, worst %.3f", cases, sum/cases, worst)
}

func TestSignLinks(t *testing.T) {
	in := sigInput("one two three four five six seven eight nine ten eleven twelve")
	if s := Sign(in, Options{}); s.Links == nil || len(s.Links) != 0 {
		t.Errorf("a page without links: Links %v, want empty, not nil (recorded)", s.Links)
	}
	in.Links = linkSet("x", 500)
	s := Sign(in, Options{})
	if len(s.Links) != MaxLinks || !slices.IsSorted(s.Links) {
		t.Errorf("500 targets: %d link hashes (sorted %v), want %d ascending", len(s.Links), slices.IsSorted(s.Links), MaxLinks)
	}
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got Signature
	if err := got.UnmarshalBinary(b); err != nil || !slices.Equal(got.Links, s.Links) {
		t.Errorf("round trip: links %v, %v; want %v", got.Links, err, s.Links)
	}
	s.Links = make([]uint32, MaxLinks+1)
	if _, err := s.MarshalBinary(); err == nil {
		t.Errorf("%d link hashes encoded, want an error", MaxLinks+1)
	}
}

func BenchmarkLinkSketch(b *testing.B) {
	links := linkSet("gfx9_vdst_", 2000) // a generated table page's links
	dst := make([]uint32, 0, MaxLinks)
	b.ReportAllocs()
	for b.Loop() {
		dst = appendLinkSketch(dst[:0], links)
	}
}
