package cluster

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/winnow-search/winnow/cluster/client"
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

// TestIndexModel applies random adds and removes to an index, with group
// IDs of groupID's form and others, and compares its candidates with a
// brute-force scan of the groups it should hold.
func TestIndexModel(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	randSig := func() *similarity.Signature {
		// Few values, so that groups share keys often.
		s := &similarity.Signature{Tokens: 100, MinHash: make([]uint16, 84), Lengths: []uint32{uint32(r.IntN(9)), 3}}
		for b := range simhashBlocks {
			s.Simhash |= uint64(r.IntN(3)) << (16 * b)
		}
		s.Simhash ^= 1 << r.IntN(64)
		for i := range s.MinHash {
			s.MinHash[i] = uint16(r.IntN(2))
		}
		for range r.IntN(4) {
			s.Fingerprints = append(s.Fingerprints, uint32(r.IntN(20)))
		}
		return s
	}
	const gate = 20
	x := newIndex(nil, 0.5, gate, simhashReach, 0)
	model := map[string]*similarity.Signature{}
	keySet := func(s *similarity.Signature) (block, other map[uint32]bool) {
		block, other = map[uint32]bool{}, map[uint32]bool{}
		for b := range simhashBlocks {
			block[tableKey(b, s.Simhash>>(16*b)&0xffff)] = true
		}
		for i, h := range appendBandHashes(nil, s) {
			other[tableKey(simhashBlocks+i, uint64(h))] = true
		}
		for _, f := range s.Fingerprints {
			other[tableKey(fingerprintTable, uint64(f))] = true
		}
		return block, other
	}
	id := func(i int) string {
		if i%5 == 0 {
			return "custom-" + strconv.Itoa(i)
		}
		return groupID(uint64(i))
	}
	for op := range 4000 {
		g := id(1 + r.IntN(400))
		if r.IntN(3) == 0 {
			x.remove(g)
			delete(model, g)
		} else {
			s := randSig()
			x.add(g, s)
			model[g] = s
		}
		if x.len() != len(model) {
			t.Fatalf("op %d: len = %d, want %d", op, x.len(), len(model))
		}
		if op%50 != 0 {
			continue
		}
		probe := randSig()
		var got []string
		x.candidates(probe, func(id string) { got = append(got, id) })
		slices.Sort(got)
		pb, po := keySet(probe)
		var want []string
		for g, s := range model {
			d := bits.OnesCount64(s.Simhash ^ probe.Simhash)
			b, o := keySet(s)
			shareBlock, shareOther := false, false
			for k := range b {
				shareBlock = shareBlock || pb[k]
			}
			for k := range o {
				shareOther = shareOther || po[k]
			}
			if shareBlock && d <= simhashReach || shareOther && d <= gate {
				want = append(want, g)
			}
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("op %d: candidates = %q, want %q", op, got, want)
		}
	}
	if x.npost*postsLoadDen > len(x.posts)*postsLoadNum {
		t.Errorf("posts load %d/%d over the limit", x.npost, len(x.posts))
	}
	words := 0
	for _, s := range model {
		words += len(s.Lengths) + len(s.MinHash)/bandRows + len(s.Fingerprints)
	}
	if len(x.arena)-x.dead != words || len(x.arena) > 2*words+4096 {
		t.Errorf("arena: %d words, %d dead, want %d live and compaction", len(x.arena), x.dead, words)
	}
}

func TestParseGroupID(t *testing.T) {
	tests := []struct {
		id   string
		want uint64
		ok   bool
	}{
		{"g1", 1, true},
		{"gz", 35, true},
		{groupID(1 << 40), 1 << 40, true},
		{"g0", 0, false},
		{"g01", 0, false},
		{"gA", 0, false},
		{"g", 0, false},
		{"x1", 0, false},
		{"g-1", 0, false},
		{groupID(1 << 63), 0, false},
	}
	for _, tt := range tests {
		n, ok := parseGroupID(tt.id)
		if n != tt.want || ok != tt.ok {
			t.Errorf("parseGroupID(%q) = %d, %v, want %d, %v", tt.id, n, ok, tt.want, tt.ok)
		}
	}
}
