package report

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/similarity"
)

// synthSigs returns n signatures whose lengths follow total(r), split over
// 3 dimensions at random.
func synthSigs(r *rand.Rand, n int, total func(*rand.Rand) int) []*similarity.Signature {
	sigs := make([]*similarity.Signature, n)
	for i := range sigs {
		t := total(r)
		v := make([]uint32, 3)
		for range t {
			v[r.IntN(3)]++
		}
		sigs[i] = &similarity.Signature{Tokens: t, Lengths: v}
	}
	return sigs
}

func TestBalance(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	laws := []struct {
		name  string
		total func(*rand.Rand) int
	}{
		{"uniform", func(r *rand.Rand) int { return 20 + r.IntN(2000) }},
		// Zipf-ish: a power law of lengths with a spike at 237 words,
		// like Zhu's Fig. 1.
		{"zipf", func(r *rand.Rand) int {
			if r.IntN(10) == 0 {
				return 237
			}
			return 50 + int(100/math.Pow(1-r.Float64(), 0.8))
		}},
	}
	for _, law := range laws {
		t.Run(law.name, func(t *testing.T) {
			rows := Balance(synthSigs(r, 6400, law.total), 64)
			seen := map[[2]int]BalanceRow{}
			for _, row := range rows {
				seen[[2]int{row.Dims, row.Parts}] = row
			}
			for _, want := range [][2]int{{1, 2}, {1, 64}, {2, 4}, {2, 9}, {2, 64}, {3, 8}, {3, 27}, {3, 64}} {
				if _, ok := seen[want]; !ok {
					t.Errorf("Balance has no row for %d-D at %d parts", want[0], want[1])
				}
			}
			if _, ok := seen[[2]int{3, 4}]; ok {
				t.Error("Balance has a row for 3-D at 4 parts, which cannot be split")
			}
			row := seen[[2]int{3, 64}]
			t.Logf("3-D at 64 parts: imbalance %.3f, product grid %.3f", row.Imbalance, row.Grid)
			if row.Imbalance > 1.2 || row.Imbalance < 1 {
				t.Errorf("3-D at 64 parts: Imbalance = %.3f, want in [1, 1.2]", row.Imbalance)
			}
			if row.Grid < row.Imbalance {
				t.Errorf("3-D at 64 parts: Grid = %.3f, want >= Imbalance %.3f", row.Grid, row.Imbalance)
			}
			var b bytes.Buffer
			if err := WriteBalance(&b, rows); err != nil {
				t.Fatal(err)
			}
			if lines := strings.Count(b.String(), "\n"); lines != len(rows)+1 {
				t.Errorf("WriteBalance wrote %d lines, want %d", lines, len(rows)+1)
			}
			if !strings.Contains(b.String(), "4x4x4") {
				t.Errorf("WriteBalance output lacks the 4x4x4 row:\n%s", b.String())
			}
		})
	}
	if rows := Balance([]*similarity.Signature{{Tokens: 2, Lengths: []uint32{1, 1, 0}}, nil}, 64); rows != nil {
		t.Errorf("Balance(empty signatures) = %v, want nil", rows)
	}
}

func TestBalanceParts(t *testing.T) {
	tests := []struct {
		dims, max int
		want      string
	}{
		{1, 64, "[2 4 8 16 32 64]"},
		{2, 64, "[4 8 9 16 25 32 36 49 64]"},
		{3, 64, "[8 16 27 32 64]"},
		{3, 7, "[]"},
	}
	for _, tt := range tests {
		if got := fmt.Sprint(BalanceParts(tt.dims, tt.max)); got != tt.want {
			t.Errorf("BalanceParts(%d, %d) = %s, want %s", tt.dims, tt.max, got, tt.want)
		}
	}
}

func TestPlotBalance(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	rows := Balance(synthSigs(r, 2000, func(r *rand.Rand) int { return 20 + r.IntN(500) }), 64)
	path := filepath.Join(t.TempDir(), "balance.png")
	if err := PlotBalance(rows, path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 1000 || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("PlotBalance wrote %d bytes starting %q, want a PNG", len(b), b[:min(8, len(b))])
	}
	if err := PlotBalance(nil, path); err == nil {
		t.Error("PlotBalance(nil) error = nil, want an error")
	}
}

// mirrorClusters builds clusters of near-duplicate pages over:
//   - a real mirror: ftp.gnu.org/gnu/<pkg>/<file> and
//     mirror.example.net/pub/gnu/<pkg>/<file> in 12 clusters (and the
//     www.mirror.example.net alias of the mirror in some);
//   - an alias pair: www.docs.example.com and docs.example.com with the
//     same paths in 11 clusters;
//   - a coincidental pair: shop-a.com and shop-b.org, whose error pages
//     at unrelated paths fall in 10 clusters;
//   - a pair below the threshold: two blogs sharing 4 clusters.
func mirrorClusters() [][]string {
	var cs [][]string
	for i := range 12 {
		host := "mirror.example.net"
		if i%3 == 0 {
			host = "www.mirror.example.net"
		}
		cs = append(cs, []string{
			fmt.Sprintf("https://ftp.gnu.org/gnu/pkg%d/README.html", i),
			fmt.Sprintf("http://%s/pub/gnu/pkg%d/README.html", host, i),
		})
	}
	for i := range 11 {
		cs = append(cs, []string{
			fmt.Sprintf("https://www.docs.example.com/guide/ch%d.html", i),
			fmt.Sprintf("https://docs.example.com/guide/ch%d.html?utm_source=x", i),
		})
	}
	for i := range 10 {
		cs = append(cs, []string{
			fmt.Sprintf("https://shop-a.com/item/%d", i),
			fmt.Sprintf("https://shop-b.org/product?id=%d", 100+i),
			fmt.Sprintf("https://shop-b.org/p/%d/detail", 200+i),
		})
	}
	for i := range 4 {
		cs = append(cs, []string{
			fmt.Sprintf("https://blog-a.com/post/%d", i),
			fmt.Sprintf("https://blog-b.com/post/%d", i),
		})
	}
	cs = append(cs, []string{"https://lonely.com/x"}, []string{"not a url", "ftp://x/y"})
	return cs
}

func TestMirrors(t *testing.T) {
	got := Mirrors(mirrorClusters(), 0)
	want := []MirrorPair{
		{A: "ftp.gnu.org", B: "mirror.example.net", Kind: Mirror, Shared: 12, Confirmed: 1, LastArc: 1},
		{A: "docs.example.com", B: "www.docs.example.com", Kind: Alias, Shared: 11, Confirmed: 1, LastArc: 1},
		{A: "shop-a.com", B: "shop-b.org", Kind: Unconfirmed, Shared: 10, Confirmed: 0, LastArc: 0},
	}
	if len(got) != len(want) {
		t.Fatalf("Mirrors = %+v, want %+v", got, want)
	}
	for i := range want {
		// Bloom false positives are possible but at 1% and these few
		// items, a whole cluster's worth is not expected.
		if got[i] != want[i] {
			t.Errorf("Mirrors[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	// With a threshold of 4 the blogs pair, and they end in the same paths.
	low := Mirrors(mirrorClusters(), 4)
	var blogs *MirrorPair
	for i := range low {
		if low[i].A == "blog-a.com" {
			blogs = &low[i]
		}
	}
	if blogs == nil || blogs.Kind != Mirror || blogs.Shared != 4 {
		t.Errorf("Mirrors(minShared 4) blog pair = %+v, want a mirror sharing 4", blogs)
	}
	var b bytes.Buffer
	if err := WriteMirrors(&b, got); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"ftp.gnu.org", "mirror", "alias", "unconfirmed", "1.00"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("WriteMirrors output lacks %q:\n%s", s, b.String())
		}
	}
}

func TestMirrorKindString(t *testing.T) {
	for k, want := range map[MirrorKind]string{Unconfirmed: "unconfirmed", Mirror: "mirror", Alias: "alias", 7: "MirrorKind(7)"} {
		if got := k.String(); got != want {
			t.Errorf("MirrorKind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}

func TestSuffixItem(t *testing.T) {
	tests := []struct {
		n          int
		path, want string
	}{
		{4, "/a/b/c/d/e/f.html", "3|c/d/e/f.html"},
		{1, "/a/b/c/d/e/f.html", "3|f.html"},
		{4, "/a/b", "3|a/b"},
		{4, "/", "3|"},
		{1, "/a/", "3|"},
	}
	for _, tt := range tests {
		if got := suffixItem(3, tt.n, tt.path); got != tt.want {
			t.Errorf("suffixItem(3, %d, %q) = %q, want %q", tt.n, tt.path, got, tt.want)
		}
	}
}

func TestEvolution(t *testing.T) {
	u := func(s string) string { return "https://h.com/" + s }
	before := [][]string{
		{u("a"), u("b"), u("c"), u("d")}, // size 4
		{u("e"), u("f")},                 // size 2
		{u("g")},                         // size 1
		{u("h"), u("i")},                 // size 2
	}
	after := [][]string{
		{u("a"), u("b"), u("x")}, // a, b stay together, x joins
		{u("c")},                 // c splits off; d is gone
		{u("e"), u("f")},         // unchanged
		{u("g"), u("h")},         // h joins g; i is gone
	}
	// Hand-computed: the gone cluster of after is {d, i} (size 2).
	//  a, b: C1 = {a,b,c,d}, C2 = {a,b,x}: ∩ 2, Φ 2/4, Ψ 2/5, Φr 2/3.
	//  c:    C2 = {c}: ∩ 1, Φ 1/4, Ψ 1/4, Φr 1.
	//  d:    C2 = {d, i}: ∩ 1, Φ 1/4, Ψ 1/5, Φr 1/2.
	//  e, f: Φ 1, Ψ 1, Φr 1.
	//  h:    C1 = {h,i}, C2 = {g,h}: ∩ 1, Φ 1/2, Ψ 1/3, Φr 1/2.
	//  i:    C2 = {d, i}: ∩ 1, Φ 1/2, Ψ 1/3, Φr 1/2.
	//  g:    C1 = {g}, C2 = {g,h}: Φ 1, Ψ 1/2, Φr 1/2.
	want := []EvolutionRow{
		{Range: SizeRange{1, 1}, Clusters: 1, URLs: 1, Phi: 1, Psi: 0.5, ReversePhi: 0.5},
		{Range: SizeRange{2, 2}, Clusters: 2, URLs: 4, Gone: 1,
			Phi: (1 + 1 + 0.5 + 0.5) / 4, Psi: (1 + 1 + 1.0/3 + 1.0/3) / 4, ReversePhi: (1 + 1 + 0.5 + 0.5) / 4},
		{Range: SizeRange{3, 4}, Clusters: 1, URLs: 4, Gone: 1,
			Phi: (0.5 + 0.5 + 0.25 + 0.25) / 4, Psi: (0.4 + 0.4 + 0.25 + 0.2) / 4, ReversePhi: (2.0/3 + 2.0/3 + 1 + 0.5) / 4},
	}
	got := Evolution(before, after)
	if len(got) != len(want) {
		t.Fatalf("Evolution = %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Range != w.Range || g.Clusters != w.Clusters || g.URLs != w.URLs || g.Gone != w.Gone ||
			math.Abs(g.Phi-w.Phi) > 1e-12 || math.Abs(g.Psi-w.Psi) > 1e-12 || math.Abs(g.ReversePhi-w.ReversePhi) > 1e-12 {
			t.Errorf("Evolution[%d] = %+v, want %+v", i, g, w)
		}
		if g.Psi > g.Phi {
			t.Errorf("Evolution[%d]: Psi %.3f > Phi %.3f", i, g.Psi, g.Phi)
		}
	}
	// An unchanged snapshot has every coefficient 1; URLs are compared in
	// canonical form.
	same := [][]string{{"https://H.com/a", "https://h.com/b#frag"}, {"https://h.com/c"}}
	for _, r := range EvolutionRanges(before[:0], nil, FetterlyRanges()) {
		t.Errorf("EvolutionRanges(empty) row %+v, want none", r)
	}
	for _, r := range EvolutionRanges(same, [][]string{{"https://h.com/b", "https://h.com/a"}, {"https://h.com/c"}}, FetterlyRanges()) {
		if r.Phi != 1 || r.Psi != 1 || r.ReversePhi != 1 || r.Gone != 0 {
			t.Errorf("unchanged snapshot row %+v, want coefficients 1", r)
		}
	}
	var b bytes.Buffer
	if err := WriteEvolution(&b, got); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"sizes", "3-4", "0.375"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("WriteEvolution output lacks %q:\n%s", s, b.String())
		}
	}
}

func TestSizeRangeString(t *testing.T) {
	for r, want := range map[SizeRange]string{{1, 1}: "1", {3, 4}: "3-4", {17, 0}: "17+"} {
		if got := r.String(); got != want {
			t.Errorf("SizeRange%v.String() = %q, want %q", [2]int{r.Min, r.Max}, got, want)
		}
	}
}
