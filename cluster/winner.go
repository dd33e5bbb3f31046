package cluster

import (
	"math"
	"net/url"
	"strings"
)

// WinnerRules orders the members of a group to elect its winner (Zhu §5):
// the highest popularity score wins; between scores within
// PopularityTolerance of each other, the shorter URL, then the static URL
// (no query string) over the dynamic one, then a host in a preferred
// market TLD, then the lexicographically smaller URL. The zero value uses
// exact popularity ties and no market.
type WinnerRules struct {
	// PopularityTolerance is the largest difference of popularity scores
	// that counts as a tie ("about the same"). Zero: exact.
	PopularityTolerance float64
	// MarketTLDs are the preferred host suffixes, e.g. ".uk" or ".co.uk"
	// for a database produced for the United Kingdom.
	MarketTLDs []string
}

// Candidate is a page competing for a group's crown.
type Candidate struct {
	URL        string
	Popularity float64
}

// Better reports whether a beats b.
func (r WinnerRules) Better(a, b Candidate) bool {
	if math.Abs(a.Popularity-b.Popularity) > r.PopularityTolerance {
		return a.Popularity > b.Popularity
	}
	if len(a.URL) != len(b.URL) {
		return len(a.URL) < len(b.URL)
	}
	if da, db := dynamic(a.URL), dynamic(b.URL); da != db {
		return db
	}
	if ma, mb := r.market(a.URL), r.market(b.URL); ma != mb {
		return ma
	}
	return a.URL < b.URL
}

func dynamic(u string) bool { return strings.Contains(u, "?") }

func (r WinnerRules) market(u string) bool {
	if len(r.MarketTLDs) == 0 {
		return false
	}
	pu, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := strings.ToLower(pu.Hostname())
	for _, t := range r.MarketTLDs {
		if strings.HasSuffix(h, strings.ToLower(t)) {
			return true
		}
	}
	return false
}
