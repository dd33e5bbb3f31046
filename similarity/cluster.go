package similarity

import (
	"cmp"
	"math/bits"
	"runtime"
	"slices"
	"time"

	"github.com/bits-and-blooms/bloom/v3"
	"github.com/winnow-search/winnow/internal/parallel"
)

// Member is one document of a [Cluster].
type Member struct {
	// Index is the document's index in the slice given to the clustering.
	Index int
	// Verdict is the decision of the cluster's winner (as a) against this
	// member (as b). The winner's own entry has a zero Verdict. A member
	// joins a cluster by matching any member (single link), so its
	// verdict against the winner may say "not duplicate"; it then tells
	// why the member is only transitively similar.
	Verdict Verdict
}

// Cluster is a group of near-duplicate documents.
type Cluster struct {
	// ID identifies the cluster independently of input order: the 64-bit
	// FNV-1a hash of the winner's key when keys are given, else the
	// winner's index.
	ID uint64
	// Winner is the index of the document that represents the cluster.
	Winner int
	// Members lists every document of the cluster, the winner first,
	// then in order of rank (ranked) or key (batch).
	Members []Member
}

// RankedOptions are the options of [ClusterRanked]. The zero value is
// ready to use.
type RankedOptions struct {
	// Winners marks documents known to be group winners (e.g. from the
	// cluster service). A cluster with a marked member has the best
	// ranked marked member as its winner. nil or shorter than the list:
	// unmarked.
	Winners []bool
	// Keys are the documents' keys (e.g. canonical URLs), used for the
	// cluster IDs. nil: IDs are winner indexes.
	Keys []string
	// Cache keeps verdicts across calls; nil: none.
	Cache VerdictCache
}

// fnv64 returns the 64-bit FNV-1a hash of s.
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func clusterID(keys []string, winner int) uint64 {
	if keys != nil {
		return fnv64(keys[winner])
	}
	return uint64(winner)
}

// bloomInfo caches what the containment test reads of one Bloom filter:
// its words, m, k, popcount and cardinality estimate, so a pair costs one
// pass over the OR of the words and no method calls.
type bloomInfo struct {
	ok    bool // a filter is present
	words []uint64
	m, k  uint
	x     uint    // popcount
	card  float64 // bloomCardinality(x, m, k)
}

// newBloomInfo returns the bloomInfo of f; its ok is false when f is nil.
func newBloomInfo(f *bloom.BloomFilter) bloomInfo {
	if f == nil {
		return bloomInfo{}
	}
	bi := bloomInfo{ok: true, words: f.BitSet().Words(), m: f.Cap(), k: f.K()}
	bi.x = popcount(bi.words)
	bi.card = bloomCardinality(bi.x, bi.m, bi.k)
	return bi
}

// popcount returns the number of set bits of w.
func popcount(w []uint64) uint {
	n := 0
	for _, v := range w {
		n += bits.OnesCount64(v)
	}
	return uint(n)
}

// orCount returns popcount(a OR b), the shorter slice padded with zeros.
func orCount(a, b []uint64) uint {
	if len(a) > len(b) {
		a, b = b, a
	}
	b2 := b[:len(a)]
	n0, n1, n2, n3 := 0, 0, 0, 0 // four chains for the popcounts
	i := 0
	for ; i+4 <= len(a); i += 4 {
		n0 += bits.OnesCount64(a[i] | b2[i])
		n1 += bits.OnesCount64(a[i+1] | b2[i+1])
		n2 += bits.OnesCount64(a[i+2] | b2[i+2])
		n3 += bits.OnesCount64(a[i+3] | b2[i+3])
	}
	for ; i < len(a); i++ {
		n0 += bits.OnesCount64(a[i] | b2[i])
	}
	return uint(n0+n1+n2+n3) + popcount(b[len(a):])
}

// compatibleInfo reports whether the filters behind a and b can be
// compared bit by bit, as [compatible] does.
func compatibleInfo(a, b *bloomInfo) bool {
	return a.ok && b.ok && a.m == b.m && a.k == b.k
}

// containBoth returns the chance-corrected Bloom containments of a in b
// and of b in a, clamped to [0, 1], as [BloomContainment] estimates them.
func containBoth(a, b *Signature) (ab, ba float64) {
	if !compatible(a.Bloom, b.Bloom) {
		return 0, 0
	}
	ia, ib := newBloomInfo(a.Bloom), newBloomInfo(b.Bloom)
	return containInfo(&ia, &ib)
}

// containInfo is [containBoth] on cached filter data.
func containInfo(a, b *bloomInfo) (ab, ba float64) {
	if !compatibleInfo(a, b) {
		return 0, 0
	}
	union := bloomCardinality(orCount(a.words, b.words), a.m, a.k)
	inter := a.card + b.card - union
	if a.card > 0 {
		ab = min(max(inter/a.card, 0), 1)
	}
	if b.card > 0 {
		ba = min(max(inter/b.card, 0), 1)
	}
	return ab, ba
}

// containPasses reports whether max(containInfo(a, b)) >= t, skipping the
// logarithm when a bound already decides. Since −ln(1−y) >= y, the union
// estimate −(m/k)·ln(1−x/m) is at least x/k for x bits set in A∨B, so the
// intersection estimate is at most ca+cb−x/k; the larger containment is
// the intersection over min(ca, cb). When even that bound (with a margin
// for rounding) is below t·min(ca, cb) the pair fails; this decides
// almost every unrelated pair of web pages, whose filters are sparse.
func containPasses(a, b *bloomInfo, t float64) bool {
	if !compatibleInfo(a, b) {
		return 0 >= t
	}
	xu := orCount(a.words, b.words)
	if t > 0 && t <= 1 && a.card > 0 && b.card > 0 {
		sum := a.card + b.card
		if sum-float64(xu)/float64(a.k)+1e-9*sum < t*min(a.card, b.card) {
			return false
		}
	}
	union := bloomCardinality(xu, a.m, a.k)
	inter := a.card + b.card - union
	var ab, ba float64
	if a.card > 0 {
		ab = min(max(inter/a.card, 0), 1)
	}
	if b.card > 0 {
		ba = min(max(inter/b.card, 0), 1)
	}
	return max(ab, ba) >= t
}

// quickCandidate runs the candidate test of d on (a, b) computing only the
// scores the tests need, cheapest first, and stops at the first test that
// passes. It agrees with the candidate step of [Decision.Decide].
// ia and ib are the Bloom data of a and b (see [newBloomInfo]), or nil to
// have them read from the filters when a containment test needs them: the
// default tests do not, and a popcount of both filters for every pair
// of [BatchCluster]'s tables was 0.6 % of `winnow dedup`'s instructions
// on the Debian crawl.
func (d *Decision) quickCandidate(a, b *Signature, ia, ib *bloomInfo) bool {
	if g := d.gate(); g >= 0 && Hamming(a.Simhash, b.Simhash) > g {
		return false
	}
	for i := range d.candidates() {
		t := d.candidate(i)
		var v float64
		switch t.Method {
		case MethodNone:
			return true
		case MethodLCS, MethodLCSCentral, MethodLCSLocal:
			continue // no LCS in the candidate step: never passes
		case MethodSimhash:
			if float64(Hamming(a.Simhash, b.Simhash)) <= t.Threshold {
				return true
			}
			continue
		case MethodBloom:
			v = max(BloomMatch(a.Bloom, b.Bloom), BloomMatch(b.Bloom, a.Bloom))
		case MethodContainment:
			if ia == nil {
				fa, fb := newBloomInfo(a.Bloom), newBloomInfo(b.Bloom)
				ia, ib = &fa, &fb
			}
			if containPasses(ia, ib, t.Threshold) {
				return true
			}
			continue
		case MethodSupershingles:
			v = float64(SupershingleMatches(a.Supershingles, b.Supershingles))
		case MethodJaccard:
			n := len(a.MinHash)
			if n != len(b.MinHash) || n == 0 {
				break // v = 0 as EstimateJaccard returns
			}
			eq := equalLanes(a.MinHash, b.MinHash)
			// The estimate is at most the raw fraction eq/n; when that is
			// half a value short of the threshold, skip the arithmetic.
			if float64(eq)+0.5 <= t.Threshold*float64(n) {
				continue
			}
			v = jaccardOf(eq, n)
		case MethodFingerprints:
			v = float64(SharedFingerprints(a.Fingerprints, b.Fingerprints))
		}
		if v >= t.Threshold {
			return true
		}
	}
	return false
}

// tooShort reports whether s can never match under d.
func (d *Decision) tooShort(s *Signature) bool {
	return s == nil || s.Empty() || s.Tokens < d.minTokens()
}

// matcher decides pairs for clustering: the cheap candidate test first,
// the full [Decision.Decide] (with its LCS) only for candidate pairs, and
// it keeps the full verdicts so the verdicts against the winners need not
// be computed twice.
type matcher struct {
	d    *Decision
	sigs []*Signature
	// same maps an index to the first index whose signature is equal
	// (see [sameSignatures]); nil: every index is its own. Verdicts are
	// kept under these indexes, as a verdict reads only the signatures.
	same     []int32
	verdicts map[[2]int32]Verdict // full verdicts by (same[a], same[b])
	blooms   []bloomInfo          // Bloom data by index, or nil
	cache    VerdictCache         // verdicts kept across calls, or nil
	workers  int                  // goroutines for prefetch; <= 1: none
	extra    int                  // verdicts computed by prefetch
	seqs     *seqAlignments       // alignments by the pairs' texts, or nil
}

// VerdictCache keeps verdicts across calls of [ClusterRanked] (or hands
// [BatchCluster] those decided elsewhere), keyed by
// the signatures' identity: a proxy that serves the same cached
// signatures query after query then decides each pair (and runs its LCS)
// once. Implementations must be safe for concurrent use; a verdict is
// valid for one Decision, so use one cache per Decision.
type VerdictCache interface {
	Verdict(a, b *Signature) (Verdict, bool)
	SetVerdict(a, b *Signature, v Verdict)
}

// decide is Decide of the pair (i, j) through the verdict cache, taking
// a kept alignment of the same texts when m keeps them.
func (m *matcher) decide(i, j int) Verdict {
	a, b := m.sigs[i], m.sigs[j]
	if m.cache != nil {
		if v, ok := m.cache.Verdict(a, b); ok {
			return v
		}
	}
	var v Verdict
	if m.seqs != nil {
		v = m.d.decide(a, b, m.seqs.prior(i, j), true)
		m.seqs.keep(i, j, &v)
	} else {
		v = m.d.Decide(a, b)
	}
	if m.cache != nil {
		m.cache.SetVerdict(a, b, v)
	}
	return v
}

// match decides the pair (i, j), i being the better ranked document.
func (m *matcher) match(i, j int) bool {
	r := m.evaluate(i, j)
	m.record(i, j, &r)
	return r.dup
}

// pairResult is the outcome of one pair for the clustering.
type pairResult struct {
	cand bool // passed the cheap candidate test
	dup  bool
	// decided reports that v holds a full verdict, kept for collect.
	decided bool
	// joined reports a candidate pair not verified: earlier verdicts of
	// its batch put both documents in one cluster.
	joined bool
	v      Verdict
}

// candidate runs the cheap candidate test on (i, j). Safe for concurrent
// use.
func (m *matcher) candidate(i, j int) bool {
	a, b := m.sigs[i], m.sigs[j]
	if m.d.tooShort(a) || m.d.tooShort(b) {
		return false
	}
	var ia, ib *bloomInfo // nil: quickCandidate reads the filters if a test needs them
	if m.blooms != nil {
		ia, ib = &m.blooms[i], &m.blooms[j]
	}
	return m.d.quickCandidate(a, b, ia, ib)
}

// verify decides a candidate pair (i, j) into r. Safe for concurrent use
// (the verdict cache is).
func (m *matcher) verify(i, j int, r *pairResult) {
	r.cand = true
	if m.d.verify().Method == MethodNone && !m.d.Containment {
		r.dup = true
		return
	}
	r.v = m.decide(i, j)
	r.decided, r.dup = true, r.v.Duplicate
}

// evaluate decides the pair (i, j): the cheap candidate test, then the
// verification. Safe for concurrent use.
func (m *matcher) evaluate(i, j int) pairResult {
	var r pairResult
	if m.candidate(i, j) {
		m.verify(i, j, &r)
	}
	return r
}

// key returns the key of the pair (i, j) in m.verdicts.
func (m *matcher) key(i, j int) [2]int32 {
	if m.same != nil {
		return [2]int32{m.same[i], m.same[j]}
	}
	return [2]int32{int32(i), int32(j)}
}

// record keeps the full verdict of (i, j), if any, for collect.
func (m *matcher) record(i, j int, r *pairResult) {
	if !r.decided {
		return
	}
	if m.verdicts == nil {
		m.verdicts = make(map[[2]int32]Verdict)
	}
	m.verdicts[m.key(i, j)] = r.v
}

// verdict returns the verdict of the pair (i, j), reusing a kept one.
func (m *matcher) verdict(i, j int) Verdict {
	if v, ok := m.verdicts[m.key(i, j)]; ok {
		return v
	}
	a, b := m.sigs[i], m.sigs[j]
	if a == nil {
		a = new(Signature)
	}
	if b == nil {
		b = new(Signature)
	}
	if m.sigs[i] == nil || m.sigs[j] == nil {
		return m.d.Decide(a, b)
	}
	return m.decide(i, j)
}

// ClusterRanked clusters a ranked result list (best first, up to a few
// hundred items) with the decision d and returns every cluster, single
// documents included, in order of their winners' rank. nil signatures
// are documents without a signature: they stay alone.
//
// A document joins a cluster when it matches any member of it (single
// link: Jain et al. assume similarity transitive at high thresholds).
// Pairs are taken in rank order and a pair already in one cluster is not
// compared; each comparison runs the cheap candidate test first and the
// LCS verification only on candidate pairs. The winner is the best ranked
// member unless o.Winners marks another; every member then gets its
// verdict against the winner (reused when that pair was already decided),
// which is not required to be a duplicate.
//
// Cost O(n²) cheap tests in the worst case (all distinct), each a simhash,
// supershingle, SWAR min-hash and Bloom OR-popcount pass over cached data
// (about 150-200 ns a pair on a shared 2-core VM: some 150-250 µs for 50
// signatures); plus one Decide per candidate pair, which runs the LCS
// (about 20 µs for two 800-word pages) unless [Decision.Accept] passes.
func ClusterRanked(sigs []*Signature, d Decision, o RankedOptions) []Cluster {
	n := len(sigs)
	u := NewUnionFind(n)
	m := matcher{d: &d, sigs: sigs, blooms: make([]bloomInfo, n), cache: o.Cache}
	for i, s := range sigs {
		if s != nil {
			m.blooms[i] = newBloomInfo(s.Bloom)
		}
	}
	for j := range n {
		if d.tooShort(sigs[j]) {
			continue
		}
		for i := range j {
			if !u.Same(i, j) && m.match(i, j) {
				u.Union(i, j)
			}
		}
	}
	return m.collect(u, func(i int) bool { return i < len(o.Winners) && o.Winners[i] }, o.Keys, 1)
}

// collect builds the clusters of u with at least minSize members. The
// elements of u are in order of rank: the best ranked member is the
// winner unless marked says another one is.
func (m *matcher) collect(u *UnionFind, marked func(int) bool, keys []string, minSize int) []Cluster {
	n := u.Len()
	byRoot := make([]int32, n) // root -> cluster index + 1
	total := 0
	for i := range n {
		if u.Size(i) >= minSize {
			total++
		}
	}
	members := make([]Member, 0, total) // the Members of every cluster, each capped
	var out []Cluster
	for i := range n {
		if u.Size(i) < minSize {
			continue
		}
		r := u.Find(i)
		c := int(byRoot[r]) - 1
		if c < 0 {
			c = len(out)
			byRoot[r] = int32(c + 1)
			k := len(members)
			members = members[:k+u.Size(i)]
			out = append(out, Cluster{Winner: i, Members: members[k:k:len(members)]})
		}
		out[c].Members = append(out[c].Members, Member{Index: i})
		if marked(i) && !marked(out[c].Winner) {
			out[c].Winner = i
		}
	}
	var pairs [][2]int32
	for ci := range out {
		c := &out[ci]
		w := c.Winner
		c.ID = clusterID(keys, w)
		// The winner first, the others keep their order.
		k := slices.IndexFunc(c.Members, func(mb Member) bool { return mb.Index == w })
		copy(c.Members[1:k+1], c.Members[:k])
		c.Members[0] = Member{Index: w}
		for _, mb := range c.Members[1:] {
			pairs = append(pairs, [2]int32{int32(w), int32(mb.Index)})
		}
	}
	m.prefetch(pairs)
	for ci := range out {
		c := &out[ci]
		for mi := 1; mi < len(c.Members); mi++ {
			c.Members[mi].Verdict = m.verdict(c.Winner, c.Members[mi].Index)
		}
	}
	return out
}

// prefetch computes the verdicts of the pairs not yet kept on m.workers
// goroutines and keeps them, so the verdict calls that follow find them.
// Kept verdicts do not depend on the number of workers.
func (m *matcher) prefetch(pairs [][2]int32) {
	var todo [][2]int32
	seen := make(map[[2]int32]bool)
	for _, p := range pairs {
		p = m.key(int(p[0]), int(p[1]))
		if _, ok := m.verdicts[p]; !ok && !seen[p] {
			seen[p] = true
			todo = append(todo, p)
		}
	}
	vs := make([]Verdict, len(todo))
	parallel.For(len(todo), m.workers, 1, func(k int) {
		vs[k] = m.verdict(int(todo[k][0]), int(todo[k][1]))
	})
	if m.verdicts == nil {
		m.verdicts = make(map[[2]int32]Verdict, len(todo))
	}
	for k, p := range todo {
		m.verdicts[p] = vs[k]
	}
	m.extra += len(todo)
}

// splitUnverified splits every cluster into clusters whose members all
// match their winner: in rank order, the first remaining member is a
// winner and takes every remaining member that matches it. Clusters of
// one are dropped, as BatchCluster returns clusters of two or more. All
// clusters advance one winner per round, so each round's verdicts are
// computed together on every worker.
func (m *matcher) splitUnverified(in []Cluster, keys []string) []Cluster {
	type split struct {
		orig int // winner of the input cluster, whose verdicts are kept
		rest []Member
	}
	work := make([]split, 0, len(in))
	for _, c := range in {
		work = append(work, split{orig: c.Winner, rest: c.Members})
	}
	var out []Cluster
	for len(work) > 0 {
		var pairs [][2]int32
		for _, sp := range work {
			if w := sp.rest[0].Index; w != sp.orig {
				for _, mb := range sp.rest[1:] {
					pairs = append(pairs, [2]int32{int32(w), int32(mb.Index)})
				}
			}
		}
		m.prefetch(pairs)
		next := work[:0]
		for _, sp := range work {
			w := sp.rest[0].Index
			cl := Cluster{Winner: w, ID: clusterID(keys, w), Members: []Member{{Index: w}}}
			var left []Member
			for _, mb := range sp.rest[1:] {
				v := mb.Verdict
				if w != sp.orig {
					v = m.verdict(w, mb.Index)
				}
				if v.Duplicate {
					cl.Members = append(cl.Members, Member{Index: mb.Index, Verdict: v})
				} else {
					left = append(left, mb)
				}
			}
			if len(cl.Members) > 1 {
				out = append(out, cl)
			}
			if len(left) > 1 {
				next = append(next, split{orig: sp.orig, rest: left})
			}
		}
		work = next
	}
	slices.SortFunc(out, func(a, b Cluster) int { return cmp.Compare(a.Winner, b.Winner) })
	return out
}

// BatchOptions are the options of [BatchCluster]. The zero value uses the
// defaults.
type BatchOptions struct {
	// Keys are the documents' keys (e.g. canonical URLs), which must be
	// distinct. They order the documents: the smallest key of a cluster
	// is its winner and the cluster ID is the FNV-1a hash of that key,
	// so the output does not depend on the input order. nil: the index is
	// the key and the ID is the winner's index.
	Keys []string
	// WinnerVerified keeps in a cluster only the members that match its
	// winner, as the cluster service reports them (Zhu §5.2); the others
	// form clusters of their own by the same rule. Off: single link, a
	// member joins when it matches any member.
	WinnerVerified bool
	// SimhashK is the simhash distance the block tables find: the 64 bits
	// are split into SimhashK+1 blocks, so two simhashes within distance
	// SimhashK agree on at least one block (pigeonhole, Manku et al.).
	// Zero means [DefaultBatchSimhashK]; negative disables the tables.
	SimhashK int
	// BandRows is the number of min-hash values per band of the band
	// tables (LSH; Broder/Indyk): a pair with Jaccard J shares one of
	// len(MinHash)/BandRows bands with probability 1-(1-J^r)^bands.
	// Zero means [DefaultBatchBandRows]; negative disables the bands.
	BandRows int
	// NoMegashingles disables the megashingle tables (Fetterly: a pair
	// sharing a megashingle shares at least 2 supershingles).
	NoMegashingles bool
	// MaxBucket bounds the documents of one table bucket compared with
	// each other: each is compared with at most MaxBucket predecessors.
	// Zero means [DefaultBatchMaxBucket].
	MaxBucket int
	// Workers is the number of goroutines that test and verify pairs;
	// zero means GOMAXPROCS. The clusters, verdicts and stage counts do
	// not depend on it.
	Workers int
	// Cache, when not nil, supplies verdicts decided before (by another
	// worker of a distributed job: the pipeline's decide step) and keeps
	// those computed, as [RankedOptions.Cache] does; it must hold only
	// verdicts of this Decision. The clusters, verdicts and stage counts
	// do not depend on it.
	Cache VerdictCache
	// Stats, when not nil, receives the counts and times of the stages.
	Stats *BatchStats

	batch int // pairs a batch; zero: batchPairs (tests set it)
}

// BatchStats counts what [BatchCluster] did, stage by stage, cheapest
// first, and the time each stage took. The counts do not depend on
// [BatchOptions.Workers].
type BatchStats struct {
	// Pairs is the number of distinct pairs the table buckets put to the
	// cheap candidate test: pairs already in one cluster or already
	// rejected, and in the simhash block tables pairs over SimhashK, are
	// not counted.
	Pairs int
	// Candidates is the number of pairs that passed the cheap candidate
	// test (simhash gate, simhash, supershingles, min-hash): the pairs
	// verified and the Joined ones.
	Candidates int
	// Accepted is the number of candidate pairs settled by the
	// strong-accept test (min-hash, [Decision.Accept]) without an LCS.
	Accepted int
	// Bounded, Length and Aligned count the candidate pairs verified by
	// an LCS method by how far it went ([LCSStage]): settled by the
	// lengths or the multiset intersection of their word sequences, by
	// the LCS length, or with the alignment computed.
	Bounded, Length, Aligned int
	// Other is the number of candidate pairs settled otherwise (no
	// verification, a fallback test for a side without sequence, a
	// non-LCS verification).
	Other int
	// Joined is the number of candidate pairs not verified because the
	// verdicts of their batch had already put both documents in one
	// cluster (see [spanning]); a verdict cannot change the clusters.
	Joined int
	// Copies is the number of documents whose signature equals that of
	// a document before them in key order: they are left out of the
	// tables and take their original's place in its clusters (see
	// [sameSignatures]).
	Copies int
	// Duplicates is the number of candidate pairs found duplicates.
	Duplicates int
	// WinnerVerdicts is the number of verdicts against the winners that
	// the clusters needed and the tables' pass had not decided.
	WinnerVerdicts int
	// CandidateTime is the wall time of the tables and the cheap tests,
	// VerifyTime of the verification of candidate pairs, ClusterTime of
	// the clusters and the verdicts against their winners.
	CandidateTime, VerifyTime, ClusterTime time.Duration
}

// count adds the outcome of a candidate pair to the stage counts.
func (st *BatchStats) count(r *pairResult) {
	st.Candidates++
	if r.dup {
		st.Duplicates++
	}
	switch {
	case r.joined:
		st.Joined++
	case !r.decided:
		st.Other++
	case r.v.Step == StepAccept:
		st.Accepted++
	case r.v.Scores.LCSStage == LCSStageBound:
		st.Bounded++
	case r.v.Scores.LCSStage == LCSStageLength:
		st.Length++
	case r.v.Scores.LCSStage == LCSStageAlignment:
		st.Aligned++
	default:
		st.Other++
	}
}

// Defaults of [BatchOptions].
const (
	// DefaultBatchSimhashK is the block-table simhash distance: 4 blocks
	// of 16 bits, Moz's 5 would need 6 blocks of 10-11 bits, whose
	// buckets hold ~1,000 of a million random documents each.
	DefaultBatchSimhashK = 3
	// DefaultBatchBandRows gives 21 bands of 4 of the 84 min-hashes: a
	// pair with Jaccard 0.7 is found with probability 0.9995, one with
	// Jaccard 0.5 with 0.74, one with 0.3 with 0.16.
	DefaultBatchBandRows = 4
	// DefaultBatchMaxBucket bounds the comparisons in a bucket.
	DefaultBatchMaxBucket = 256
	// batchPairs is the number of pairs tested together on the workers
	// before their matches are merged. Pairs are skipped when already in
	// one cluster as of the last merge, so a smaller batch verifies fewer
	// pairs a serial run would skip, and a larger one waits less. It is
	// fixed, not derived from the workers, so the pairs tested and the
	// counts do not depend on them.
	batchPairs = 1024
)

// entry is one row of a candidate table.
type entry struct {
	key  uint64
	rank int32 // the document's rank (its position in key order)
}

// tableKind is a family of candidate tables.
type tableKind uint8

const (
	tableMega    tableKind = iota // the 15 megashingles of every document
	tableSimhash                  // one block of the simhash
	tableBand                     // one band of rows min-hashes
)

// tableSpec is one candidate table of [BatchCluster].
type tableSpec struct {
	kind                tableKind
	index, blocks, rows int
	simhashK            int // pairs over this simhash distance are skipped; -1: none
}

// build fills t with the table's rows for the usable documents of ranked,
// in rank order. mega is scratch for the megashingles.
func (sp tableSpec) build(t []entry, ranked []*Signature, usable func(*Signature) bool, mega *[]uint64) []entry {
	t = t[:0]
	switch sp.kind {
	case tableMega:
		// One table for all 15: the megashingle values mix in their index.
		for r, s := range ranked {
			if usable(s) {
				*mega = s.AppendMegashingles((*mega)[:0])
				for _, v := range *mega {
					t = append(t, entry{key: v, rank: int32(r)})
				}
			}
		}
	case tableSimhash:
		lo, hi := sp.index*64/sp.blocks, (sp.index+1)*64/sp.blocks
		mask := uint64(1)<<(hi-lo) - 1
		for r, s := range ranked {
			if usable(s) {
				t = append(t, entry{key: s.Simhash >> lo & mask, rank: int32(r)})
			}
		}
	case tableBand:
		band, rows := sp.index, sp.rows
		for r, s := range ranked {
			if !usable(s) || (band+1)*rows > len(s.MinHash) {
				continue
			}
			t = append(t, entry{key: BandHash(s.MinHash, band, rows), rank: int32(r)})
		}
	}
	return t
}

// sortEntries sorts t by key, then rank, with tmp as scratch (grown as
// needed and returned). Rows are appended in rank order, so a stable sort
// by key suffices: a least-significant-digit radix sort, one pass a byte
// of the key, skipping the bytes all keys share (simhash blocks have two
// of eight). O(n) against the O(n log n) comparisons of a sort: the
// megashingle table of a million documents has 15 million rows.
func sortEntries(t, tmp []entry) []entry {
	if len(t) < 256 {
		slices.SortFunc(t, func(x, y entry) int {
			if c := cmp.Compare(x.key, y.key); c != 0 {
				return c
			}
			return cmp.Compare(x.rank, y.rank)
		})
		return tmp
	}
	var counts [8][256]int
	for _, e := range t {
		for d := range 8 {
			counts[d][byte(e.key>>(8*d))]++
		}
	}
	tmp = slices.Grow(tmp[:0], len(t))[:len(t)]
	src, dst := t, tmp
	for d := range 8 {
		c := &counts[d]
		if c[byte(src[0].key>>(8*d))] == len(src) {
			continue // every key has this byte
		}
		at := 0
		for i, n := range c {
			c[i] = at
			at += n
		}
		for _, e := range src {
			b := byte(e.key >> (8 * d))
			dst[c[b]] = e
			c[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &t[0] {
		copy(t, src)
	}
	return tmp
}

// BatchCluster clusters many signatures in near-linear time and returns
// the clusters of two or more documents, ordered by their winners' keys.
//
// Candidate pairs come from tables, one at a time: a megashingle table
// (the 15 megashingles of every document), SimhashK+1 simhash block tables, and
// len(MinHash)/BandRows min-hash band tables. A table is a slice of (key,
// document) sorted by key; documents with the same key form a bucket and
// each is compared with its predecessors in the bucket (at most
// MaxBucket), skipping pairs already clustered and, in simhash tables,
// pairs over distance SimhashK. Each pair is decided by d (cheap
// candidate test, then verification) and matches are merged in a
// union-find. The components do not depend on the order of comparisons,
// and documents are handled in key order, so the result does not depend
// on the input order. Every member gets its verdict against the winner
// (the smallest key), as [ClusterRanked] documents.
//
// Cost: for n documents and T tables, O(T·n log n) to sort plus the
// bucket comparisons; 16 bytes per table row (15·n rows for the
// megashingles, n for the others), 8·n for the union-find.
func BatchCluster(sigs []*Signature, d Decision, o BatchOptions) []Cluster {
	n := len(sigs)
	// rank orders the documents by key; byRank inverts it.
	byRank := make([]int32, n)
	for i := range byRank {
		byRank[i] = int32(i)
	}
	if o.Keys != nil {
		slices.SortFunc(byRank, func(i, j int32) int { return cmp.Compare(o.Keys[i], o.Keys[j]) })
	}
	ranked := make([]*Signature, n)
	for r, i := range byRank {
		ranked[r] = sigs[i]
	}
	k := cmp.Or(o.SimhashK, DefaultBatchSimhashK)
	rows := cmp.Or(o.BandRows, DefaultBatchBandRows)
	maxBucket := cmp.Or(o.MaxBucket, DefaultBatchMaxBucket)

	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	batchSize := cmp.Or(o.batch, batchPairs)
	var st BatchStats
	u := NewUnionFind(n)
	m := matcher{d: &d, sigs: ranked, workers: workers, cache: o.Cache, seqs: newSeqAlignments(ranked)}
	rejected := make(map[[2]int32]struct{}) // decided non-matches
	pending := make(map[[2]int32]struct{})  // pairs of the batch
	var batch [][2]int32
	var results []pairResult
	var span spanning
	// flush tests the batch's pairs on the workers, verifies a spanning
	// forest of its candidate pairs (see [spanning]), then merges their
	// outcomes in the batch's order.
	flush := func() {
		t0 := time.Now()
		results = slices.Grow(results[:0], len(batch))[:len(batch)]
		parallel.For(len(batch), workers, 64, func(k int) {
			results[k] = pairResult{cand: m.candidate(int(batch[k][0]), int(batch[k][1]))}
		})
		t1 := time.Now()
		st.CandidateTime += t1.Sub(t0)
		span.verify(&m, u, batch, results, workers)
		st.VerifyTime += time.Since(t1)
		for k, pair := range batch {
			r := &results[k]
			st.Pairs++
			if r.cand {
				st.count(r)
			}
			m.record(int(pair[0]), int(pair[1]), r)
			if !r.dup && !r.joined {
				rejected[pair] = struct{}{}
			}
		}
		batch = batch[:0]
		clear(pending)
	}
	join := func(table []entry, simhashK int) {
		t0 := time.Now()
		for s := 0; s < len(table); {
			e := s + 1
			for e < len(table) && table[e].key == table[s].key {
				e++
			}
			for q := s + 1; q < e; q++ {
				j := int(table[q].rank)
				for p := max(s, q-maxBucket); p < q; p++ {
					i := int(table[p].rank)
					if u.Same(i, j) {
						continue
					}
					if simhashK >= 0 && Hamming(ranked[i].Simhash, ranked[j].Simhash) > simhashK {
						continue
					}
					pair := [2]int32{int32(i), int32(j)}
					if _, ok := rejected[pair]; ok {
						continue
					}
					if _, ok := pending[pair]; ok {
						continue
					}
					pending[pair] = struct{}{}
					batch = append(batch, pair)
					if len(batch) == batchSize {
						st.CandidateTime += time.Since(t0)
						flush()
						t0 = time.Now()
					}
				}
			}
			s = e
		}
		st.CandidateTime += time.Since(t0)
		flush()
	}
	// The tables are built and sorted on another goroutine, one ahead of
	// the join, in two buffers that take turns; the join consumes them in
	// a fixed order.
	usable := func(s *Signature) bool { return !d.tooShort(s) }
	// Copies of a signature stay out of the tables (nil in tabled).
	m.same, st.Copies = sameSignatures(ranked, usable)
	tabled := ranked
	if st.Copies > 0 {
		tabled = slices.Clone(ranked)
		for r, o := range m.same {
			if int(o) != r {
				tabled[r] = nil
			}
		}
	}
	var specs []tableSpec
	if !o.NoMegashingles {
		specs = append(specs, tableSpec{kind: tableMega, simhashK: -1})
	}
	if k >= 0 {
		for bi := range k + 1 {
			specs = append(specs, tableSpec{kind: tableSimhash, index: bi, blocks: k + 1, simhashK: k})
		}
	}
	if rows > 0 {
		bands := 0
		for _, s := range ranked {
			if usable(s) {
				bands = max(bands, len(s.MinHash)/rows)
			}
		}
		for band := range bands {
			specs = append(specs, tableSpec{kind: tableBand, index: band, rows: rows, simhashK: -1})
		}
	}
	free := make(chan []entry, 2)
	free <- make([]entry, 0, n)
	free <- make([]entry, 0, n)
	ready := make(chan []entry)
	go func() { // exits after the last table, which the join receives
		var mega []uint64
		var tmp []entry
		for _, sp := range specs {
			t := <-free
			if cap(t) > 2*n {
				t = make([]entry, 0, n) // the megashingle table's 15·n rows: let them go
				tmp = nil
			}
			t = sp.build(t, tabled, usable, &mega)
			tmp = sortEntries(t, tmp)
			ready <- t
		}
		close(ready)
	}()
	for _, sp := range specs {
		table := <-ready
		join(table, sp.simhashK)
		free <- table[:0]
	}
	<-ready // closed
	if st.Copies > 0 {
		t0 := time.Now()
		m.joinCopies(u, specs, &st)
		st.VerifyTime += time.Since(t0)
	}

	t0 := time.Now()
	var rankKeys []string
	if o.Keys != nil {
		rankKeys = make([]string, n)
		for r, i := range byRank {
			rankKeys[r] = o.Keys[i]
		}
	}
	out := m.collect(u, func(int) bool { return false }, rankKeys, 2)
	if o.WinnerVerified {
		out = m.splitUnverified(out, rankKeys)
	}
	// Back from ranks to input indexes.
	for ci := range out {
		c := &out[ci]
		c.Winner = int(byRank[c.Winner])
		if o.Keys == nil {
			c.ID = uint64(c.Winner)
		}
		for mi := range c.Members {
			c.Members[mi].Index = int(byRank[c.Members[mi].Index])
		}
	}
	st.ClusterTime = time.Since(t0)
	st.WinnerVerdicts = m.extra
	if o.Stats != nil {
		*o.Stats = st
	}
	return out
}
