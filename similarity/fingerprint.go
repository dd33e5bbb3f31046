package similarity

import (
	"github.com/winnow-search/winnow/internal/hashmix"
	"slices"

	"github.com/zeebo/xxh3"
)

// Sentence fingerprints after Huang, Wang and Li: every sentence gets a
// hash value; the values are distributed into m buckets by value mod m; in
// each bucket the n smallest are selected. Huang et al. hash sentences with
// MD5; we take the top 32 bits of the 64-bit xxh3 of the sentence bytes,
// since any uniform hash gives the bottom-n sketch the same statistics and
// MD5 cost a quarter of [Sign]. Huang et al. then hash each bucket's n
// values into one fingerprint (m = 7, n = 3), so two pages share a bucket
// fingerprint only when the n smallest sentences of that bucket all agree.
// We keep the selected values themselves, sorted: with m = 1 and n = 8
// (the defaults) this is a bottom-8 sketch of the sentence set, whose
// overlap ([SharedFingerprints]) grades how many sentences two pages share
// and finds perhaps-similar pages even when one sentence differs among the
// smallest. Huang's bucket fingerprints can still be formed from it, since
// a value's bucket is its value mod m ([BucketFingerprints]).

// sentenceHash is the fingerprint of one sentence: the top 32 bits of its
// 64-bit xxh3.
func sentenceHash(s string) uint32 {
	return uint32(xxh3.HashString(s) >> 32)
}

// appendFingerprints appends to dst the sorted, distinct sentence
// fingerprints of sentences ([sentenceHash]), the n smallest of each of m
// buckets (value mod m), and returns the extended slice; n·m must not
// exceed [MaxFingerprints]. Empty sentences are skipped. It allocates
// only when dst is too small.
func appendFingerprints(dst []uint32, sentences []string, n, m int) []uint32 {
	// best holds per bucket up to n values, sorted ascending.
	var bestBuf [MaxFingerprints]uint32
	var countBuf [MaxFingerprints]uint16
	best, counts := bestBuf[:n*m], countBuf[:m]
	for _, s := range sentences {
		if s == "" {
			continue
		}
		v := sentenceHash(s)
		b := int(v % uint32(m))
		c := int(counts[b])
		row := best[b*n : b*n+c]
		if c == n && v >= row[n-1] {
			continue
		}
		i, found := slices.BinarySearch(row, v)
		if found {
			continue
		}
		if c < n {
			counts[b]++
			row = best[b*n : b*n+c+1]
		}
		copy(row[i+1:], row[i:len(row)-1])
		row[i] = v
	}
	start := len(dst)
	for b := range m {
		dst = append(dst, best[b*n:b*n+int(counts[b])]...)
	}
	if m > 1 {
		slices.Sort(dst[start:])
	}
	return dst
}

// SharedFingerprints returns the number of values that the sorted
// fingerprint lists a and b have in common. Cost: len(a)+len(b).
func SharedFingerprints(a, b []uint32) int {
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// BucketFingerprints returns Huang et al.'s fingerprints of a sorted
// fingerprint list built with m buckets: for each bucket b in 0..m−1 that
// holds a value, one 64-bit hash of that bucket's values (tagged with b),
// in bucket order. Two pages built with the same [Options] share a bucket
// fingerprint when the smallest sentences of that bucket agree; Huang et
// al. index pages by these to form perhaps-similar sets.
func BucketFingerprints(fp []uint32, m int) []uint64 {
	if m <= 0 {
		return nil
	}
	var out []uint64
	for b := range m {
		h := hashmix.Mix64(uint64(b) + 1)
		seen := false
		for _, v := range fp {
			if int(v%uint32(m)) == b {
				h = hashmix.Mix64(h*shingleBase + uint64(v))
				seen = true
			}
		}
		if seen {
			out = append(out, h)
		}
	}
	return out
}
