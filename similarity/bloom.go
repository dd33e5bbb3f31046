package similarity

import (
	"encoding/binary"
	"github.com/winnow-search/winnow/internal/hashmix"
	"math"
	"slices"

	"github.com/bits-and-blooms/bloom/v3"
	"github.com/zeebo/xxh3"
)

// chunkFilter chunks text (Jain §2.2), makes every chunk unique by its
// occurrence index among equal chunks (§2.3, footnote 5: multisets) and adds
// the chunks to a new filter of m = o.BloomBits bits and k = o.BloomHashes.
// Each chunk costs one xxh3 over its bytes and one Add of 8 bytes; hashes is
// scratch space. It returns the filter and the number of chunks added.
func chunkFilter(text []byte, o Options, hashes []uint64) (*bloom.BloomFilter, int, []uint64) {
	c := newChunker(o)
	hashes = hashes[:0]
	for data := text; len(data) > 0; {
		n := c.cut(data)
		hashes = append(hashes, xxh3.Hash(data[:n]))
		data = data[n:]
	}
	// Equal chunks get occurrence indexes 0, 1, 2, ... after sorting; the
	// set of (hash, index) pairs does not depend on the order.
	slices.Sort(hashes)
	f := bloom.New(uint(o.BloomBits), uint(o.BloomHashes))
	var key [8]byte
	occ := uint64(0)
	for i, h := range hashes {
		if i > 0 && hashes[i-1] == h {
			occ++
		} else {
			occ = 0
		}
		binary.LittleEndian.PutUint64(key[:], hashmix.Mix64(h+occ*0x9e3779b97f4a7c15))
		f.Add(key[:])
	}
	return f, len(hashes), hashes
}

// compatible reports whether a and b can be compared bit by bit.
func compatible(a, b *bloom.BloomFilter) bool {
	return a != nil && b != nil && a.Cap() == b.Cap() && a.K() == b.K()
}

// BloomMatch returns Jain's match ratio popcount(A∧B)/popcount(A): the
// fraction of a's set bits that are also set in b (§2.3). It is 1 when a's
// chunks are all in b, and it is not symmetric. It is 0 when either filter
// is nil or empty or they differ in m or k. Cost: m/64 words.
//
// The ratio is not corrected for chance: an unrelated filter with a
// fraction f of its bits set matches about f of a's bits, e.g. 0.09 for two
// 8 KB texts and 0.53 for two 64 KB texts with the defaults. See
// [ExpectedBloomMatch] and [BloomContainment].
func BloomMatch(a, b *bloom.BloomFilter) float64 {
	if !compatible(a, b) {
		return 0
	}
	na := a.BitSet().Count()
	if na == 0 {
		return 0
	}
	return float64(a.BitSet().IntersectionCardinality(b.BitSet())) / float64(na)
}

// BloomMissing returns popcount(A∧¬B), the number of a's set bits that b
// lacks, or -1 when the filters cannot be compared (nil, or m or k differ).
func BloomMissing(a, b *bloom.BloomFilter) int {
	if !compatible(a, b) {
		return -1
	}
	return int(a.BitSet().DifferenceCardinality(b.BitSet()))
}

// BloomContained reports whether a's set bits are almost a subset of b's:
// a is non-empty and at most maxMissing (a fraction, e.g. 0.02) of its set
// bits are missing from b. It is Jain's test for a document included in
// another (§2.3).
func BloomContained(a, b *bloom.BloomFilter, maxMissing float64) bool {
	if !compatible(a, b) {
		return false
	}
	na := a.BitSet().Count()
	if na == 0 {
		return false
	}
	miss := a.BitSet().DifferenceCardinality(b.BitSet())
	return float64(miss) <= maxMissing*float64(na)
}

// bloomCardinality estimates the elements in a filter of m bits and k
// hashes with x bits set (Swamidass and Baldi 2007): −(m/k)·ln(1 − x/m).
func bloomCardinality(x, m, k uint) float64 {
	if x >= m {
		x = m - 1 // saturated: the estimate is a lower bound
	}
	return -float64(m) / float64(k) * math.Log1p(-float64(x)/float64(m))
}

// BloomContainment estimates |A∩B|/|A| over the chunks behind the filters,
// corrected for chance bit collisions: it estimates |A|, |B| and |A∪B| from
// the popcounts of A, B and A∨B and takes |A∩B| = |A|+|B|−|A∪B|. Unlike
// [BloomMatch] it is near 0 for unrelated texts however full the filters
// are, but it is noisier for small filters. The result is clamped to
// [0, 1]; 0 when the filters cannot be compared or a is empty.
func BloomContainment(a, b *bloom.BloomFilter) float64 {
	na, _, inter, ok := bloomEstimates(a, b)
	if !ok || na == 0 {
		return 0
	}
	return min(max(inter/na, 0), 1)
}

// BloomJaccard estimates |A∩B|/|A∪B| over the chunks behind the filters,
// corrected for chance as [BloomContainment]. It is symmetric, clamped to
// [0, 1], and 0 when the filters cannot be compared or both are empty.
func BloomJaccard(a, b *bloom.BloomFilter) float64 {
	_, union, inter, ok := bloomEstimates(a, b)
	if !ok || union == 0 {
		return 0
	}
	return min(max(inter/union, 0), 1)
}

func bloomEstimates(a, b *bloom.BloomFilter) (na, union, inter float64, ok bool) {
	if !compatible(a, b) {
		return 0, 0, 0, false
	}
	m, k := a.Cap(), a.K()
	xa, xb := a.BitSet().Count(), b.BitSet().Count()
	xu := a.BitSet().UnionCardinality(b.BitSet())
	na = bloomCardinality(xa, m, k)
	nb := bloomCardinality(xb, m, k)
	union = bloomCardinality(xu, m, k)
	return na, union, na + nb - union, true
}

// ExpectedBloomMatch returns the expected [BloomMatch] of two texts of n
// chunks each that share c chunks, for filters of m bits and k hashes. Bit
// by bit: a bit of A∧B is set by a shared chunk, or by chunks of A alone
// and also by chunks of B alone. With p(x) = 1 − (1 − 1/m)^(x·k):
//
//	E[match] = (p(c) + (1 − p(c))·p(n−c)²) / p(n)
//
// Jain's §2.3.1 ratio, (1 − e^(−k/m·(c + (n−c)·0.6185^(m/n)))) / (1 − e^(−nk/m)),
// counts only the bits of chunks inferred to be members, so it omits the
// chance overlap of the bits of unshared chunks; [JainExpectedMatch]
// returns it for comparison.
func ExpectedBloomMatch(m, k uint, n, c int) float64 {
	if n <= 0 || m == 0 || k == 0 {
		return 0
	}
	c = min(max(c, 0), n)
	p := func(x int) float64 {
		return -math.Expm1(float64(x) * float64(k) * math.Log1p(-1/float64(m)))
	}
	pc, pr := p(c), p(n-c)
	return (pc + (1-pc)*pr*pr) / p(n)
}

// JainExpectedMatch returns the expected match ratio of Jain §2.3.1 for
// filters of m bits and k hashes and texts of n chunks sharing c:
// (1 − e^(−k/m·(c + (n−c)·0.6185^(m/n)))) / (1 − e^(−nk/m)).
func JainExpectedMatch(m, k uint, n, c int) float64 {
	if n <= 0 || m == 0 || k == 0 {
		return 0
	}
	c = min(max(c, 0), n)
	mf, kf, nf, cf := float64(m), float64(k), float64(n), float64(c)
	inferred := cf + (nf-cf)*math.Pow(0.6185, mf/nf)
	return -math.Expm1(-kf/mf*inferred) / -math.Expm1(-nf*kf/mf)
}
