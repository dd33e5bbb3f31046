package similarity

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
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
		got := LinkSketch(links)
		want := []uint32{}
		for _, l := range links {
			want = append(want, uint32(xxh3.HashString(l)))
		}
		slices.Sort(want)
		want = slices.Compact(want)
		want = want[:min(len(want), MaxLinks)]
		if got == nil || !slices.Equal(got, want) {
			t.Errorf("%d distinct links: sketch %v, want the %d smallest distinct hashes %v", n, got, len(want), want)
		}
	}
}

func TestLinksDiffer(t *testing.T) {
	// Exact while both pages have fewer than MaxLinks targets: 10
	// shared, 5 of a's own and 10 of b's leave 5 of a's 15 unshared.
	shared := linkSet("shared", 10)
	a := LinkSketch(append(slices.Clone(shared), linkSet("a", 5)...))
	b := LinkSketch(append(slices.Clone(shared), linkSet("b", 10)...))
	if got, known := LinksDiffer(a, b); !known || math.Abs(got-1.0/3) > 1e-12 {
		t.Errorf("10 shared, 15 and 20 targets: LinksDiffer = %v, %v, want 1/3, true", got, known)
	}
	if got, _ := LinksDiffer(LinkSketch(shared), b); got != 0 {
		t.Errorf("a page whose targets are all among the other's: LinksDiffer = %v, want 0", got)
	}
	if got, _ := LinksDiffer(a, a); got != 0 {
		t.Errorf("a page and itself (a mirror): LinksDiffer = %v, want 0", got)
	}
	if got, known := LinksDiffer(a, LinkSketch(nil)); !known || got != 0 {
		t.Errorf("against a page without relative links: LinksDiffer = %v, %v, want 0 (no evidence), true", got, known)
	}
	if _, known := LinksDiffer(nil, b); known {
		t.Error("against links not recorded: known, want unknown")
	}
	if v := FeatureLinks.Value(&Scores{}); v != 1 {
		t.Errorf("FeatureLinks of links not compared = %v, want 1 (argues least for a duplicate)", v)
	}
	if v := FeatureLinks.Value(&Scores{HasLinks: true, LinksDiffer: 0.25}); v != 0.25 {
		t.Errorf("FeatureLinks of LinksDiffer 0.25 = %v, want 0.25", v)
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
		pa := LinkSketch(append(slices.Clone(common), linkSet("a"+tag, na-nShared)...))
		pb := LinkSketch(append(slices.Clone(common), linkSet("b"+tag, nb-nShared)...))
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
	if s := Sign(in, Options{}); s.Links != nil {
		t.Errorf("links not read: Links %v, want nil (not recorded)", s.Links)
	}
	in.Links = []string{}
	if s := Sign(in, Options{}); s.Links == nil || len(s.Links) != 0 {
		t.Errorf("a page without links: Links %v, want empty, not nil (recorded)", s.Links)
	}
	in.Links = linkSet("x", 500)
	s := Sign(in, Options{})
	if !slices.Equal(s.Links, LinkSketch(in.Links)) {
		t.Errorf("500 targets: Links %v, want LinkSketch's %v", s.Links, LinkSketch(in.Links))
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

// TestRemoveRefusesLinksElsewhere: one text signed with two sets of link
// targets, as a generated table whose every target was renamed in the
// next release. The shipped remove decision takes them for
// content-equivalent; a model with RefuseLinks refuses them and says
// why, while the same links, or links not recorded on a side, are not
// refused.
func TestRemoveRefusesLinksElsewhere(t *testing.T) {
	text := sigTexts(t)[0].text
	in := sigInput(text[:min(len(text), 8000)])
	sign := func(links []string) Signature {
		in := in
		in.Links = links
		return Sign(in, Options{})
	}
	a, b := sign(linkSet("gfx9_vdst", 200)), sign(linkSet("gfx9_vdst_89680f", 200))
	d := Decision{Purpose: PurposeRemove}
	if v := d.Decide(&a, &b); !v.Duplicate {
		t.Fatalf("premise: the shipped remove decision refuses one text: %s", v.Explain())
	}
	refuse := *DefaultModel(PurposeRemove)
	refuse.RefuseLinks = 0.364
	d.Models = &refuse
	v := d.Decide(&a, &b)
	if v.Duplicate || v.LinksRefused != 0.364 || !strings.Contains(v.Explain(), "link targets differ") {
		t.Errorf("with RefuseLinks: %s (LinksRefused %v), want refused as the link targets differ", v.Explain(), v.LinksRefused)
	}
	same := sign(linkSet("gfx9_vdst", 200))
	unread := sign(nil)
	for name, other := range map[string]*Signature{"the same links": &same, "links not recorded": &unread} {
		if v := d.Decide(&a, other); !v.Duplicate {
			t.Errorf("with RefuseLinks, %s: %s, want a duplicate", name, v.Explain())
		}
	}
	if v := (Decision{Purpose: PurposeGroup, Models: &refuse}).Decide(&a, &b); !v.Duplicate {
		t.Errorf("group decision with RefuseLinks: %s, want a duplicate (only removal reads links)", v.Explain())
	}
}
