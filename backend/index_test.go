package backend

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/winnow-search/winnow/backend/client"
	"github.com/winnow-search/winnow/similarity"
)

// driftPages returns n pages, a third of them drifted copies of earlier
// ones: 8 to 30 of the 84 min-hashes and up to 8 simhash bits changed, so
// many copies sit near the verification threshold and share few bands.
func driftPages(t testing.TB, n int, seed uint64) []client.Page {
	r := rand.New(rand.NewPCG(seed, 2))
	var sigs []*similarity.Signature
	pages := make([]client.Page, n)
	for i := range pages {
		var s *similarity.Signature
		if len(sigs) > 0 && r.IntN(3) == 0 {
			o := sigs[r.IntN(len(sigs))]
			c := *o
			c.MinHash = slices.Clone(o.MinHash)
			for range 8 + r.IntN(23) {
				c.MinHash[r.IntN(84)] = uint16(r.Uint32())
			}
			for range r.IntN(9) {
				c.Simhash ^= 1 << r.IntN(64)
			}
			c.Supershingles = nil
			s = &c
		} else {
			s = synthSig(r)
			sigs = append(sigs, s)
		}
		enc, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		pages[i] = client.Page{URL: "https://d.example/page/" + strconv.Itoa(i), Signature: enc, Popularity: r.Float64()}
	}
	return pages
}

// TestSimhashReachRecall measures what the simhash reach costs: the same
// pages are ingested with the reach (simhashReach) and with every simhash
// block hit within the decision's gate a candidate, as before the reach,
// and the pages that joined a group in one run and not in the other are
// counted, on the LLVM sample and on drifted synthetic copies.
func TestSimhashReachRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests 20,000 pages twice")
	}
	llvm := signedSample(t)
	sample := make([]client.Page, len(llvm))
	for i, p := range llvm {
		sample[i] = client.Page{URL: p.url, Signature: p.sig}
	}
	for _, tc := range []struct {
		name  string
		pages []client.Page
		limit float64 // largest fraction of pages that may differ
	}{
		{"llvm", sample, 0},
		{"drift", driftPages(t, 20_000, 3), 0.005},
	} {
		t.Run(tc.name, func(t *testing.T) {
			joined := func(reach int) map[string]bool {
				s := newTestService(t, Options{})
				s.reach, s.idx.reach = reach, s.gate()
				if reach >= 0 {
					s.idx.reach = reach
				}
				out := map[string]bool{}
				for start := 0; start < len(tc.pages); start += 1000 {
					res := mustIngest(t, s, tc.pages[start:min(start+1000, len(tc.pages))]...)
					for _, r := range res {
						out[r.URL] = r.Status == client.StatusJoined || r.Status == client.StatusWinnerChanged
					}
				}
				return out
			}
			with, without := joined(simhashReach), joined(-1)
			lost, gained, n := 0, 0, 0
			for u, j := range without {
				if j {
					n++
				}
				switch {
				case j && !with[u]:
					lost++
				case !j && with[u]:
					gained++
				}
			}
			t.Logf("%d pages, %d joined a group without the reach; with reach %d: %d fewer joins, %d other joins", len(without), n, simhashReach, lost, gained)
			if d := float64(lost+gained) / float64(len(without)); d > tc.limit {
				t.Errorf("pages that differ = %.4f, want <= %.4f", d, tc.limit)
			}
		})
	}
}
