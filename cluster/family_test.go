package cluster

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// sampleWords returns the words of the embedded sample's pages, in order,
// their canonical text as the signer sees it.
func sampleWords(t testing.TB) []string {
	t.Helper()
	var words []string
	seen := map[string]bool{}
	for d, err := range sample.Docs() {
		if err != nil {
			t.Fatal(err)
		}
		if seen[sample.Page(d.ID)] {
			continue // one release of each page: the families must differ
		}
		seen[sample.Page(d.ID)] = true
		r, err := page.Signer{}.Sign(d.Body, "text/html")
		if err != nil {
			t.Fatal(err)
		}
		words = append(words, strings.Fields(r.Doc.Text)...)
	}
	return words
}

// family is a planted near-duplicate family: its members' URLs and
// signatures, member 0 the original.
type family struct {
	urls []string
	sigs [][]byte
}

// plantFamilies cuts n disjoint runs of size words out of the sample's
// text and makes each a family of size members: the run, and copies of it
// with a fraction edit of its words replaced by words drawn from the whole
// text (seeded).
func plantFamilies(t testing.TB, n, members, size int, edit float64, seed uint64) []family {
	t.Helper()
	words := sampleWords(t)
	if n*size > len(words) {
		t.Fatalf("%d families of %d words need %d words, the sample has %d", n, size, n*size, len(words))
	}
	r := rand.New(rand.NewPCG(seed, seed+1))
	fams := make([]family, n)
	for f := range fams {
		base := words[f*size : (f+1)*size]
		for m := range members {
			w := append([]string(nil), base...)
			if m > 0 {
				for range int(edit * float64(size)) {
					w[r.IntN(len(w))] = words[r.IntN(len(words))]
				}
			}
			res, err := page.Signer{}.Sign([]byte(strings.Join(w, " ")), "text/plain")
			if err != nil {
				t.Fatal(err)
			}
			enc, err := res.Sig.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			fams[f].urls = append(fams[f].urls, fmt.Sprintf("https://family.example/f%d_%d", f, m))
			fams[f].sigs = append(fams[f].sigs, enc)
		}
	}
	return fams
}

// familyOrders are ingest orders of planted families: each family's
// members in the order of perm, family after family, or all pages of all
// families shuffled (seeded), one page a call or all in one batch.
var familyOrders = []struct {
	name    string
	perm    []int // nil: shuffled
	oneCall bool
}{
	{"012", []int{0, 1, 2}, false}, {"021", []int{0, 2, 1}, false}, {"102", []int{1, 0, 2}, false},
	{"120", []int{1, 2, 0}, false}, {"201", []int{2, 0, 1}, false}, {"210", []int{2, 1, 0}, false},
	{"shuffled", nil, false}, {"shuffled one batch", nil, true},
}

// splitFamilies ingests fams into s in the order and returns how many
// families end in more than one group.
func splitFamilies(t *testing.T, s *Service, fams []family, perm []int, oneCall bool, seed uint64) int {
	t.Helper()
	var pages []client.Page
	for _, f := range fams {
		for _, m := range perm {
			pages = append(pages, client.Page{URL: f.urls[m], Signature: f.sigs[m]})
		}
	}
	if perm == nil {
		for _, f := range fams {
			for m := range f.urls {
				pages = append(pages, client.Page{URL: f.urls[m], Signature: f.sigs[m]})
			}
		}
		r := rand.New(rand.NewPCG(seed, 7))
		r.Shuffle(len(pages), func(i, j int) { pages[i], pages[j] = pages[j], pages[i] })
	}
	if oneCall {
		mustIngest(t, s, pages...)
	} else {
		for _, p := range pages {
			mustIngest(t, s, p)
		}
	}
	split := 0
	for _, f := range fams {
		res, err := s.Lookup(f.urls)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res[1:] {
			if r.Group != res[0].Group {
				split++
				break
			}
		}
	}
	return split
}

// TestPlantedFamiliesOneGroup: 40 families of a page and two copies with
// 4 % of their words replaced, every pair of which the decision calls
// duplicates (as winnow compare does), end each in one group whatever
// the ingest order. A service that drops word sequences verifies by
// min-hash Jaccard alone and splits them (logged, the figure of
// docs/reliability.md).
func TestPlantedFamiliesOneGroup(t *testing.T) {
	fams := plantFamilies(t, 40, 3, 350, 0.04, 1)
	d := similarity.Decision{}
	for _, f := range fams {
		for i := range f.sigs {
			for j := range i {
				var a, b similarity.Signature
				if a.UnmarshalBinary(f.sigs[i]) != nil || b.UnmarshalBinary(f.sigs[j]) != nil {
					t.Fatal("planted signature does not decode")
				}
				if v := d.Decide(&a, &b); !v.Duplicate {
					t.Fatalf("planted %s and %s are no duplicates: %s", f.urls[i], f.urls[j], v.Explain())
				}
			}
		}
	}
	for i, o := range familyOrders {
		t.Run(o.name, func(t *testing.T) {
			if n := splitFamilies(t, newTestService(t, Options{}), fams, o.perm, o.oneCall, uint64(i)); n != 0 {
				t.Errorf("%d of %d families split over several groups", n, len(fams))
			}
			n := splitFamilies(t, newTestService(t, Options{DropSeq: true}), fams, o.perm, o.oneCall, uint64(i))
			t.Logf("order %s: DropSeq splits %d of %d families", o.name, n, len(fams))
		})
	}
}
