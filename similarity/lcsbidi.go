package similarity

// This file holds the bidirectional form of Myers' greedy algorithm
// ("An O(ND) Difference Algorithm and Its Variations", Algorithmica 1986,
// §4b, the middle snake): a forward search from the start of both
// sequences and a reverse one from their ends run round by round and
// stop when their furthest-reaching paths on a diagonal overlap. The
// distance D is then found after ⌈D/2⌉ rounds of each, about D²/2
// diagonal steps instead of the D² of the forward search alone, which is
// what the LCS length of near-duplicates costs ([lcsScratch.distance]).
// It gives the distance; with bidiTrace set it also keeps the V row of
// every whole forward round in the trace, which are the first rounds of
// the forward search the alignment backtracks ([lcsScratch.myersResume]),
// so the alignment does not repeat them.

// bidiInit prepares the forward (s.v) and reverse (s.vr) V arrays for
// distances up to lim, that is rounds up to ⌈lim/2⌉.
func (s *lcsScratch) bidiInit(lim int) {
	rounds := (lim + 1) / 2
	size := 2*rounds + 3
	s.v = fillInt32(s.v, size, -1)
	s.vr = fillInt32(s.vr, size, -1)
	s.off = rounds + 1
	s.v[s.off+1] = 0
	s.vr[s.off+1] = 0
	s.bidiDone, s.bidiMet, s.bidiLow = -1, -1, 0
	s.trace, s.traced = s.trace[:0], 0
}

// fillInt32 returns s with length n, every entry x, reusing its capacity.
func fillInt32(s []int32, n int, x int32) []int32 {
	s = resize(s, n)
	for i := range s {
		s[i] = x
	}
	return s
}

// bidiDistance returns the edit distance of a and b, two non-empty
// sequences without a common first or last token, and ok = true when it
// is found within lim (at most the lim of the last bidiInit); the
// distance found may then be lim+1 (the rounds that settle lim settle
// lim+1 too). Otherwise ok is false: D > lim. A search that stopped
// resumes at the round after the last one done; one that met returns
// its distance again.
//
// Forward round d extends the furthest-reaching d-paths on diagonals
// k = x-y in [-d, d]; reverse round d the same on the reversed sequences,
// where diagonal k' stands for the original k = Δ-k' (Δ = n-m). As
// D ≡ Δ (mod 2), an odd Δ meets during a forward round d against the
// reverse round d-1 (D = 2d-1) and an even one during a reverse round d
// against the forward round d (D = 2d); paths on one diagonal overlap
// when the forward x plus the reverse x reach n. Diagonals are clipped
// to the band [-m, n], as in [lcsScratch.myersRounds].
func (s *lcsScratch) bidiDistance(a, b []uint32, lim int) (d int, ok bool) {
	if s.bidiMet >= 0 {
		return s.bidiMet, true
	}
	n, m := len(a), len(b)
	delta := n - m
	odd := delta&1 != 0
	vf, vr, off := s.v, s.vr, s.off
	for d := s.bidiDone + 1; d <= (lim+1)/2; d++ {
		lo, hi := diagonals(d, n, m)
		extendForward(a, b, vf, off, lo, hi)
		// A meeting at round d proves D <= 2d-1 (2d below), so none
		// can come before the rounds of the lower bound bidiLow: the
		// test, a pass over the round, waits for them.
		if odd && d > 0 && 2*d-1 >= s.bidiLow && meets(vf, vr, off, delta, n, lo, hi, d-1) {
			s.bidiMet = 2*d - 1
			return s.bidiMet, true
		}
		if s.bidiTrace { // the forward round is whole: keep it for the alignment
			s.trace = append(s.trace, vf[off-d:off+d+1]...)
			s.traced = d + 1
		}
		extendReverse(a, b, vr, off, lo, hi)
		if !odd && 2*d >= s.bidiLow && meets(vr, vf, off, delta, n, lo, hi, d) {
			s.bidiMet = 2 * d
			return s.bidiMet, true
		}
		s.bidiDone = d
	}
	return lim + 1, false
}

// extendForward does one round of the forward search on the diagonals
// lo..hi (step 2) of v: each furthest-reaching path leaves its
// predecessor ([pathStart]) and follows the snake of equal tokens. A
// function of its own, so that its few variables stay in registers. The
// diagonals are independent (each reads the previous round's k±1): with
// AVX2 all but the last few go eight at a time to [extendBlocks].
func extendForward(a, b []uint32, v []int32, off, lo, hi int) {
	if blocks := (hi - lo + 2) / 16; stepAVX2 && blocks > 0 {
		extendBlocks(a, b, v, off, lo, blocks, 1)
		lo += 16 * blocks
	}
	n, m := len(a), len(b)
	for k := lo; k <= hi; k += 2 {
		x := pathStart(v, off, k)
		y := x - k
		// Unsigned tests: x, y >= 0 on the diagonals visited, and
		// they let the compiler drop the index checks.
		for uint(x) < uint(n) && uint(y) < uint(m) && a[x] == b[y] {
			x++
			y++
		}
		v[off+k] = int32(x)
	}
}

// extendReverse is [extendForward] for the reverse search, whose x on
// diagonal k counts tokens from the ends of a and b.
func extendReverse(a, b []uint32, v []int32, off, lo, hi int) {
	if blocks := (hi - lo + 2) / 16; stepAVX2 && blocks > 0 {
		extendBlocks(a, b, v, off, lo, blocks, -1)
		lo += 16 * blocks
	}
	n, m := len(a), len(b)
	for k := lo; k <= hi; k += 2 {
		x := pathStart(v, off, k)
		i, j := n-1-x, m-1-(x-k) // the tokens x and y of the reversed sequences
		for uint(i) < uint(n) && uint(j) < uint(m) && a[i] == b[j] {
			i--
			j--
		}
		v[off+k] = int32(n - 1 - i)
	}
}

// meets reports whether a path of the round just done in v (diagonals
// lo..hi) overlaps the other search's path on the same diagonal, w's
// diagonal delta-k, which its last round reached when within span of 0:
// their x add up to n or more.
func meets(v, w []int32, off, delta, n, lo, hi, span int) bool {
	klo, khi := max(lo, delta-span), min(hi, delta+span)
	if klo > khi {
		return false
	}
	// The round's diagonals klo..khi of v against w's delta-khi..delta-klo
	// in reverse, on subslices the compiler proves in bounds: inlined
	// into the search with its many live values, the loop spilled them
	// and cost an eighth of the search.
	return rowsMeet(v[off+klo:off+khi+1], w[off+delta-khi:off+delta-klo+1], n)
}

// rowsMeet reports whether vs[i] + ws[len(ws)-1-i] >= n for an even i:
// the blocks of eight pairs that [meetsBlocks] takes, then the rest.
func rowsMeet(vs, ws []int32, n int) bool {
	met, i := meetsBlocks(vs, ws, n)
	if met {
		return true
	}
	for j := len(ws) - 1 - i; i < len(vs) && j >= 0; i, j = i+2, j-2 {
		if int(vs[i])+int(ws[j]) >= n {
			return true
		}
	}
	return false
}
