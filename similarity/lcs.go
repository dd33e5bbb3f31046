package similarity

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// This file holds the LCS verification of Huang, Wang and Li (seed 001):
// the ratio r = |LCS| / (|A| + |B| - |LCS|) computed with Myers' greedy
// O((N+M)D) algorithm ("An O(ND) Difference Algorithm and Its Variations",
// Algorithmica 1986) on word hashes, and the trusted central part of the
// LCS, which ignores site templates at the head and tail of a page.

// Run is one matched run of an alignment: a[A:A+Len] == b[B:B+Len].
type Run struct {
	A, B, Len int
}

// lcsScratch is the reusable memory of one LCS computation. It comes from
// a pool so that a call allocates nothing once the pool is warm.
type lcsScratch struct {
	v   []int32 // furthest x per diagonal, indexed k+off
	off int
	vr  []int32 // the reverse search's v (lcsbidi.go)
	// bidiDone is the last round of the bidirectional search done;
	// bidiMet the distance it found, -1 before; bidiLow a lower bound
	// of the distance, below which it does not look for the meeting.
	bidiDone, bidiMet, bidiLow int

	trace []int32 // V of every round d, 2d+1 entries at offset d*d
	// traced is the number of forward rounds in trace; bidiTrace makes
	// the bidirectional search keep its forward rounds there.
	traced    int
	bidiTrace bool
	runs      []Run
	segs      []segment
	gaps      []int32 // the runs' edges on one side, for divergence

	// The bit-parallel LCS (lcsbits.go): the masks of one sequence, one
	// row of differences, and for an alignment every row and the row
	// index after each token of the other sequence.
	masks wordMasks
	row   []uint64
	log   []undo   // old words, for the alignment
	logAt []int32  // first log entry of each token
	revA  []uint32 // the sequences reversed, for the alignment
	revB  []uint32
	// buckets holds the counts of [lcsScratch.bucketBound], buckets16
	// the same in 16 bits (bucketWide reports which); bucketShift is
	// the shift of their slots and bucketSwap reports that they count
	// b, the shorter sequence, rather than a.
	buckets                []uint32
	buckets16              []uint16
	bucketShift            uint
	bucketWide, bucketSwap bool
	// keptA and keptB hold a and b without such tokens
	// ([lcsScratch.sharedDistance]).
	keptA, keptB []uint32
	// The trigram index of the walk with jumps (lcsreach.go): the first
	// position + 1 of each trigram by slot, its key, and the next
	// position of the same trigram from each position.
	triHead  []int32
	triKey   []uint32
	triNext  []int32
	triShift uint

	settled LCSStage // how far the last computation went
	// bitAligned reports that the last distance left a bit-parallel log
	// of revA against revB for the alignment; bitSwap that revA is b's.
	bitAligned, bitSwap bool
}

var lcsPool = sync.Pool{New: func() any { return new(lcsScratch) }}

// commonAffixes returns the length of the common prefix of a and b and of
// the common suffix of what remains.
func commonAffixes(a, b []uint32) (pre, suf int) {
	n := min(len(a), len(b))
	for pre < n && a[pre] == b[pre] {
		pre++
	}
	for suf < n-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	return pre, suf
}

// myers runs the forward greedy algorithm on a and b, which must not share
// a first or last element, and returns the edit distance D (insertions and
// deletions) or ok=false once D would exceed lim. With trace set, the V
// array of every round is appended to s.trace for [backtrack].
//
// Diagonals are clipped to the band [-m, n]; entries outside the band keep
// the sentinel -1 so the choice between the two neighbours never picks a
// diagonal that cannot be reached. Cost O((n+m)·D) time, O(lim) space, plus
// (D+1)² int32 of trace.
func (s *lcsScratch) myers(a, b []uint32, lim int, trace bool) (d int, ok bool) {
	s.myersInit(lim)
	return s.myersRounds(a, b, 0, lim, trace)
}

// myersInit prepares the V array for rounds up to lim.
func (s *lcsScratch) myersInit(lim int) {
	size := 2*lim + 3
	if cap(s.v) < size {
		s.v = make([]int32, size)
	}
	s.v = s.v[:size]
	for i := range s.v {
		s.v[i] = -1
	}
	s.off = lim + 1
	s.v[s.off+1] = 0
	s.trace = s.trace[:0]
}

// myersRounds runs the rounds from..to (to at most the lim of the last
// myersInit) of [lcsScratch.myers]; a search that stopped at round
// from-1 resumes where it was.
//
// Round d visits only the diagonals from which the end can still be
// reached within to edits, |k-Δ| <= to-d (Δ = n-m): a path on diagonal k
// needs at least |k-Δ| more. The diagonals k±1 that round d reads are
// then within to-(d-1) of Δ, visited by round d-1, so every value
// visited, and the path found, is the one of the unclipped search; when
// to is the distance itself (the alignment's case) the last rounds shrink
// to Δ and the search costs about D²/2 diagonal steps instead of D².
// The trace holds a round's visited diagonals only; the others keep
// whatever the memory held and [lcsScratch.backtrack] never reads them.
func (s *lcsScratch) myersRounds(a, b []uint32, from, to int, trace bool) (d int, ok bool) {
	n, m := len(a), len(b)
	v, off := s.v, s.off
	delta := n - m
	for d := from; d <= to; d++ {
		lo, hi := reachable(d, n, m, delta, to)
		extendForward(a, b, v, off, lo, hi)
		if trace {
			s.traceRound(d, lo, hi)
		}
		// Only diagonal Δ ends at (n, m).
		if lo <= delta && delta <= hi && (delta-lo)&1 == 0 && int(v[off+delta]) >= n {
			return d, true
		}
	}
	return to + 1, false
}

// traceRound appends round d's V row (2d+1 entries, diagonal k at k+d) to
// s.trace, of which only the visited diagonals lo..hi are copied.
func (s *lcsScratch) traceRound(d, lo, hi int) {
	at := len(s.trace)
	s.trace = slices.Grow(s.trace, 2*d+1)[:at+2*d+1]
	if lo <= hi {
		copy(s.trace[at+lo+d:at+hi+d+1], s.v[s.off+lo:s.off+hi+1])
	}
}

// reachable returns the first and last diagonal of round d of a forward
// search bounded by to edits on sequences of lengths n and m
// (delta = n-m): those of [diagonals] within to-d of delta, with d's
// parity. lo > hi when none is.
func reachable(d, n, m, delta, to int) (lo, hi int) {
	lo, hi = diagonals(d, n, m)
	if klo := delta - (to - d); klo > lo {
		lo = klo + ((klo - lo) & 1)
	}
	if khi := delta + (to - d); khi < hi {
		hi = khi - ((hi - khi) & 1)
	}
	return lo, hi
}

// myersResume is the traced [lcsScratch.myers] on a and b up to lim,
// resumed after the s.traced forward rounds that the bidirectional search
// left in the trace (the same rounds, as both searches visit the same
// diagonals the same way): their last row seeds V.
func (s *lcsScratch) myersResume(a, b []uint32, lim int) (d int, ok bool) {
	r := s.traced
	if r == 0 || len(s.trace) != r*r {
		s.myersInit(lim)
		return s.myersRounds(a, b, 0, lim, true)
	}
	size := 2*lim + 3
	s.v = fillInt32(s.v, size, -1)
	s.off = lim + 1
	last := r - 1
	copy(s.v[s.off-last:s.off+last+1], s.trace[last*last:])
	return s.myersRounds(a, b, r, lim, true)
}

// diagonals returns the first and last diagonal of round d, those of
// [-d, d] clipped to the band [-m, n] with d's parity.
func diagonals(d, n, m int) (lo, hi int) {
	lo, hi = -d, d
	if lo < -m {
		lo = -m + ((d - m) & 1)
	}
	if hi > n {
		hi = n - ((d - n) & 1)
	}
	return lo, hi
}

// pathStart returns the x at which the furthest-reaching d-path on
// diagonal k leaves its (d-1)-path: down from diagonal k+1 or right from
// k-1, whichever reaches further. Myers' rule (down when k = -d or
// V[k-1] < V[k+1], else right) is this maximum, as the diagonals outside
// [-d+1, d-1] and the band hold -1; the maximum needs no branch, which
// on near-duplicates goes either way about half the time.
func pathStart(v []int32, off, k int) int {
	return max(int(v[off+k-1])+1, int(v[off+k+1]))
}

// backtrack recovers the matched runs of the path found by a traced
// [lcsScratch.myers] that ended with distance d, appends them to dst in
// order of position, shifted by pre, and returns dst.
func (s *lcsScratch) backtrack(dst []Run, n, m, d, pre int) []Run {
	start := len(dst)
	x, y := n, m
	for ; d > 0; d-- {
		k := x - y
		prev := s.trace[(d-1)*(d-1) : d*d] // index k + d - 1
		var pk int
		if k == -d || (k != d && prev[k-1+d-1] < prev[k+1+d-1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := int(prev[pk+d-1])
		py := px - pk
		mx, my := px+1, py // right move: a[px] deleted
		if pk == k+1 {
			mx, my = px, py+1 // down move: b[py] inserted
		}
		if x > mx {
			dst = append(dst, Run{A: mx + pre, B: my + pre, Len: x - mx})
		}
		x, y = px, py
	}
	if x > 0 {
		dst = append(dst, Run{A: pre, B: pre, Len: x})
	}
	r := dst[start:]
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return dst
}

// LCS returns the length of the longest common subsequence of a and b. It
// stops once the edit distance D = |a|+|b|-2|LCS| is known to exceed maxD
// and then returns ok=false and an upper bound of the length: the length
// itself when it was computed, else (|a|+|b|-maxD-1)/2. A negative maxD
// means no bound.
//
// After stripping the common prefix and suffix, a pair whose lengths
// differ by more than maxD exits at once (D >= the difference); Myers'
// greedy algorithm runs while its cost O((N+M)·D) stays below the
// bit-parallel one, so near-duplicates cost O(N+M+D²); past that the
// bit-parallel length ([LCSLength]) finishes in O(⌈M/64⌉·N) whatever D.
// Pooled memory: no allocation once warm. Safe for concurrent use.
func LCS(a, b []uint32, maxD int) (n int, ok bool) {
	s := lcsPool.Get().(*lcsScratch)
	n, ok = s.bounded(a, b, maxD)
	lcsPool.Put(s)
	return n, ok
}

// bounded is [LCS] on the scratch s.
func (s *lcsScratch) bounded(a, b []uint32, maxD int) (n int, ok bool) {
	s.settled = LCSStageLength
	pre, suf := commonAffixes(a, b)
	a2, b2 := a[pre:len(a)-suf], b[pre:len(b)-suf]
	total := len(a2) + len(b2)
	lim := total
	if maxD >= 0 && maxD < lim {
		lim = maxD
	}
	if len(a2) == 0 || len(b2) == 0 {
		if total > lim {
			s.settled = LCSStageBound
			return pre + suf + (total-lim-1)/2, false
		}
		return pre + suf, true
	}
	d, _ := s.distance(a2, b2, lim, false)
	return pre + suf + (total-d)/2, d <= lim
}

// bucketBound returns an upper bound of the LCS length of a and b: the
// size of the multiset intersection of their tokens hashed into buckets,
// Σ min(count in a, count in b) over the buckets. It is at least the
// intersection over the tokens themselves, as min(x1+x2, y1+y2) >=
// min(x1, y1) + min(x2, y2), which bounds the LCS length (a common
// subsequence uses each occurrence once). The buckets are four for each
// token of the shorter sequence, at most 2^13, with 16-bit counts when
// it has fewer than 2^15 tokens (16 KB), so the bound is nearly the
// exact intersection's while its counting stays in L1 cache: about 1 ns
// a token.
//
// The buckets, left in s, also tell which tokens of either sequence
// cannot occur in the other, for [lcsScratch.sharedDistance] (see
// [countBuckets]).
func (s *lcsScratch) bucketBound(a, b []uint32) int {
	s.bucketSwap = len(a) > len(b)
	if s.bucketSwap {
		a, b = b, a
	}
	size := 256
	for size < 4*len(a) && size < 1<<13 {
		size <<= 1
	}
	// Masked, the shift is known below 32, which spares each slot the
	// test that Go's semantics of a larger shift needs.
	shift := uint(32-bits.TrailingZeros(uint(size))) & 31
	s.bucketShift = shift
	s.bucketWide = len(a) >= 1<<15
	if s.bucketWide {
		s.buckets = resize(s.buckets, size)
		return countBuckets(s.buckets, a, b, shift)
	}
	s.buckets16 = resize(s.buckets16, size)
	return countBuckets(s.buckets16, a, b, shift)
}

// countBuckets counts the tokens of a, which has fewer than half of T's
// range, into the buckets c by [tokenSlot] with shift, takes those of b
// from them and returns the tokens taken (the bound of
// [lcsScratch.bucketBound]). A bucket that b takes from gets T's top bit
// ([topBit]): afterwards a token of a whose bucket lacks the bit, and a
// token of b whose bucket is zero, are certainly absent from the other
// sequence. (Counting those tokens here, with or without a branch, made
// the pass half again as dear; [lcsScratch.sharedDistance] finds them
// only when it may pay.)
func countBuckets[T uint16 | uint32](c []T, a, b []uint32, shift uint) (n int) {
	clear(c)
	shift &= 31 // see bucketBound
	top := topBit[T]()
	for _, x := range a {
		c[tokenSlot(x, shift)]++
	}
	for _, x := range b {
		h := tokenSlot(x, shift)
		if v := c[h]; v&^top > 0 {
			c[h] = (v - 1) | top
			n++
		}
	}
	return n
}

// topBit returns the highest bit of T.
func topBit[T uint16 | uint32]() T {
	return ^T(0) ^ (^T(0) >> 1)
}

// myersCap returns the edit distance up to which Myers' greedy algorithm
// is cheaper than the bit-parallel length for sequences of lengths n and
// m: its D rounds cost about D² steps, the bit-parallel pass ⌈m/64⌉·n
// word steps (for m <= n), each about a quarter of a Myers step on
// unrelated pages (BenchmarkLCS: 64 KB pages, 1.3 ns a word step). A pair
// over the cap so costs at most twice the bit-parallel pass.
func myersCap(n, m int) int {
	if n < m {
		n, m = m, n
	}
	w := (m + 63) / 64
	return max(isqrt(w*n)/2, 16)
}

// isqrt returns the integer square root of x >= 0.
func isqrt(x int) int {
	r := int(math.Sqrt(float64(x)))
	for r*r > x {
		r--
	}
	for (r+1)*(r+1) <= x {
		r++
	}
	return r
}

// distance returns the edit distance D of a and b, two non-empty
// sequences without a common first or last token, when it is at most lim;
// otherwise a value over lim, which is D itself when exact is true and a
// lower bound of D when not. Cheapest evidence first:
//
//  1. D is at least the difference of the lengths;
//  2. the multiset intersection of the tokens hashed into buckets
//     ([lcsScratch.bucketBound]) bounds the LCS length, in one pass over
//     each sequence with the counts in L1 cache: unrelated pages rarely
//     get further;
//  3. Myers' algorithm, bidirectional ([lcsScratch.bidiDistance]), up to
//     D = 4·√(N+M), about as dear as the steps below and enough for
//     near-duplicates;
//  4. the exact multiset intersection of the tokens bounds the LCS length;
//  5. the bidirectional search resumed up to D = [myersCap];
//  6. the bit-parallel length, which exits once the length so far plus
//     the intersection of the rest cannot reach the bound.
//
// With align set, a distance found by the bit-parallel pass comes with
// the log its alignment needs (bitAligned reports it; see
// [lcsScratch.align]): the pass runs on the reversed sequences, as
// [lcsScratch.bitRuns] does, so the alignment costs one pass, not two.
func (s *lcsScratch) distance(a, b []uint32, lim int, align bool) (d int, exact bool) {
	return s.distanceInter(a, b, lim, align, -1)
}

// distanceInter is [lcsScratch.distance] given the multiset bound inter
// of a and b ([lcsScratch.bucketBound]) when the caller has it, or -1.
func (s *lcsScratch) distanceInter(a, b []uint32, lim int, align bool, inter int) (d int, exact bool) {
	total := len(a) + len(b)
	s.settled = LCSStageLength
	s.bitAligned = false
	if diff := max(len(a)-len(b), len(b)-len(a)); diff > lim {
		s.settled = LCSStageBound
		return diff, false
	}
	need := (total - lim + 1) / 2 // the LCS length of D = lim
	if inter < 0 && lim*lim < total {
		// The search to lim costs under lim²/4 steps and a pass over
		// both sequences to find the first difference on each of its
		// diagonals, less than the bound's pass over each: search.
		return s.search(a, b, lim, max(len(a)-len(b), len(b)-len(a)), align)
	}
	if inter < 0 {
		inter = s.bucketBound(a, b)
	}
	if inter < need {
		s.settled = LCSStageBound
		return total - 2*inter, false
	}
	if !align {
		if d, exact, ok := s.sharedDistance(a, b, lim, total-2*inter); ok {
			return d, exact
		}
	}
	return s.search(a, b, lim, total-2*inter, align)
}

// search is [lcsScratch.distance] from step 3 on; dmin is a lower bound
// of the distance.
func (s *lcsScratch) search(a, b []uint32, lim, dmin int, align bool) (d int, exact bool) {
	total := len(a) + len(b)
	need := (total - lim + 1) / 2
	dcap := myersCap(len(a), len(b))
	d0 := min(lim, dcap, max(4*isqrt(total), 16))
	s.bidiTrace = align
	s.bidiInit(min(lim, dcap))
	s.bidiLow = dmin
	if d, ok := s.bidiDistance(a, b, d0); ok {
		return d, true
	}
	if lim <= d0 {
		return lim + 1, false
	}
	x, y := a, b // the masks of the shorter sequence
	swap := len(x) > len(y)
	if swap {
		x, y = y, x
	}
	if align {
		s.revA = reverseInto(s.revA, x)
		s.revB = reverseInto(s.revB, y)
		x, y = s.revA, s.revB
	}
	s.masks.build(x)
	if inter := s.masks.intersect(y); inter < need {
		s.settled = LCSStageBound
		return total - 2*inter, false
	}
	if d0 < dcap {
		if d, ok := s.bidiDistance(a, b, min(lim, dcap)); ok {
			return d, true
		}
		if lim <= dcap {
			return lim + 1, false
		}
	}
	l, ok := s.bitCount(y, need, align)
	s.bitAligned, s.bitSwap = align && ok, swap
	return total - 2*l, ok
}

// Ratio returns the LCS ratio r = l / (n + m - l) of Huang et al. for an
// LCS of length l between sequences of lengths n and m; 1 when both are
// empty.
func Ratio(l, n, m int) float64 {
	if n+m-l <= 0 {
		return 1
	}
	return float64(l) / float64(n+m-l)
}

// LCSRatio returns the LCS ratio of a and b (see [Ratio] and [LCS]). When
// ok is false the edit distance exceeded maxD and r is an upper bound of
// the ratio.
func LCSRatio(a, b []uint32, maxD int) (r float64, ok bool) {
	l, ok := LCS(a, b, maxD)
	return Ratio(l, len(a), len(b)), ok
}

// MaxDForRatio returns the largest edit distance D that two sequences of
// lengths n and m can have while their LCS ratio is still >= t: from
// r = L/(n+m-L) and D = n+m-2L, r >= t exactly when
// D <= (n+m)(1-t)/(1+t). Passing it as maxD makes [LCS] exact for every
// pair that can reach t and lets every other pair exit early.
func MaxDForRatio(n, m int, t float64) int {
	if t <= 0 {
		return n + m
	}
	if t > 1 {
		t = 1
	}
	return int(math.Floor(float64(n+m)*(1-t)/(1+t) + 1e-9))
}

// AppendRuns appends the matched runs of one longest common subsequence of
// a and b to dst, in order of position, and returns it. ok is false, and
// nothing is appended, when the edit distance exceeds maxD (negative: no
// bound). The edit distance comes first, as [LCS] finds it; the alignment
// then keeps the V array of every round of Myers' algorithm to backtrack
// when D is small (O(N+M+D²) time, 4·(D+1)² bytes of pooled memory), else
// the rows of the bit-parallel algorithm (O(⌈M/64⌉·N) time and memory).
func AppendRuns(dst []Run, a, b []uint32, maxD int) (runs []Run, ok bool) {
	s := lcsPool.Get().(*lcsScratch)
	dst, _, ok = s.appendRuns(dst, a, b, maxD)
	lcsPool.Put(s)
	return dst, ok
}

// appendRuns is [AppendRuns] on the scratch s; when ok is false, l is an
// upper bound of the LCS length (see [LCS]), else the length.
func (s *lcsScratch) appendRuns(dst []Run, a, b []uint32, maxD int) (runs []Run, l int, ok bool) {
	pre, suf := commonAffixes(a, b)
	a2, b2 := a[pre:len(a)-suf], b[pre:len(b)-suf]
	total := len(a2) + len(b2)
	lim := total
	if maxD >= 0 && maxD < lim {
		lim = maxD
	}
	s.settled = LCSStageLength
	if total > lim && (len(a2) == 0 || len(b2) == 0) {
		s.settled = LCSStageBound
		return dst, pre + suf + (total-lim-1)/2, false
	}
	d := 0
	if len(a2) > 0 && len(b2) > 0 {
		d, _ = s.distance(a2, b2, lim, true)
		if d > lim {
			return dst, pre + suf + (total-d)/2, false
		}
	}
	start := len(dst)
	if pre > 0 {
		dst = append(dst, Run{A: 0, B: 0, Len: pre})
	}
	if len(a2) > 0 && len(b2) > 0 {
		dst = s.align(dst, a2, b2, d, pre)
	}
	if suf > 0 {
		dst = append(dst, Run{A: len(a) - suf, B: len(b) - suf, Len: suf})
	}
	l = 0
	for _, r := range dst[start:] {
		l += r.Len
	}
	s.settled = LCSStageAlignment
	return dst, l, true
}

// align appends the runs of one LCS of a and b, whose edit distance is d,
// shifted by pre: by Myers' traced algorithm when d is within [myersCap]
// (4·(d+1)² bytes of trace), else from the bit-parallel algorithm.
func (s *lcsScratch) align(dst []Run, a, b []uint32, d, pre int) []Run {
	if s.bitAligned { // the distance's bit-parallel pass kept its log
		start := len(dst)
		dst = s.bitBack(dst, pre)
		if s.bitSwap {
			for i := start; i < len(dst); i++ {
				dst[i].A, dst[i].B = dst[i].B, dst[i].A
			}
		}
		return dst
	}
	if d <= myersCap(len(a), len(b)) {
		d, _ = s.myersResume(a, b, d)
		return s.backtrack(dst, len(a), len(b), d, pre)
	}
	if len(a) <= len(b) {
		return s.bitRuns(dst, a, b, pre)
	}
	start := len(dst)
	dst = s.bitRuns(dst, b, a, pre)
	for i := start; i < len(dst); i++ {
		dst[i].A, dst[i].B = dst[i].B, dst[i].A
	}
	return dst
}

// Default parameters of the central part (see [CentralOptions]).
const (
	// DefaultMinRun is the shortest matched run, in tokens, that counts as
	// coherent. Unrelated English texts share many single common words
	// ("the", "of") and some pairs, rarely runs of four; near-duplicates
	// with a few percent of words edited have runs of tens of words.
	DefaultMinRun = 4
	// DefaultGap is the largest unmatched gap, in tokens of either
	// document, between two coherent runs of one segment: about a
	// sentence, so an edited or inserted sentence does not split content.
	DefaultGap = 16
	// DefaultWindow is the window, in tokens, over which the divergence
	// of [Central] is measured: about a paragraph, so a replaced
	// paragraph shows while scattered edits (dates, counters, ads)
	// spread thin.
	DefaultWindow = 100
	// DefaultPageShare is the share of a side's matched frame that the
	// window of [Central.PageDivergence] spans when asked for
	// ([CentralOptions.PageShare]): a twentieth, so a rewritten section
	// of a 20,000-word manual counts as the small part of it that it is,
	// while a page under 2,000 words is measured as by the divergence.
	DefaultPageShare = 20
)

// CentralOptions are the parameters of the central part. The zero value
// uses [DefaultMinRun] and [DefaultGap].
type CentralOptions struct {
	// MinRun is the shortest coherent run in tokens; zero: DefaultMinRun.
	MinRun int
	// Gap is the largest gap inside a segment in tokens; zero: DefaultGap.
	Gap int
	// Window is the divergence window in tokens; zero: DefaultWindow.
	Window int
	// PageShare, when positive, asks for [Central.PageDivergence] over a
	// window of one PageShare-th of each side's matched frame (at least
	// Window tokens); zero leaves it NaN, at no cost.
	PageShare int
}

// Central is the trusted central part of the LCS of two sequences.
type Central struct {
	// LCS is the length of the whole LCS; Ratio its LCS ratio.
	LCS   int
	Ratio float64
	// Matched is the number of matched tokens inside the central span
	// [A0, A1) of a and [B0, B1) of b.
	Matched        int
	A0, A1, B0, B1 int
	// CentralRatio is the LCS ratio of the central span alone:
	// Matched / ((A1-A0) + (B1-B0) - Matched).
	CentralRatio float64
	// CoverageA and CoverageB are the fractions of a and b that the
	// central span covers: (A1-A0)/len(a) and (B1-B0)/len(b).
	CoverageA, CoverageB float64
	// Divergence is the largest share of unmatched tokens in any window
	// of Window tokens between the first and the last matched token of a
	// side, the smaller of the two sides' values (see [CentralLCS]).
	Divergence float64
	// PageDivergence is Divergence over a window of one
	// [CentralOptions.PageShare]-th of each side's matched frame when that
	// is more than Window tokens: the largest share of the page that
	// differs in one place. NaN unless PageShare is positive.
	PageDivergence float64
}

// segment is a chain of coherent runs runs[first..last] with no gap over
// the segment gap between neighbours; mass is their matched tokens.
type segment struct {
	first, last, mass int
}

// CentralLCS computes the alignment of a and b (see [AppendRuns]) and
// returns its trusted central part. Huang et al. observe that site
// templates sit at the head and tail of pages and make the LCS incoherent
// there, while the main text matches coherently; they keep only the
// coherent central part of the LCS. The rule here:
//
//  1. Coherent runs are matched runs of at least MinRun tokens; shorter
//     runs are chance matches of common words.
//  2. Consecutive coherent runs form a segment when the unmatched gap
//     between them, max of the gaps in a and in b, is at most Gap tokens.
//  3. The central part starts as the segment with the most matched tokens
//     (the first one on a tie).
//  4. It grows to the left to the farthest segment j such that the
//     matched tokens of the segments between j and the central part
//     (j included) are at least the unmatched tokens (gap in a plus gap
//     in b) it has to bridge to reach j, that is where the extension
//     alone still has an LCS ratio of at least 1/2; the same to the right.
//     A head or tail template separated from the content by a page of
//     different text fails this and is dropped; content split by an
//     inserted paragraph passes it and stays whole.
//  5. Matched counts every matched token (short runs included) inside the
//     span from the first to the last run of the central part.
//
// CentralRatio is high for the same content under different templates and
// low for different content under the same template, but only together
// with the coverage: a template alone is a perfectly matched, small span.
//
// Divergence tells the two kinds of edit apart that a whole-page ratio
// mixes up: pages of one site template whose content differs have one
// dense block of unmatched tokens inside the matched frame (the replaced
// article, product or course), while copies of one text differ by edits
// spread over the page or by a different head and tail. For each side,
// the leading and trailing unmatched tokens are dropped (the template
// edges, as above) and the largest count of unmatched tokens in any
// window of Window tokens is taken, over the window. A side shorter than the window is
// measured over its whole matched frame. Divergence is the smaller of
// the two sides' values: a replaced block leaves a dense unmatched window
// on both sides, while a block inserted into one copy (a new section of a
// manual) leaves one only on that side, and stays a near-duplicate.
// ok is false, with a zero Central, when the edit distance exceeds maxD
// (negative: no bound). Cost as [AppendRuns]. Safe for concurrent use.
func CentralLCS(a, b []uint32, maxD int, o CentralOptions) (c Central, ok bool) {
	s := lcsPool.Get().(*lcsScratch)
	defer lcsPool.Put(s)
	runs, _, ok := s.appendRuns(s.runs[:0], a, b, maxD)
	s.runs = runs
	if !ok {
		return Central{}, false
	}
	return s.central(runs, len(a), len(b), o), true
}

func (s *lcsScratch) central(runs []Run, n, m int, o CentralOptions) Central {
	minRun := o.MinRun
	if minRun <= 0 {
		minRun = DefaultMinRun
	}
	maxGap := o.Gap
	if maxGap <= 0 {
		maxGap = DefaultGap
	}
	var c Central
	for _, r := range runs {
		c.LCS += r.Len
	}
	c.Ratio = Ratio(c.LCS, n, m)

	// Steps 1 and 2: segments of coherent runs.
	segs := s.segs[:0]
	prev := -1
	for i, r := range runs {
		if r.Len < minRun {
			continue
		}
		if prev >= 0 {
			p := runs[prev]
			if max(r.A-p.A-p.Len, r.B-p.B-p.Len) <= maxGap {
				sg := &segs[len(segs)-1]
				sg.last = i
				sg.mass += r.Len
				prev = i
				continue
			}
		}
		segs = append(segs, segment{first: i, last: i, mass: r.Len})
		prev = i
	}
	s.segs = segs
	// The divergences read the runs, not the segments: a pair without a
	// coherent run has them too (high: its few matches are chance).
	window := cmp.Or(max(o.Window, 0), DefaultWindow)
	posA, posB := func(r Run) int { return r.A }, func(r Run) int { return r.B }
	c.Divergence = min(s.divergence(runs, n, window, 0, posA), s.divergence(runs, m, window, 0, posB))
	c.PageDivergence = math.NaN()
	if o.PageShare > 0 {
		c.PageDivergence = min(s.divergence(runs, n, window, o.PageShare, posA), s.divergence(runs, m, window, o.PageShare, posB))
	}
	if len(segs) == 0 {
		return c
	}

	// Step 3: the heaviest segment.
	lo := 0
	for i, sg := range segs {
		if sg.mass > segs[lo].mass {
			lo = i
		}
	}
	hi := lo

	// Step 4: extend while the extension has enough matched mass. One
	// scan per side suffices: a segment beyond the best one that fails
	// from the old edge also fails from the new one.
	bridge := func(from, to Run) int { // unmatched tokens between two runs
		return (to.A - from.A - from.Len) + (to.B - from.B - from.Len)
	}
	mass, gaps, best := 0, 0, lo
	for j := lo - 1; j >= 0; j-- {
		gaps += bridge(runs[segs[j].last], runs[segs[j+1].first])
		mass += segs[j].mass
		if mass >= gaps {
			best = j
		}
	}
	lo = best
	mass, gaps, best = 0, 0, hi
	for j := hi + 1; j < len(segs); j++ {
		gaps += bridge(runs[segs[j-1].last], runs[segs[j].first])
		mass += segs[j].mass
		if mass >= gaps {
			best = j
		}
	}
	hi = best

	// Step 5: the span and its matched tokens.
	first, last := runs[segs[lo].first], runs[segs[hi].last]
	c.A0, c.A1 = first.A, last.A+last.Len
	c.B0, c.B1 = first.B, last.B+last.Len
	for _, r := range runs[segs[lo].first : segs[hi].last+1] {
		c.Matched += r.Len
	}
	c.CentralRatio = Ratio(c.Matched, c.A1-c.A0, c.B1-c.B0)
	if n > 0 {
		c.CoverageA = float64(c.A1-c.A0) / float64(n)
	}
	if m > 0 {
		c.CoverageB = float64(c.B1-c.B0) / float64(m)
	}
	return c
}

// divergence returns the largest share of unmatched tokens in a window of
// the given size (or, for share > 0, of one share-th of the frame when
// that is larger) over one side of length n, between its first and last
// matched token; pos gives a run's start on that side. Runs are in
// increasing order on both sides.
//
// With U(x) the unmatched tokens before position x, the count of the
// window ending at j is f(j) = U(j) - U(j-w), and f(j+1) - f(j) is 1 or 0
// for position j unmatched and -1 or 0 for it matched: walking back from
// a largest maximum through its run, f does not fall, so some maximum is
// at a run's start, at w or at the frame's end. Only those windows are
// counted, O(runs) with a cursor for U(j-w), instead of a prefix count
// over every token of the side (7 % of CentralLCS on 64 KB
// near-duplicates).
func (s *lcsScratch) divergence(runs []Run, n, window, share int, pos func(Run) int) float64 {
	start, span, w, ok := divergenceFrame(runs, n, window, share, pos)
	if !ok {
		return 1
	}
	// The runs' edges relative to start, in order: edges[2i] and
	// edges[2i+1] are where run i starts and ends.
	edges := s.gaps[:0]
	for _, r := range runs {
		at := int32(pos(r) - start)
		edges = append(edges, at, at+int32(r.Len))
	}
	s.gaps = edges
	var first, back unmatchedCursor // U(w); U(j-w) for the j in order
	worst := first.at(edges, w)
	matched := 0 // the tokens of the runs before j
	for i := 0; i+1 < len(edges); i += 2 {
		if j := int(edges[i]); j >= w {
			worst = max(worst, j-matched-back.at(edges, j-w))
		}
		matched += int(edges[i+1] - edges[i])
	}
	worst = max(worst, span-matched-back.at(edges, span-w))
	return float64(worst) / float64(w)
}

// divergenceFrame returns where the matched frame of one side starts,
// its length, and the window of [lcsScratch.divergence] over it (the
// larger of window and, for share > 0, span/share); ok is false when
// there is no frame (no run, an empty side or empty runs).
func divergenceFrame(runs []Run, n, window, share int, pos func(Run) int) (start, span, w int, ok bool) {
	if len(runs) == 0 || n == 0 {
		return 0, 0, 0, false
	}
	start = pos(runs[0])
	span = pos(runs[len(runs)-1]) + runs[len(runs)-1].Len - start
	if share > 0 {
		window = max(window, span/share)
	}
	return start, span, min(window, span), span > 0
}

// unmatchedCursor counts the unmatched tokens before a position of one
// side, given the edges of its runs (see [lcsScratch.divergence]), for
// positions that never decrease: runs wholly before the position are
// passed once.
type unmatchedCursor struct {
	run     int // the first run not wholly before the position
	matched int // the tokens of the runs before it
}

// at returns the unmatched tokens before x, x at least the last one asked.
func (c *unmatchedCursor) at(edges []int32, x int) int {
	for 2*c.run+1 < len(edges) && int(edges[2*c.run+1]) <= x {
		c.matched += int(edges[2*c.run+1] - edges[2*c.run])
		c.run++
	}
	m := c.matched
	if 2*c.run < len(edges) {
		m += max(x-int(edges[2*c.run]), 0) // inside the run
	}
	return x - m
}
