package similarity

import "math/bits"

// This file answers the question the verification asks of the LCS: does
// its length reach a given value? The exact length is not needed for
// that, only a proof either way: an upper bound below the value (the
// lengths, the multiset bound, Myers' D limit: [lcsScratch.distance]) or
// a common subsequence at least that long. Near-duplicates have one that
// a greedy walk finds in one pass over the pages ([lcsScratch.greedy],
// [lcsScratch.jumpWalk]), long before Myers' algorithm has the exact
// distance.

// Parameters of the greedy walk.
const (
	// greedyWindow is the largest edit, unmatched tokens of both sides
	// together, across which the greedy walk finds the pages in step
	// again: a sentence or two. A larger edit (an inserted paragraph)
	// stops the forward walk, and the backward walk from the ends takes
	// over.
	greedyWindow = 64
	// greedyConfirm is the number of equal tokens that put the walk in
	// step again after an edit: one common word ("the") would often match
	// by chance, three rarely do, while an edit of ordinary text is
	// followed by many more.
	greedyConfirm = 3
)

// LCSReaches reports whether the longest common subsequence of a and b
// is at least need tokens long, with the bounds lo <= |LCS| <= hi that
// prove it: reached is true exactly when |LCS| >= need, and then
// lo >= need; otherwise hi < need. lo is the length of a common
// subsequence found, hi an upper bound; when they are equal the length
// is known (computed, or the bounds met).
//
// Cheapest proof first: the common prefix and suffix and the shorter
// length; then a common subsequence found by a greedy walk in O(N+M) for
// near-duplicates, which stops as soon as it is long enough, so a pair
// far above the threshold costs a fraction of one pass; then the
// bucketed multiset bound ([lcsScratch.bucketBound]), which settles most
// unrelated pages; then a walk that jumps over site templates
// ([lcsScratch.jumpWalk]); then, for the rest, the bounded exact length
// of [LCS] with the edit distance D = |a|+|b|-2·need. The verification's question "is the LCS ratio at
// least t?" is need = [NeedForRatio](|a|, |b|, t). Pooled memory: no
// allocation once warm. Safe for concurrent use.
func LCSReaches(a, b []uint32, need int) (lo, hi int, reached bool) {
	s := lcsPool.Get().(*lcsScratch)
	lo, hi, reached = s.reaches(a, b, need)
	lcsPool.Put(s)
	return lo, hi, reached
}

// NeedForRatio returns the smallest LCS length of two sequences of
// lengths n and m whose LCS ratio is at least t: the length of
// the edit distance [MaxDForRatio], so that LCSReaches(a, b,
// NeedForRatio(len(a), len(b), t)) answers exactly what LCS(a, b,
// MaxDForRatio(len(a), len(b), t)) does.
func NeedForRatio(n, m int, t float64) int {
	return (n + m - MaxDForRatio(n, m, t) + 1) / 2
}

// reaches is [LCSReaches] on the scratch s; s.settled says which stage
// settled it.
func (s *lcsScratch) reaches(a, b []uint32, need int) (lo, hi int, reached bool) {
	s.settled = LCSStageBound
	pre, suf := commonAffixes(a, b)
	a2, b2 := a[pre:len(a)-suf], b[pre:len(b)-suf]
	base := pre + suf
	hi = base + min(len(a2), len(b2))
	switch {
	case base >= need:
		return base, hi, true
	case hi < need:
		return base, hi, false
	}
	// From here the rest needs rest tokens matched, and at most lim of
	// its tokens may stay unmatched.
	rest := need - base
	total := len(a2) + len(b2)
	lim := total - 2*rest
	s.settled = LCSStageLength
	g := s.greedy(a2, b2, rest, lim, false)
	if g >= rest {
		return base + g, hi, true
	}
	// Pages apart by their multiset of tokens stop here, before the
	// index of the walk below costs them a pass.
	inter := s.bucketBound(a2, b2)
	hi = min(hi, base+inter)
	if inter < rest {
		s.settled = LCSStageBound
		return base + g, hi, false
	}
	// Pages whose heads or tails differ by more than a window (site
	// templates) stop the greedy walk at once; the walk with jumps goes
	// over them.
	w := s.jumpWalk(a2, b2, rest, lim, false)
	if w >= rest {
		return base + w, hi, true
	}
	g = max(g, w)
	d, _ := s.distanceInter(a2, b2, lim, false, inter) // the bound is known
	if d <= lim {
		l := base + (total-d)/2
		return l, l, true
	}
	return base + g, min(hi, base+(total-d)/2), false
}

// greedy returns the length of a common subsequence of a and b found by
// walking both forward, matching equal tokens and, after an edit, going
// on at the nearest pair of positions (fewest tokens skipped on both
// sides together, at most [greedyWindow]; see [paced]) where
// [greedyConfirm] tokens are equal; when no such pair is found the walk
// goes backward from the ends down to where the forward one stopped, the
// same way. It stops as soon as the length reaches need or the unmatched tokens exceed lim (no
// common subsequence it could still find would then be long enough).
// With keep set the matched runs are appended to s.runs, for the tests.
// Cost O(N+M) plus O(w²) for an edit of w tokens.
func (s *lcsScratch) greedy(a, b []uint32, need, lim int, keep bool) int {
	n, m := len(a), len(b)
	l, i, j, skipped := s.walk(a, b, need, lim, false, keep)
	if l >= need || i == n || j == m {
		return l
	}
	// Backward: a[ie:] and b[je:] are walked, down to a[i] and b[j].
	ie, je := n, m
	for ie > i && je > j && l < need {
		e0 := ie
		for ie > i && je > j && a[ie-1] == b[je-1] {
			ie--
			je--
		}
		if keep && e0 > ie {
			s.runs = append(s.runs, Run{A: ie, B: je, Len: e0 - ie})
		}
		l += e0 - ie
		if ie == i || je == j || l >= need {
			break
		}
		p, q, ok := resyncBack(a[i:ie], b[j:je], paced(skipped, i+j+n-ie+m-je, n+m, lim))
		if !ok {
			break
		}
		ie, je, skipped = ie-p, je-q, skipped+p+q
	}
	return l
}

// forwardRun returns the ends of the run of equal tokens of a and b that
// starts at a[i] and b[j], appending it to s.runs when keep is set and it
// is not empty.
func (s *lcsScratch) forwardRun(a, b []uint32, i, j int, keep bool) (int, int) {
	i0, j0 := i, j
	for i < len(a) && j < len(b) && a[i] == b[j] {
		i++
		j++
	}
	if keep && i > i0 {
		s.runs = append(s.runs, Run{A: i0, B: j0, Len: i - i0})
	}
	return i, j
}

// paced returns the largest edit the greedy walk may skip next, having
// skipped tokens of the walked ones of total: at most [greedyWindow], and
// 0 (stop) once it skips more than its share of lim, the tokens that may
// stay unmatched, plus one window. Near-duplicates skip a few percent of
// the tokens, far below the share of any useful ratio; unrelated pages
// skip most of them, and so stop after a few windows instead of walking
// the pages before the exact search proves them apart.
func paced(skipped, walked, total, lim int) int {
	share := lim*walked/total + greedyWindow
	return max(min(greedyWindow, share-skipped, lim-skipped), 0)
}

// jumpConfirm is the number of equal tokens at which the walk with jumps
// ([lcsScratch.jumpWalk]) goes on after a jump over more than a window:
// a trigram of common words may occur anywhere, a run of eight is the
// same text.
const jumpConfirm = 8

// jumpChain is the most occurrences of one trigram of b that a jump
// looks at: a trigram that repeats more often (a table row's pattern)
// is skipped for the next, so that a jump costs O(1) a position of a
// whatever the input.
const jumpChain = 16

// jumpWalk returns the length of a common subsequence of a and b found
// by a forward walk as [lcsScratch.greedy]'s, which after an edit larger
// than a window jumps to the next position of a whose next jumpConfirm
// tokens occur in b at or after the walk's position there (the first
// such occurrence, found through an index of b's trigrams): pages that
// share their content under different site templates match the content
// after a jump over the head. It stops once the length reaches need or
// no jump keeps the unmatched tokens within lim. O(N+M) for the index
// and the walk, with pooled memory; a and b have at least one token.
func (s *lcsScratch) jumpWalk(a, b []uint32, need, lim int, keep bool) int {
	s.indexTrigrams(b)
	l, _, _, _ := s.walk(a, b, need, lim, true, keep)
	return l
}

// walk is the forward walk of [lcsScratch.greedy] (jumps false: an edit
// of up to the [paced] window) and of [lcsScratch.jumpWalk] (jumps set:
// any edit that keeps the unmatched tokens within lim, jumping through
// the trigram index past a window). It returns the length found, where
// it stopped in a and b, and the tokens it skipped.
func (s *lcsScratch) walk(a, b []uint32, need, lim int, jumps, keep bool) (l, i, j, skipped int) {
	n, m := len(a), len(b)
	for i < n && j < m && l < need {
		i0 := i
		i, j = s.forwardRun(a, b, i, j, keep)
		l += i - i0
		if i == n || j == m || l >= need {
			break
		}
		w := min(greedyWindow, lim-skipped)
		if !jumps {
			w = paced(skipped, i+j, n+m, lim)
		}
		p, q, ok := resync(a[i:], b[j:], w)
		if ok {
			p, q = i+p, j+q
		} else if !jumps {
			break
		} else if p, q, ok = s.jump(a, b, i, j, lim-skipped); !ok {
			break
		}
		skipped += p - i + q - j
		i, j = p, q
	}
	return l, i, j, skipped
}

// jump returns the first position p > i of a, and the first q >= j of b,
// at which jumpConfirm equal tokens (or equal tokens up to the end) start,
// skipping at most budget tokens in all, among the first [jumpChain]
// occurrences of each trigram; ok is false when there is none.
func (s *lcsScratch) jump(a, b []uint32, i, j, budget int) (p, q int, ok bool) {
	mask := int32(len(s.triHead) - 1)
	for p = i + 1; p+3 <= len(a) && p-i <= budget; p++ {
		k := trigram(a, p)
		h := int32(tokenSlot(k, s.triShift))
		for s.triHead[h] != 0 && s.triKey[h] != k {
			h = (h + 1) & mask
		}
		seen := 0
		for q = int(s.triHead[h]) - 1; q >= 0 && p-i+q-j <= budget && seen < jumpChain; q = int(s.triNext[q]) {
			seen++
			if q < j {
				continue
			}
			c, end := 0, min(jumpConfirm, len(a)-p, len(b)-q)
			for c < end && a[p+c] == b[q+c] {
				c++
			}
			if c == end {
				return p, q, true
			}
		}
	}
	return 0, 0, false
}

// trigram returns a hash of s[i:i+3].
func trigram(s []uint32, i int) uint32 {
	return (s[i]*0x9E3779B1+s[i+1])*0x85EBCA77 + s[i+2]
}

// indexTrigrams fills the table of b's trigrams for [lcsScratch.jump]:
// the first position of each, and from each position the next one of
// the same trigram, in pooled memory.
func (s *lcsScratch) indexTrigrams(b []uint32) {
	size := 2
	for size < 2*len(b) {
		size <<= 1
	}
	s.triShift = uint(32 - bits.TrailingZeros(uint(size)))
	s.triHead = resize(s.triHead, size)
	clear(s.triHead)
	s.triKey = resize(s.triKey, size)
	s.triNext = resize(s.triNext, len(b))
	mask := uint32(size - 1)
	for q := len(b) - 3; q >= 0; q-- { // descending: the chains ascend
		k := trigram(b, q)
		h := tokenSlot(k, s.triShift)
		for s.triHead[h] != 0 && s.triKey[h] != k {
			h = (h + 1) & mask
		}
		s.triKey[h] = k
		s.triNext[q] = s.triHead[h] - 1
		s.triHead[h] = int32(q + 1)
	}
}

// resync returns the nearest (p, q), smallest p+q from 1 to w (then
// smallest p), at which a[p:] and b[q:] start with greedyConfirm equal
// tokens (or with equal tokens up to the end of one of them), given
// a[0] != b[0]. The positions q <= w of b's tokens go into a small hash
// table first, so a search costs O(w) look-ups instead of the O(w²)
// pairs of the window: an edit costs little more than its tokens, and
// unrelated pages, where no pair is found, stop at once.
func resync(a, b []uint32, w int) (p, q int, ok bool) {
	return resyncDir(a, b, w, false)
}

// resyncBack is [resync] from the ends: the smallest p+q at which
// a[:len(a)-p] and b[:len(b)-q] end with equal tokens, given that their
// last tokens differ.
func resyncBack(a, b []uint32, w int) (p, q int, ok bool) {
	return resyncDir(a, b, w, true)
}

// resyncNear is the largest sum of skipped tokens that resync tries pair
// by pair (36 pairs) before it builds its table.
const resyncNear = 8

// confirmed reports whether a[p:] and b[q:] (reversed when back is set)
// start with greedyConfirm equal tokens, or with equal tokens up to the
// end of one of them; a[p] and b[q] are equal.
func confirmed(a, b []uint32, p, q int, back bool) bool {
	k := min(greedyConfirm, len(a)-p, len(b)-q)
	for c := 1; c < k; c++ {
		x, y := a[p+c], b[q+c]
		if back {
			x, y = a[len(a)-1-p-c], b[len(b)-1-q-c]
		}
		if x != y {
			return false
		}
	}
	return true
}

// resyncSlots is the size of resync's table: twice the window's
// positions, so that probes stay short.
const resyncSlots = 2 * (greedyWindow + 1)

// resyncDir is [resync], on the sequences reversed when back is set.
func resyncDir(a, b []uint32, w int, back bool) (p, q int, ok bool) {
	w = min(w, greedyWindow)
	at := func(s []uint32, i int) uint32 {
		if back {
			return s[len(s)-1-i]
		}
		return s[i]
	}
	// Most edits are a word or two: try the pairs of small sums first.
	for sum := 1; sum <= min(w, resyncNear); sum++ {
		for p := max(0, sum-len(b)+1); p <= sum && p < len(a); p++ {
			q := sum - p
			if at(a, p) == at(b, q) && confirmed(a, b, p, q, back) {
				return p, q, true
			}
		}
	}
	if w <= resyncNear {
		return 0, 0, false
	}
	var (
		keys [resyncSlots]uint32
		head [resyncSlots]int8 // first position of the key + 1, 0: empty
		next [greedyWindow + 1]int8
	)
	slot := func(x uint32) int { return int(uint64(x*0x9E3779B1) * resyncSlots >> 32) }
	for q := min(w, len(b)-1); q >= 0; q-- { // descending: chains ascend
		x := at(b, q)
		h := slot(x)
		for head[h] != 0 && keys[h] != x {
			h = (h + 1) % resyncSlots
		}
		keys[h] = x
		next[q] = head[h] - 1
		head[h] = int8(q + 1)
	}
	best, bp := w+1, 0
	for p := 0; p < best && p < len(a); p++ {
		x := at(a, p)
		h := slot(x)
		for head[h] != 0 && keys[h] != x {
			h = (h + 1) % resyncSlots
		}
		for q := int(head[h]) - 1; q >= 0 && p+q < best; q = int(next[q]) {
			if confirmed(a, b, p, q, back) {
				best, bp = p+q, p
				break
			}
		}
	}
	if best > w {
		return 0, 0, false
	}
	return bp, best - bp, true
}
