package similarity

import (
	"crypto/md5"
	"encoding/binary"
	"slices"
)

// Sentence fingerprints after Huang, Wang and Li: every sentence gets an
// MD5 value; the values are distributed into m buckets by value mod m; in
// each bucket the n smallest are selected. Huang et al. then hash each
// bucket's n values into one fingerprint (m = 7, n = 3), so two pages share
// a bucket fingerprint only when the n smallest sentences of that bucket all
// agree. We keep the selected values themselves, sorted: with m = 1 and
// n = 8 (the defaults) this is a bottom-8 sketch of the sentence set, whose
// overlap ([SharedFingerprints]) grades how many sentences two pages share
// and finds perhaps-similar pages even when one sentence differs among the
// smallest. Huang's bucket fingerprints can still be formed from it, since
// a value's bucket is its value mod m ([BucketFingerprints]).

// fingerprints returns the sorted, distinct sentence fingerprints of
// sentences: the first 4 bytes of each sentence's MD5 as a big-endian
// uint32, the n smallest of each of m buckets (value mod m). Empty
// sentences are skipped. buf is scratch space for the sentence bytes.
func fingerprints(sentences []string, n, m int, buf []byte) ([]uint32, []byte) {
	// best holds per bucket up to n values, sorted ascending.
	best := make([]uint32, 0, n*m)
	counts := make([]int, m)
	best = best[:n*m]
	for _, s := range sentences {
		if s == "" {
			continue
		}
		buf = append(buf[:0], s...)
		sum := md5.Sum(buf)
		v := binary.BigEndian.Uint32(sum[:4])
		b := int(v % uint32(m))
		row := best[b*n : b*n+counts[b]]
		if counts[b] == n && v >= row[n-1] {
			continue
		}
		i, found := slices.BinarySearch(row, v)
		if found {
			continue
		}
		if counts[b] < n {
			counts[b]++
			row = best[b*n : b*n+counts[b]]
		}
		copy(row[i+1:], row[i:len(row)-1])
		row[i] = v
	}
	out := make([]uint32, 0, n*m)
	for b := range m {
		out = append(out, best[b*n:b*n+counts[b]]...)
	}
	if len(out) == 0 {
		return nil, buf
	}
	slices.Sort(out)
	return out, buf
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
		h := mix64(uint64(b) + 1)
		seen := false
		for _, v := range fp {
			if int(v%uint32(m)) == b {
				h = mix64(h*shingleBase + uint64(v))
				seen = true
			}
		}
		if seen {
			out = append(out, h)
		}
	}
	return out
}
