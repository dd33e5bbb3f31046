package similarity

import "slices"

// This file drops the tokens that no common subsequence can hold before
// the LCS length is searched: a token of one sequence that does not
// occur in the other is in no common subsequence, so the LCS of the two
// sequences without such tokens is the LCS of the two with them, and
// the edit distance falls by one for each token dropped (GNU diff
// discards the lines of one file absent from the other the same way, in
// discard_confusing_lines, for its speed). Myers' search costs about
// D²/4 steps, so pages that differ by a few percent of new tokens
// (dates, names, counters, a replaced paragraph) cost a fifth to a half
// less; the bit-parallel pass, O(N·M/64), a little less.

// sharedDistance is [lcsScratch.distance] (without the alignment) on a
// and b less the tokens of each that the buckets of the last
// [lcsScratch.bucketBound] of a and b show absent from the other, plus
// the number of tokens dropped, when the search is dear enough to risk
// a pass over both that may drop nothing: ok is false, and nothing is
// done, when not. dmin is a lower bound of the distance.
//
// The search costs at least dmin²/4 steps of about 2 ns, the passes
// about 0.8 ns a token (BenchmarkLCS), so they cost at most two fifths
// of the least search when dmin² >= discardFactor·(|a|+|b|), and far
// less as a rule (D is well above dmin on near-duplicates); each token
// dropped saves about D/2 steps.
func (s *lcsScratch) sharedDistance(a, b []uint32, lim, dmin int) (d int, exact, ok bool) {
	if dmin*dmin < discardFactor*(len(a)+len(b)) {
		return 0, false, false
	}
	s.keptA = s.dropAbsent(s.keptA, a, true)
	s.keptB = s.dropAbsent(s.keptB, b, false)
	fa, fb := s.keptA, s.keptB
	dropped := len(a) + len(b) - len(fa) - len(fb)
	if dropped == 0 {
		return 0, false, false
	}
	pre, suf := commonAffixes(fa, fb)
	fa, fb = fa[pre:len(fa)-suf], fb[pre:len(fb)-suf]
	if len(fa) == 0 || len(fb) == 0 {
		return dropped + len(fa) + len(fb), true, true
	}
	rest := lim - dropped
	if diff := max(len(fa)-len(fb), len(fb)-len(fa)); diff > rest {
		s.settled = LCSStageBound
		return dropped + diff, false, true
	}
	d, exact = s.search(fa, fb, rest, max(dmin-dropped, 0), false)
	return dropped + d, exact, true
}

// discardFactor is the least dmin²/(|a|+|b|) at which
// [lcsScratch.sharedDistance] drops absent tokens.
const discardFactor = 4

// dropAbsent returns dst holding x without its tokens that the buckets
// of the last [lcsScratch.bucketBound] show absent from the other
// sequence (x is a when first is set, else b), in dst's memory when
// large enough.
func (s *lcsScratch) dropAbsent(dst, x []uint32, first bool) []uint32 {
	dst = slices.Grow(dst[:0], len(x))
	counted := first != s.bucketSwap // x is the sequence counted
	if s.bucketWide {
		return dropAbsent(dst, x, s.buckets, s.bucketShift, counted)
	}
	return dropAbsent(dst, x, s.buckets16, s.bucketShift, counted)
}

// dropAbsent appends to dst the tokens of x that the buckets c of
// [countBuckets] show may occur in the other sequence, and returns it:
// for x the sequence counted, those in buckets with the top bit (the
// other took from them); for x the other, those in buckets not zero.
// It copies the runs between the dropped tokens, which are few: a copy
// token by token, with the end moved when one is kept, made each store
// wait for the test before it and cost three times a pass that only
// reads.
func dropAbsent[T uint16 | uint32](dst, x []uint32, c []T, shift uint, counted bool) []uint32 {
	shift &= 31
	keep := ^T(0)
	if counted {
		keep = topBit[T]()
	}
	start := 0
	for i, t := range x {
		if c[tokenSlot(t, shift)]&keep == 0 {
			dst = append(dst, x[start:i]...)
			start = i + 1
		}
	}
	return append(dst, x[start:]...)
}
