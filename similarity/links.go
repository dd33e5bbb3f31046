package similarity

import (
	"math"
	"slices"
	"sort"

	"github.com/zeebo/xxh3"
)

// MaxLinks is the size of the bottom-k sketch of a page's link targets
// ([LinkSketch]): the 64 smallest distinct 32-bit hashes, 256 bytes at
// most. A page with fewer than 64 distinct targets is kept whole, so
// [LinksDiffer] of two such pages is exact.
const MaxLinks = 64

// LinkSketch returns the bottom-k sketch of links, the targets of a
// page's links (canon.Document.Links, repeats allowed): the [MaxLinks]
// smallest distinct low 32 bits of the xxh3 of each, ascending, as
// Broder's bottom-k sketches and the sentence fingerprints keep them.
// It is empty, not nil, for a page without a link: recorded, and none.
// Cost: a hash a link, and a binary search of the sketch for each hash
// under its largest.
func LinkSketch(links []string) []uint32 {
	return appendLinkSketch(make([]uint32, 0, MaxLinks), links)
}

// appendLinkSketch is LinkSketch appending to dst, which must be empty.
func appendLinkSketch(dst []uint32, links []string) []uint32 {
	for _, l := range links {
		h := uint32(xxh3.HashString(l))
		if len(dst) == MaxLinks && h >= dst[MaxLinks-1] {
			continue
		}
		i, found := slices.BinarySearch(dst, h)
		if found {
			continue
		}
		if len(dst) == MaxLinks {
			dst = dst[:MaxLinks-1]
		}
		dst = slices.Insert(dst, i, h)
	}
	return dst
}

// LinksDiffer returns, for the link sketches x and y of two pages
// ([LinkSketch]), the share of the links of the page with fewer distinct
// link targets whose target the other page does not have,
// 1 − |A∩B|/min(|A|, |B|): 0 when one page's targets are all among the
// other's (a mirror; a syndicated copy whose other links were made
// absolute and left out; a page with a link or two more), 1 when they
// share none. It is exact when each page has fewer than [MaxLinks]
// distinct targets. Otherwise both sketches hold every hash of their
// page up to τ, the smaller of their largest hashes, and the smaller
// page's hashes up to τ are a uniform sample of its targets whose
// membership in the other page is known: the share is that sample's
// (Broder's containment from bottom-k sketches; about MaxLinks values
// for pages of like size, fewer as the sizes part). It is 0 when either
// page has no link target: no evidence either way (a text page). known
// is false when either sketch is nil (not recorded). Cost: one merge.
func LinksDiffer(x, y []uint32) (share float64, known bool) {
	if x == nil || y == nil {
		return 0, false
	}
	if len(x) == 0 || len(y) == 0 {
		return 0, true
	}
	// tau bounds the hashes both sketches hold all of; a sketch under
	// MaxLinks holds its page's every hash.
	tau := uint32(math.MaxUint32)
	if len(x) == MaxLinks {
		tau = x[MaxLinks-1]
	}
	if len(y) == MaxLinks {
		tau = min(tau, y[MaxLinks-1])
	}
	x = x[:sort.Search(len(x), func(i int) bool { return x[i] > tau })]
	y = y[:sort.Search(len(y), func(i int) bool { return y[i] > tau })]
	both := 0
	for i, j := 0, 0; i < len(x) && j < len(y); {
		switch {
		case x[i] < y[j]:
			i++
		case y[j] < x[i]:
			j++
		default:
			i++
			j++
			both++
		}
	}
	// The smaller page has the fewer hashes up to tau.
	return 1 - float64(both)/float64(min(len(x), len(y))), true
}
