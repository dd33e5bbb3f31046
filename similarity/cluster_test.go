package similarity

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestUnionFind(t *testing.T) {
	u := NewUnionFind(6)
	u.Union(0, 1)
	u.Union(2, 3)
	if !u.Union(1, 3) || u.Union(0, 2) {
		t.Fatal("Union reported a wrong merge")
	}
	if !u.Same(0, 3) || u.Same(0, 4) || u.Size(2) != 4 || u.Size(5) != 1 {
		t.Errorf("sets wrong: Same(0,3)=%v Same(0,4)=%v Size(2)=%d Size(5)=%d", u.Same(0, 3), u.Same(0, 4), u.Size(2), u.Size(5))
	}
}

// clRanked returns 50 realistic signatures of result pages: 40 distinct
// pages of 800 words drawn from the real vocabulary and 10 near-copies
// (3% of words edited) of pages 0, 3, 6, ..., 27, appended in that order.
func clRanked(tb testing.TB) []*Signature {
	return clRankedEdited(tb, func(int) float64 { return 0.03 })
}

// clRankedMirrors is clRanked with the 10 copies exact or near-exact, as
// mirrors in search results are: copy i has i/2000 of its words edited
// (0 to 0.45%).
func clRankedMirrors(tb testing.TB) []*Signature {
	return clRankedEdited(tb, func(i int) float64 { return float64(i) / 2000 })
}

// clRankedEdited returns the signatures of clRanked with copy i edited at
// the rate rate(i).
func clRankedEdited(tb testing.TB, rate func(int) float64) []*Signature {
	pool := append(lcsReadWords(tb, "gpl-3.txt", 5000), lcsReadWords(tb, "apache-2.0.txt", 1500)...)
	r := rand.New(rand.NewPCG(15, 16))
	var docs [][]string
	for range 40 {
		ws := make([]string, 800)
		for i := range ws {
			ws[i] = pool[r.IntN(len(pool))]
		}
		docs = append(docs, ws)
	}
	sigs := make([]*Signature, 0, 50)
	for _, ws := range docs {
		sigs = append(sigs, clSign(ws))
	}
	for i := range 10 {
		sigs = append(sigs, clSign(lcsEditWords(r, docs[3*i], rate(i), pool)))
	}
	return sigs
}

func clusterIndexes(cs []Cluster) [][]int {
	var out [][]int
	for _, c := range cs {
		var m []int
		for _, mb := range c.Members {
			m = append(m, mb.Index)
		}
		out = append(out, m)
	}
	return out
}

func TestClusterRanked(t *testing.T) {
	sigs := clRanked(t)
	sigs = append(sigs, nil, &Signature{})
	cs := ClusterRanked(sigs, Decision{}, RankedOptions{})
	if len(cs) != 42 {
		t.Fatalf("ClusterRanked gave %d clusters, want 42: %v", len(cs), clusterIndexes(cs))
	}
	for i := range 10 {
		c := cs[3*i]
		if got, want := clusterIndexes(cs[3*i : 3*i+1])[0], []int{3 * i, 40 + i}; !slices.Equal(got, want) || c.Winner != 3*i {
			t.Errorf("cluster %d = %v winner %d, want %v winner %d", 3*i, got, c.Winner, want, 3*i)
		}
		if v := c.Members[1].Verdict; !v.Duplicate || !strings.HasPrefix(v.Explain(), "duplicate: ") {
			t.Errorf("member verdict = %s, want duplicate", v.Explain())
		}
	}
	// Mirrors are accepted without LCS; 3%-edited copies are verified.
	if v := cs[0].Members[1].Verdict; v.Step != StepVerify {
		t.Errorf("3%%-edited copy decided at step %v, want verify: %s", v.Step, v.Explain())
	}
	ms := clRankedMirrors(t)
	mcs := ClusterRanked(ms, Decision{}, RankedOptions{})
	if len(mcs) != 40 {
		t.Fatalf("ClusterRanked(mirrors) gave %d clusters, want 40: %v", len(mcs), clusterIndexes(mcs))
	}
	for i := range 10 {
		c := mcs[3*i]
		if got, want := clusterIndexes(mcs[3*i : 3*i+1])[0], []int{3 * i, 40 + i}; !slices.Equal(got, want) {
			t.Errorf("mirror cluster %d = %v, want %v", 3*i, got, want)
		}
		if v := c.Members[1].Verdict; !v.Duplicate || v.Probability < 0.9 {
			t.Errorf("mirror verdict = %v with probability %.2f, want a duplicate of probability >= 0.9: %s", v.Duplicate, v.Probability, v.Explain())
		}
	}
	// The hint makes the copy the winner.
	w := make([]bool, len(sigs))
	w[41] = true
	cs = ClusterRanked(sigs, Decision{}, RankedOptions{Winners: w})
	if c := cs[3]; c.Winner != 41 || c.Members[0].Index != 41 || c.Members[1].Index != 3 {
		t.Errorf("hinted cluster = winner %d members %v, want winner 41 members [41 3]", c.Winner, clusterIndexes(cs[3:4]))
	}
}

// synthSet returns n synthetic signatures of which about frac are
// near-copies (Jaccard about 0.9) of an earlier one, and their keys.
func synthSet(seed uint64, n int, frac float64) ([]*Signature, []string) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	sigs := make([]*Signature, n)
	keys := make([]string, n)
	for i := range sigs {
		if i > 0 && r.Float64() < frac {
			sigs[i] = synthCopy(r, sigs[r.IntN(i)], 3, 0.05)
		} else {
			sigs[i] = synthSig(r)
		}
		keys[i] = fmt.Sprintf("doc%08d", r.Uint32())
	}
	return sigs, keys
}

// keyClusters returns the clusters as sorted key lists with their IDs.
func keyClusters(cs []Cluster, keys []string) []string {
	var out []string
	for _, c := range cs {
		var ks []string
		for _, m := range c.Members {
			ks = append(ks, keys[m.Index])
		}
		if keys[c.Winner] != ks[0] {
			out = append(out, "winner not first")
		}
		slices.Sort(ks)
		out = append(out, fmt.Sprintf("%016x %s", c.ID, strings.Join(ks, ",")))
	}
	slices.Sort(out)
	return out
}

func TestBatchClusterBruteForce(t *testing.T) {
	sigs, keys := synthSet(17, 1500, 0.2)
	d := Decision{}
	u := NewUnionFind(len(sigs))
	for i := range sigs {
		for j := range i {
			if d.Decide(sigs[i], sigs[j]).Duplicate {
				u.Union(i, j)
			}
		}
	}
	groups := map[int][]string{}
	for i := range sigs {
		if u.Size(i) > 1 {
			groups[u.Find(i)] = append(groups[u.Find(i)], keys[i])
		}
	}
	var want []string
	for _, g := range groups {
		slices.Sort(g)
		want = append(want, fmt.Sprintf("%016x %s", fnv64(g[0]), strings.Join(g, ",")))
	}
	slices.Sort(want)
	got := keyClusters(BatchCluster(sigs, d, BatchOptions{Keys: keys}), keys)
	if !slices.Equal(got, want) {
		t.Errorf("BatchCluster: %d clusters, brute force %d; first differences:\n%v\n%v", len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
	}
	if len(want) < 100 {
		t.Errorf("only %d planted clusters found", len(want))
	}
}

func TestBatchClusterDeterministic(t *testing.T) {
	sigs, keys := synthSet(19, 3000, 0.3)
	want := keyClusters(BatchCluster(sigs, Decision{}, BatchOptions{Keys: keys}), keys)
	r := rand.New(rand.NewPCG(21, 22))
	perm := r.Perm(len(sigs))
	s2, k2 := make([]*Signature, len(sigs)), make([]string, len(sigs))
	for i, p := range perm {
		s2[i], k2[i] = sigs[p], keys[p]
	}
	cs := BatchCluster(s2, Decision{}, BatchOptions{Keys: k2})
	if got := keyClusters(cs, k2); !slices.Equal(got, want) {
		t.Errorf("shuffled input gave %d clusters, want the same %d", len(got), len(want))
	}
	for i := 1; i < len(cs); i++ {
		if k2[cs[i-1].Winner] >= k2[cs[i].Winner] {
			t.Fatalf("clusters not sorted by winner key at %d", i)
		}
	}
}

func BenchmarkClusterRanked(b *testing.B) {
	sigs := clRanked(b)
	b.ReportAllocs()
	for b.Loop() {
		if cs := ClusterRanked(sigs, Decision{}, RankedOptions{}); len(cs) != 40 {
			b.Fatalf("%d clusters, want 40", len(cs))
		}
	}
}

// BenchmarkClusterRankedMirrors is BenchmarkClusterRanked with the 10
// duplicates exact or near-exact copies (clRankedMirrors), which the
// strong-accept test decides without LCS.
func BenchmarkClusterRankedMirrors(b *testing.B) {
	sigs := clRankedMirrors(b)
	b.ReportAllocs()
	for b.Loop() {
		if cs := ClusterRanked(sigs, Decision{}, RankedOptions{}); len(cs) != 40 {
			b.Fatalf("%d clusters, want 40", len(cs))
		}
	}
}

// BenchmarkClusterRankedCheap measures the candidate tests alone: 50
// distinct pages, no verification.
func BenchmarkClusterRankedCheap(b *testing.B) {
	sigs := clRanked(b)[:40]
	b.ReportAllocs()
	for b.Loop() {
		ClusterRanked(sigs, Decision{}, RankedOptions{})
	}
}

func BenchmarkBatchCluster1M(b *testing.B) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	sigs, keys := synthSet(23, n, 0.1)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	var clusters int
	for b.Loop() {
		clusters = len(BatchCluster(sigs, Decision{}, BatchOptions{Keys: keys}))
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(float64(after.HeapSys)/(1<<20), "heap-sys-MB")
	b.ReportMetric(float64(before.HeapAlloc)/(1<<20), "input-MB")
	b.ReportMetric(float64(clusters), "clusters")
}

// TestBatchWinnerVerified builds a chain A~B, B~C with A and C apart:
// single link puts the three together, WinnerVerified keeps C out of A's
// cluster.
func TestBatchWinnerVerified(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	a := synthSig(r)
	b := &Signature{Tokens: a.Tokens, Bytes: a.Bytes, Simhash: a.Simhash, MinHash: slices.Clone(a.MinHash)}
	for i := range 17 {
		b.MinHash[i]++
	}
	c := &Signature{Tokens: a.Tokens, Bytes: a.Bytes, Simhash: a.Simhash, MinHash: slices.Clone(b.MinHash)}
	for i := 17; i < 34; i++ {
		c.MinHash[i]++
	}
	synthSupershingles(b)
	synthSupershingles(c)
	sigs := []*Signature{a, b, c}
	keys := []string{"a", "b", "c"}
	if cs := BatchCluster(sigs, Decision{}, BatchOptions{Keys: keys}); len(cs) != 1 || len(cs[0].Members) != 3 {
		t.Fatalf("single link: %+v, want one cluster of 3", cs)
	}
	cs := BatchCluster(sigs, Decision{}, BatchOptions{Keys: keys, WinnerVerified: true})
	if len(cs) != 1 || len(cs[0].Members) != 2 || cs[0].Winner != 0 || cs[0].Members[1].Index != 1 {
		t.Fatalf("winner verified: %+v, want {a, b} alone (c does not match a)", cs)
	}
	if !cs[0].Members[1].Verdict.Duplicate {
		t.Errorf("member b's verdict against a: %s", cs[0].Members[1].Verdict.Explain())
	}
}

// textSet returns signatures of real text: windows of the testdata
// licences and manuals, each with near-duplicates (a few percent of the
// words edited), looser copies (a third edited) that only the LCS
// verification can judge, and unrelated windows.
func textSet(tb testing.TB) ([]*Signature, []string) {
	words := lcsAllWords(tb, "gpl-3.txt", "gpl-2.txt", "lgpl-2.1.txt", "gfdl-1.3.txt", "mpl-2.0.txt", "apache-2.0.txt")
	r := rand.New(rand.NewPCG(23, 24))
	var sigs []*Signature
	var keys []string
	add := func(key string, ws []string) {
		sig := Sign(Input{Text: []byte(strings.Join(ws, " ")), Tokens: ws}, Options{})
		sigs = append(sigs, &sig)
		keys = append(keys, key)
	}
	for w := 0; w+300 <= len(words); w += 300 {
		base := words[w : w+300]
		add(fmt.Sprintf("w%05d", w), base)
		for v := range 3 {
			add(fmt.Sprintf("w%05d-near%d", w, v), lcsEditWords(r, base, 0.03, words))
		}
		add(fmt.Sprintf("w%05d-loose", w), lcsEditWords(r, base, 0.3, words))
	}
	return sigs, keys
}

// TestBatchClusterBatchesAndWorkers checks that the clusters of real text
// do not depend on how pairs are batched, and that neither the clusters
// nor the stage counts depend on the number of workers.
func TestBatchClusterBatchesAndWorkers(t *testing.T) {
	sigs, keys := textSet(t)
	for _, wv := range []bool{false, true} {
		t.Run(fmt.Sprintf("winner-verified=%v", wv), func(t *testing.T) {
			testBatchesAndWorkers(t, sigs, keys, wv)
		})
	}
}

func testBatchesAndWorkers(t *testing.T, sigs []*Signature, keys []string, winnerVerified bool) {
	run := func(batch, workers int) ([]string, BatchStats) {
		var st BatchStats
		cs := BatchCluster(sigs, Decision{}, BatchOptions{Keys: keys, Workers: workers, Stats: &st, batch: batch, WinnerVerified: winnerVerified})
		var out []string
		for _, c := range cs {
			line := keys[c.Winner]
			for _, m := range c.Members[1:] {
				line += " " + keys[m.Index] + "=" + m.Verdict.Explain()
			}
			out = append(out, line)
		}
		st.CandidateTime, st.VerifyTime, st.ClusterTime = 0, 0, 0
		return out, st
	}
	want, wantSt := run(0, 1)
	// The model decision accepts without the LCS only near-exact mirrors
	// (Jaccard >= 0.955), which this set of 3 %-edited copies lacks.
	if len(want) < 50 || wantSt.Aligned == 0 || wantSt.Length == 0 {
		t.Fatalf("%d clusters, stats %+v: want clusters, pairs settled by the length and pairs aligned", len(want), wantSt)
	}
	for _, c := range []struct{ batch, workers int }{{0, 4}, {7, 1}, {7, 3}, {1, 2}} {
		got, st := run(c.batch, c.workers)
		if !slices.Equal(got, want) {
			t.Errorf("batch %d, %d workers: clusters differ from one worker's", c.batch, c.workers)
		}
		if c.batch == 0 && st != wantSt {
			t.Errorf("%d workers: stats %+v, one worker %+v", c.workers, st, wantSt)
		}
	}
}

func TestSortEntries(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	byKeyRank := func(x, y entry) int {
		if c := cmp.Compare(x.key, y.key); c != 0 {
			return c
		}
		return cmp.Compare(x.rank, y.rank)
	}
	var tmp []entry
	for _, n := range []int{0, 1, 100, 255, 256, 5000} {
		for _, keyBits := range []int{16, 64} { // a simhash block, a hash
			in := make([]entry, n)
			for i := range in {
				in[i] = entry{key: r.Uint64() >> (64 - keyBits) % 97, rank: int32(i)} // rank order, repeated keys
				if keyBits == 64 {
					in[i].key = r.Uint64()&^0xff00 | uint64(i%3)<<62
				}
			}
			want := slices.Clone(in)
			slices.SortFunc(want, byKeyRank)
			got := slices.Clone(in)
			tmp = sortEntries(got, tmp)
			if !slices.Equal(got, want) {
				t.Errorf("sortEntries(%d rows, %d-bit keys) is not sorted by key, then rank", n, keyBits)
			}
		}
	}
}

// TestBatchClusterCopies checks that copies of signatures (equal
// signatures under other keys) join exactly where their originals are:
// each cluster of the set gains its members' copies, a document alone
// gets a cluster with its copy, the copies' verdicts are their
// originals', and no copy reaches the tables.
func TestBatchClusterCopies(t *testing.T) {
	sigs, keys := textSet(t)
	for _, wv := range []bool{false, true} {
		var st0 BatchStats
		orig := BatchCluster(sigs, Decision{}, BatchOptions{Keys: keys, WinnerVerified: wv, Stats: &st0})
		doubled, dkeys := slices.Clone(sigs), slices.Clone(keys)
		for i, s := range sigs {
			c := *s
			c.Seq, c.MinHash = slices.Clone(s.Seq), slices.Clone(s.MinHash)
			doubled, dkeys = append(doubled, &c), append(dkeys, keys[i]+"~copy")
		}
		var st BatchStats
		got := BatchCluster(doubled, Decision{}, BatchOptions{Keys: dkeys, WinnerVerified: wv, Stats: &st})
		if st.Copies != len(sigs) || st0.Copies != 0 {
			t.Fatalf("winner-verified=%v: %d copies, want %d (%d in the set alone, want 0)", wv, st.Copies, len(sigs), st0.Copies)
		}
		if st.Pairs > st0.Pairs+len(sigs) {
			t.Errorf("winner-verified=%v: %d pairs with copies, %d without: copies reached the tables", wv, st.Pairs, st0.Pairs)
		}
		// want: every document's cluster, as the winner's key, and its
		// verdict explained.
		want := make(map[string]string)
		inCluster := make(map[int]bool)
		for _, c := range orig {
			for _, m := range c.Members {
				inCluster[m.Index] = true
				want[keys[m.Index]] = keys[c.Winner] + " " + m.Verdict.Explain()
				v := m.Verdict
				if m.Index == c.Winner {
					v = Decision{}.Decide(sigs[c.Winner], sigs[c.Winner])
				}
				want[keys[m.Index]+"~copy"] = keys[c.Winner] + " " + v.Explain()
			}
		}
		for i := range sigs {
			if !inCluster[i] {
				want[keys[i]] = keys[i] + " " + Verdict{}.Explain()
				want[keys[i]+"~copy"] = keys[i] + " " + Decision{}.Decide(sigs[i], sigs[i]).Explain()
			}
		}
		n := 0
		for _, c := range got {
			for _, m := range c.Members {
				n++
				if g := dkeys[c.Winner] + " " + m.Verdict.Explain(); g != want[dkeys[m.Index]] {
					t.Errorf("winner-verified=%v: %s in %q, want %q", wv, dkeys[m.Index], g, want[dkeys[m.Index]])
				}
			}
		}
		if n != len(doubled) {
			t.Errorf("winner-verified=%v: %d documents in clusters, want all %d (every page matches its copy)", wv, n, len(doubled))
		}
		if st0.Joined == 0 {
			t.Errorf("winner-verified=%v: no candidate pair left unverified as already joined: %+v", wv, st0)
		}
	}
}
