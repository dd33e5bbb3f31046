package similarity

import (
	"math/bits"
	"sync"
)

// BagRatio returns the word-multiset overlap of the sequences a and b in
// the form of the LCS ratio: i / (n + m - i), where i is the size of the
// multiset intersection (each token counted as often as it occurs on
// both sides). Order plays no part, so it is at least the LCS ratio: a
// table re-sorted or a list of items in another order keeps it at 1
// where the LCS ratio falls. 1 when both are empty.
func BagRatio(a, b []uint32) float64 {
	t := bagPool.Get().(*bagTable)
	i := t.intersect(a, b)
	bagPool.Put(t)
	return Ratio(i, len(a), len(b))
}

var bagPool = sync.Pool{New: func() any { return new(bagTable) }}

// bagTable counts the tokens of one sequence in an open-addressing hash
// table (linear probing), reused between pairs.
type bagTable struct {
	keys   []uint32
	counts []int32 // 0: the slot is free
}

// intersect returns the size of the multiset intersection of a and b.
func (t *bagTable) intersect(a, b []uint32) int {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) == 0 {
		return 0
	}
	size := 1 << bits.Len(uint(2*len(a)-1)) // at most half full
	size = max(size, 16)
	t.keys = resize(t.keys, size)
	t.counts = resize(t.counts, size)
	clear(t.counts)
	mask := uint32(size - 1)
	for _, x := range a {
		h := (x * 0x9e3779b1) & mask
		for t.counts[h] != 0 && t.keys[h] != x {
			h = (h + 1) & mask
		}
		t.keys[h] = x
		t.counts[h]++
	}
	n := 0
	for _, x := range b {
		h := (x * 0x9e3779b1) & mask
		for t.counts[h] != 0 {
			if t.keys[h] == x {
				break
			}
			h = (h + 1) & mask
		}
		// A slot emptied by the counting below stays taken by its key
		// (count -1 marks "seen, none left"), so probes do not stop early.
		if c := t.counts[h]; c > 0 && t.keys[h] == x {
			n++
			if c == 1 {
				t.counts[h] = -1
			} else {
				t.counts[h] = c - 1
			}
		}
	}
	return n
}
