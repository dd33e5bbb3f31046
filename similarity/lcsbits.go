package similarity

import (
	"math/bits"
)

// This file holds the bit-parallel LCS length of Allison and Dix ("A
// bit-string longest-common-subsequence algorithm", IPL 1986) in the form
// of Hyyrö ("Bit-parallel LCS-length computation revisited", AWOCA 2004):
// the row differences of the LCS table of a against a prefix of b are one
// bit per token of a, and one token of b updates all of them with an add,
// an AND and an OR per machine word:
//
//	U = V & PM[b_j];  V = (V + U) | (V &^ PM[b_j])
//
// where PM[c] marks the positions of token c in a. V starts as all ones
// and the LCS length is the number of zero bits. Cost O(⌈m/64⌉·n) for
// |a| = m, |b| = n, whatever the edit distance, plus O(m) to build the
// masks; a token of b absent from a leaves V unchanged and costs one
// look-up, and one present updates only the words of its positions and
// those its carry runs through, a few in practice (see [wordMasks]).

// wordMasks maps the distinct tokens of one sequence to their position
// masks, stored sparsely: token t has the words ks[at[t]:at[t+1]] of its
// mask that hold a position, with their bits in ps. A token occurs a few
// times in a page, so a step touches a few words instead of all ⌈m/64⌉,
// and the masks take O(m) memory instead of O(d·m/64) for d distinct
// tokens. Its memory is reused from call to call.
type wordMasks struct {
	keys  []uint32
	slot  []int32 // token index + 1; 0 marks an empty slot
	shift uint
	tok   []int32 // token index of each position
	last  []int32 // last word index seen of each token, then the fill cursor
	at    []int32 // first entry of each token; at[d] is the total
	ks    []int32
	ps    []uint64
	w     int // words of a row
	// Tokens with entries in over a quarter of the words (the, of, a)
	// also get a dense mask: the branch-free pass over every word is
	// cheaper than the sparse one there. dense[t] is its index + 1.
	dense []int32
	masks []uint64
	// cnt and rem count each token's occurrences in the sequence and in
	// what is left of the other one, for the multiset bound.
	cnt, rem []int32
}

// tokenSlot returns the table slot of x for a table of 1<<(32-shift)
// entries (Fibonacci hashing).
func tokenSlot(x uint32, shift uint) uint32 {
	return (x * 0x9E3779B1) >> shift
}

// build fills the masks of a (len(a) >= 1).
func (t *wordMasks) build(a []uint32) {
	size := 1
	for size < 2*len(a) {
		size <<= 1
	}
	t.shift = uint(32 - bits.TrailingZeros(uint(size)))
	if cap(t.slot) < size {
		t.slot = make([]int32, size)
		t.keys = make([]uint32, size)
	}
	t.slot, t.keys = t.slot[:size], t.keys[:size]
	clear(t.slot)
	t.w = (len(a) + 63) / 64
	t.tok = resize(t.tok, len(a))
	t.last = t.last[:0]
	t.at = t.at[:0]
	t.cnt = t.cnt[:0]
	mask := uint32(size - 1)
	// Pass 1: token indexes, and the entries (distinct words) of each.
	for i, x := range a {
		h := tokenSlot(x, t.shift)
		for t.slot[h] != 0 && t.keys[h] != x {
			h = (h + 1) & mask
		}
		if t.slot[h] == 0 {
			t.keys[h] = x
			t.slot[h] = int32(len(t.last) + 1)
			t.last = append(t.last, -1)
			t.at = append(t.at, 0)
			t.cnt = append(t.cnt, 0)
		}
		id := t.slot[h] - 1
		t.tok[i] = id
		t.cnt[id]++
		if k := int32(i >> 6); t.last[id] != k {
			t.last[id] = k
			t.at[id]++
		}
	}
	// Pass 2: prefix sums, then the entries in order of position.
	total := int32(0)
	for id, c := range t.at {
		t.at[id] = total
		t.last[id] = total // fill cursor
		total += c
	}
	t.at = append(t.at, total)
	t.ks = resize(t.ks, int(total))
	t.ps = resize(t.ps, int(total))
	t.dense = resize(t.dense, len(t.at)-1)
	t.masks = t.masks[:0]
	for id := range t.dense {
		t.dense[id] = 0
		if 4*(t.at[id+1]-t.at[id]) > int32(t.w) {
			n := len(t.masks)
			t.masks = growZeroed(t.masks, n+t.w)
			t.dense[id] = int32(n/t.w + 1)
		}
	}
	for i, id := range t.tok {
		if d := t.dense[id]; d != 0 {
			t.masks[int(d-1)*t.w+i>>6] |= 1 << (uint(i) & 63)
		}
		k := int32(i >> 6)
		c := t.last[id]
		if c == t.at[id] || t.ks[c-1] != k {
			t.ks[c] = k
			t.ps[c] = 0
			c++
			t.last[id] = c
		}
		t.ps[c-1] |= 1 << (uint(i) & 63)
	}
}

// growZeroed returns s extended to length n with zeros, reusing its
// capacity.
func growZeroed(s []uint64, n int) []uint64 {
	if cap(s) < n {
		s2 := make([]uint64, n, max(n, 2*cap(s)))
		copy(s2, s)
		return s2
	}
	old := len(s)
	s = s[:n]
	clear(s[old:])
	return s
}

// resize returns s with length n, reusing its capacity; the contents are
// not kept.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// id returns the token index of x, or -1 when x is not in the sequence.
func (t *wordMasks) id(x uint32) int32 {
	size := uint32(len(t.slot))
	h := tokenSlot(x, t.shift)
	for {
		s := t.slot[h]
		if s == 0 || t.keys[h] == x {
			return s - 1
		}
		h = (h + 1) & (size - 1)
	}
}

// intersect sets rem to the occurrences of each token in b and returns
// the size of the multiset intersection of the two sequences,
// Σ min(cnt, rem): a bound of their LCS length.
func (t *wordMasks) intersect(b []uint32) int {
	t.rem = resize(t.rem, len(t.cnt))
	clear(t.rem)
	n := 0
	for _, x := range b {
		if id := t.id(x); id >= 0 {
			if t.rem[id] < t.cnt[id] {
				n++
			}
			t.rem[id]++
		}
	}
	return n
}

// maskOf returns the mask of token index id, as mask does.
func (t *wordMasks) maskOf(id int32) (dense []uint64, ks []int32, ps []uint64) {
	if d := t.dense[id]; d != 0 {
		at := int(d-1) * t.w
		return t.masks[at : at+t.w : at+t.w], nil, nil
	}
	lo, hi := t.at[id], t.at[id+1]
	return nil, t.ks[lo:hi:hi], t.ps[lo:hi:hi]
}

// denseStep applies one token's dense mask pm to the row v in place,
// logging the old value of each word it changes when log is set, and
// returns the carry out of the top word.
func (s *lcsScratch) denseStep(v, pm []uint64, log bool) (carry uint64) {
	pm = pm[:len(v)]
	if log {
		return s.denseStepLogged(v, pm)
	}
	// Without the log the plain pass is the cheaper: the skips of
	// denseStepLogged cost more than they save in BenchmarkLCS's length.
	for k, x := range v {
		p := pm[k]
		var sum uint64
		sum, carry = bits.Add64(x, x&p, carry)
		v[k] = sum | (x &^ p)
	}
	return carry
}

// denseStepLogged is [lcsScratch.denseStep] with the log.
func (s *lcsScratch) denseStepLogged(v, pm []uint64) (carry uint64) {
	pm = pm[:len(v)]
	// Two kinds of word stay as they are and leave the carry as it
	// came: without carry in, one whose ones miss the token's positions
	// (x&p == 0: (x + 0) | (x &^ p) = x); with carry in, one of all ones
	// (x + p + 1 overflows to p, and p | ^p = x), as the rows start. Most
	// words of a dense token's step are such (on the Debian crawl's long
	// pages 6 M of the 44 M words stepped changed), so they are skipped
	// four at a time, and the step computes and logs the others only.
	lg := s.log
	for k := 0; k < len(v); k++ {
		if carry == 0 {
			for ; k <= len(v)-4; k += 4 {
				if v[k]&pm[k]|v[k+1]&pm[k+1]|v[k+2]&pm[k+2]|v[k+3]&pm[k+3] != 0 {
					break
				}
			}
			for k < len(v) && v[k]&pm[k] == 0 {
				k++
			}
		} else {
			for ; k <= len(v)-4; k += 4 {
				if v[k]&v[k+1]&v[k+2]&v[k+3] != ^uint64(0) {
					break
				}
			}
			for k < len(v) && v[k] == ^uint64(0) {
				k++
			}
		}
		if k == len(v) {
			break
		}
		x, p := v[k], pm[k]
		var sum uint64
		sum, carry = bits.Add64(x, x&p, carry)
		if y := sum | (x &^ p); y != x {
			lg = append(lg, undo{int32(k), x})
			v[k] = y
		}
	}
	if cap(lg) == cap(s.log) {
		s.log = s.log[:len(lg)] // the same array: no pointer written, no write barrier
	} else {
		s.log = lg
	}
	return carry
}

// step applies one token's sparse mask to the row v in place: the
// update V = (V + (V & PM)) | (V &^ PM) on the words of the mask, and the
// carry of the addition through the words above until it is absorbed
// (a word without mask bits becomes (x + carry) | x). Only the words
// that change are written; with log set, the old value of each is
// appended to s.log (walking back, a word a token left as it was needs
// no undoing). It returns the carry out of the top word.
func (s *lcsScratch) step(v []uint64, ks []int32, ps []uint64, log bool) (carry uint64) {
	pos := 0
	for e, k32 := range ks {
		k := int(k32)
		if carry != 0 && pos < k {
			_, carry = s.ripple(v, pos, k, log)
		}
		x, p := v[k], ps[e]
		var sum uint64
		sum, carry = bits.Add64(x, x&p, carry)
		if y := sum | (x &^ p); y != x {
			if log {
				s.log = append(s.log, undo{k32, x})
			}
			v[k] = y
		}
		pos = k + 1
	}
	if carry != 0 {
		carry = s.rippleTop(v, pos, log)
	}
	return carry
}

// rippleTop is [lcsScratch.ripple] from pos to the top of the row, whose
// words above a token's last mask word are mostly all ones on long rows
// (they start so): those are passed four at a time first. Between mask
// words the gaps are short and ripple, inlined, is the cheaper.
func (s *lcsScratch) rippleTop(v []uint64, pos int, log bool) uint64 {
	for ; pos <= len(v)-4; pos += 4 {
		if v[pos]&v[pos+1]&v[pos+2]&v[pos+3] != ^uint64(0) {
			break
		}
	}
	_, carry := s.ripple(v, pos, len(v), log)
	return carry
}

// ripple adds a carry of one to the words v[pos:end] without mask bits,
// each becoming (x + carry) | x, until a word absorbs it, and returns the
// next word and the carry left. A word of all ones passes the carry on
// and stays as it was: it is neither written nor logged (on long
// sequences the rows start all ones and most carries cross such words).
func (s *lcsScratch) ripple(v []uint64, pos, end int, log bool) (int, uint64) {
	for ; pos < end; pos++ {
		x := v[pos]
		sum := x + 1
		if sum == 0 {
			continue
		}
		if log {
			s.log = append(s.log, undo{int32(pos), x})
		}
		v[pos] = sum | x
		return pos + 1, 0
	}
	return pos, 1
}

// undo is the old value of one word of the row, to walk the rows back.
type undo struct {
	k int32
	x uint64
}

// onesRow sets every word of v to all ones: the row of the empty prefix.
func onesRow(v []uint64) {
	for k := range v {
		v[k] = ^uint64(0)
	}
}

// bitLength returns the LCS length of a and b by the bit-parallel
// algorithm, a being the sequence of the masks (the shorter one is the
// cheaper choice). Both must be non-empty.
func (s *lcsScratch) bitLength(a, b []uint32) int {
	s.masks.build(a)
	s.masks.intersect(b)
	l, _ := s.bitCount(b, 0, false)
	return l
}

// bitCount runs the bit-parallel algorithm over b against the masks
// built and intersected with b, and returns the LCS length, ok = true; or
// ok = false and an upper bound below need as soon as the length cannot
// reach need: the length so far plus the multiset intersection of the
// rest of b with a bounds it. The length so far grows by one exactly
// when the row's addition carries out of its top word (a row's zeros
// count the LCS, and the padding bits above the sequence stay one).
//
// With log set it also keeps what [lcsScratch.bitBack] needs to walk the
// rows back: the old value of every word each token changes (s.log) and
// where each token's entries start (s.logAt).
func (s *lcsScratch) bitCount(b []uint32, need int, log bool) (l int, ok bool) {
	t := &s.masks
	inter := 0
	for id, c := range t.rem {
		inter += int(min(c, t.cnt[id]))
	}
	if inter < need {
		return inter, false
	}
	v := resize(s.row, t.w)
	s.row = v
	onesRow(v)
	if log {
		s.log = s.log[:0]
		s.logAt = resize(s.logAt, len(b)+1)
	}
	for j, x := range b {
		if log {
			s.logAt[j] = int32(len(s.log))
		}
		id := t.id(x)
		if id < 0 {
			continue
		}
		if t.rem[id] <= t.cnt[id] {
			inter-- // this occurrence leaves the intersection of the rest
		}
		t.rem[id]--
		var carry uint64
		switch pm, ks, ps := t.maskOf(id); {
		case pm != nil:
			carry = s.denseStep(v, pm, log)
		default:
			carry = s.step(v, ks, ps, log)
		}
		l += int(carry)
		if l+inter < need {
			return l + inter, false
		}
	}
	if log {
		s.logAt[len(b)] = int32(len(s.log))
	}
	return l, true
}

// bitRuns appends the matched runs of one LCS of a and b (both non-empty)
// to dst, in order of position, shifted by pre, and returns dst. It runs
// the bit-parallel algorithm on the reversed sequences, logging the old
// value of every word each token of b changes, and walks back from their
// end, the start of a and b, undoing the log token by token to have the
// row of each prefix of b: a match is always taken (for equal tokens the
// LCS table grows by one along the diagonal), else a one bit in the row
// says the table does not grow with the token of a, which is skipped,
// else the token of b is skipped. Matches are so taken as early as
// possible, as the snakes of Myers' algorithm take them, and the two
// mostly agree where several LCSs exist (repeated words), which the
// central part and the divergence depend on. Cost that of [bitLength]
// plus O(n+m), and 12 bytes a word written.
func (s *lcsScratch) bitRuns(dst []Run, a, b []uint32, pre int) []Run {
	s.revA = reverseInto(s.revA, a)
	s.revB = reverseInto(s.revB, b)
	s.masks.build(s.revA)
	s.masks.intersect(s.revB)
	s.bitCount(s.revB, 0, true)
	return s.bitBack(dst, pre)
}

// bitBack is the walk back of [lcsScratch.bitRuns] over s.revA (the
// sequence of the masks) and s.revB, from the row and log a logged
// bitCount of s.revB left.
func (s *lcsScratch) bitBack(dst []Run, pre int) []Run {
	a, b, v, logAt := s.revA, s.revB, s.row, s.logAt
	// (i, j) walks the reversed sequences from their end with v the row
	// after b[:j]; a run of the reversed ones at (i, j) is one of a and b
	// at (n-i-len, m-j-len), and runs come out in order of position.
	n, m := len(a), len(b)
	i, j := n, m
	runLen := 0
	flush := func() {
		if runLen > 0 {
			dst = append(dst, Run{A: n - i - runLen + pre, B: m - j - runLen + pre, Len: runLen})
			runLen = 0
		}
	}
	back := func() { // j--, v becomes the row after b[:j-1]
		j--
		for e := int(logAt[j+1]) - 1; e >= int(logAt[j]); e-- {
			v[s.log[e].k] = s.log[e].x
		}
	}
	for i > 0 && j > 0 {
		if a[i-1] == b[j-1] {
			i--
			back()
			runLen++
			continue
		}
		flush()
		if v[(i-1)>>6]>>(uint(i-1)&63)&1 != 0 {
			i--
		} else {
			back()
		}
	}
	flush()
	return dst
}

// reverseInto returns the reverse of a in dst's memory.
func reverseInto(dst, a []uint32) []uint32 {
	dst = resize(dst, len(a))
	for i, x := range a {
		dst[len(a)-1-i] = x
	}
	return dst
}

// LCSLength returns the length of the longest common subsequence of a and
// b, exactly, by the bit-parallel algorithm of Allison–Dix and Hyyrö on
// the rest after the common prefix and suffix: O(⌈m/64⌉·n) for the
// shorter length m and the longer n, whatever their edit distance (about
// 0.1 ms for two unrelated 8 KB pages: BenchmarkLCS/8KB-dissimilar/length). It
// allocates nothing once its pooled memory is warm (about 40 bytes a
// token). Safe for concurrent use.
func LCSLength(a, b []uint32) int {
	pre, suf := commonAffixes(a, b)
	a2, b2 := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(a2) == 0 || len(b2) == 0 {
		return pre + suf
	}
	if len(a2) > len(b2) {
		a2, b2 = b2, a2
	}
	s := lcsPool.Get().(*lcsScratch)
	n := s.bitLength(a2, b2)
	lcsPool.Put(s)
	return pre + suf + n
}
