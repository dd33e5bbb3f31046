package loadgen

import (
	"math"
	"math/bits"
	"time"
)

// subBits is the number of significant bits a bucket keeps: values below
// 2^subBits are exact, larger ones fall into 2^(subBits-1) buckets per
// power of two, so a bucket spans under 1/128 of its value and its
// midpoint is within 0.4% of any value in it.
const subBits = 8

const (
	subCount   = 1 << subBits
	halfCount  = subCount / 2
	numBuckets = subCount + (64-subBits)*halfCount
)

// Histogram records durations in log-linear buckets, as HdrHistogram
// does with 2-3 significant digits: constant memory (about 60 KB) and
// constant time per value whatever the range. The zero value is ready to
// use. It is not safe for concurrent use: give each goroutine its own and
// [Histogram.Merge] them.
type Histogram struct {
	counts   [numBuckets]uint64
	n        uint64
	sum      float64
	min, max int64
}

func bucket(v uint64) int {
	if v < subCount {
		return int(v)
	}
	e := bits.Len64(v) - subBits
	sub := v >> e
	return subCount + (e-1)*halfCount + int(sub-halfCount)
}

// bucketMid returns the midpoint of bucket i.
func bucketMid(i int) uint64 {
	if i < subCount {
		return uint64(i)
	}
	e := (i-subCount)/halfCount + 1
	sub := uint64((i-subCount)%halfCount + halfCount)
	lo := sub << e
	return lo + (uint64(1)<<e)/2
}

// Record adds one duration; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	v := max(int64(d), 0)
	h.counts[bucket(uint64(v))]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += float64(v)
}

// Merge adds every value recorded in o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count returns the number of values recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Min returns the smallest value recorded (exact), zero if none.
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }

// Max returns the largest value recorded (exact), zero if none.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Mean returns the mean of the values recorded (exact), zero if none.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// Quantile returns the value at quantile q in [0, 1]: the smallest
// recorded value v such that a share q of the values are at most v, to
// within 0.4%, and clamped to the exact minimum and maximum. It returns
// zero for an empty histogram.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			v := int64(bucketMid(i))
			return time.Duration(min(max(v, h.min), h.max))
		}
	}
	return time.Duration(h.max)
}
