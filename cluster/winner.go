package cluster

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
)

// The winner rules, by name, as [WinnerRules.Order] lists them.
const (
	RulePopularity = "popularity" // the higher popularity score
	RuleHTTPS      = "https"      // https over http
	RuleShorter    = "shorter"    // the shorter URL
	RuleStatic     = "static"     // no query string over one
	RuleMarket     = "market"     // a host in a preferred market TLD
	// RuleURL is the last resort, always applied after Order: the
	// lexicographically smaller URL.
	RuleURL = "url"
)

// DefaultWinnerOrder is the order of the rules when Order is nil (Zhu §5,
// with https added after popularity: of two copies of a page, users and
// search engines prefer the secure one).
var DefaultWinnerOrder = []string{RulePopularity, RuleHTTPS, RuleShorter, RuleStatic, RuleMarket}

// WinnerRules orders the members of a group to elect its winner (Zhu §5):
// the highest popularity score wins; between scores within
// PopularityTolerance of each other, the https URL over the http one, then
// the shorter URL, then the static URL (no query string) over the dynamic
// one, then a host in a preferred market TLD, then the lexicographically
// smaller URL. Order may reorder or leave out rules. The zero value uses
// exact popularity ties, no market and [DefaultWinnerOrder]. It is safe
// for concurrent use.
type WinnerRules struct {
	// PopularityTolerance is the largest difference of popularity scores
	// that counts as a tie ("about the same"). Zero: exact.
	PopularityTolerance float64
	// MarketTLDs are the preferred host suffixes, e.g. ".uk" or ".co.uk"
	// for a database produced for the United Kingdom.
	MarketTLDs []string
	// Order lists the rules applied, first decisive first, by their names
	// (RulePopularity, ...); nil means DefaultWinnerOrder. RuleURL always
	// ends the list, so that two different URLs never tie.
	Order []string
}

// Candidate is a page competing for a group's crown.
type Candidate struct {
	URL        string
	Popularity float64
}

// Validate reports a rule name in Order that is not a rule.
func (r WinnerRules) Validate() error {
	for _, name := range r.Order {
		if !slices.Contains(DefaultWinnerOrder, name) && name != RuleURL {
			return fmt.Errorf("cluster: unknown winner rule %q (want one of %s)", name, strings.Join(DefaultWinnerOrder, ", "))
		}
	}
	return nil
}

// Better reports whether a beats b.
func (r WinnerRules) Better(a, b Candidate) bool {
	better, _ := r.Decide(a, b)
	return better
}

// Decide reports whether a beats b and the name of the rule that decided;
// "" when a and b are the same URL with tied popularity (neither wins).
func (r WinnerRules) Decide(a, b Candidate) (better bool, rule string) {
	order := r.Order
	if order == nil {
		order = DefaultWinnerOrder
	}
	for _, name := range order {
		var da, db bool // whether a, b have the preferred property
		switch name {
		case RulePopularity:
			if math.Abs(a.Popularity-b.Popularity) > r.PopularityTolerance {
				return a.Popularity > b.Popularity, name
			}
			continue
		case RuleHTTPS:
			da, db = secure(a.URL), secure(b.URL)
		case RuleShorter:
			if len(a.URL) != len(b.URL) {
				return len(a.URL) < len(b.URL), name
			}
			continue
		case RuleStatic:
			da, db = !dynamic(a.URL), !dynamic(b.URL)
		case RuleMarket:
			da, db = r.market(a.URL), r.market(b.URL)
		}
		if da != db {
			return da, name
		}
	}
	if a.URL != b.URL {
		return a.URL < b.URL, RuleURL
	}
	return false, ""
}

func secure(u string) bool {
	return len(u) >= 8 && strings.EqualFold(u[:8], "https://")
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

// SortKey returns a string whose byte order is the order of Decide with
// exact popularity: for a tolerance of zero, SortKey(a) < SortKey(b)
// exactly when Decide(a, b) reports that a is better, and the keys are
// equal exactly when Decide finds no rule (""). PopularityTolerance is
// ignored: a tolerance makes "about the same" intransitive, which no sort
// key can express; a caller that wants one rounds the popularities into
// bands first. Offline jobs sort by it, so that the order of two pages
// does not depend on the other pages of the corpus.
func (r WinnerRules) SortKey(c Candidate) string {
	order := r.Order
	if order == nil {
		order = DefaultWinnerOrder
	}
	b := make([]byte, 0, 32+len(c.URL))
	flag := func(preferred bool) {
		if preferred {
			b = append(b, '0')
		} else {
			b = append(b, '1')
		}
	}
	for _, name := range order {
		switch name {
		case RulePopularity:
			p := c.Popularity
			if p == 0 {
				p = 0 // -0 ties with 0, as in Decide
			}
			// Ordered bits of a float (sign flipped, or all bits for a
			// negative), then inverted: the higher score first.
			bits := math.Float64bits(p)
			if bits>>63 == 0 {
				bits ^= 1 << 63
			} else {
				bits = ^bits
			}
			b = appendHex(b, ^bits)
		case RuleHTTPS:
			flag(secure(c.URL))
		case RuleShorter:
			b = appendHex(b, uint64(len(c.URL)))
		case RuleStatic:
			flag(!dynamic(c.URL))
		case RuleMarket:
			flag(r.market(c.URL))
		}
	}
	// The URL last, lexicographic: a NUL byte is escaped as 0 1 and the
	// URL ends with 0 0, so a URL sorts before its extensions.
	for i := 0; i < len(c.URL); i++ {
		b = append(b, c.URL[i])
		if c.URL[i] == 0 {
			b = append(b, 1)
		}
	}
	return string(append(b, 0, 0))
}

// appendHex appends v as 16 lower-case hexadecimal digits, which sort as
// the numbers do.
func appendHex(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, digits[v>>uint(shift)&0xf])
	}
	return b
}
