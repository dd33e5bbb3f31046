package offline

import (
	"fmt"
	"hash/fnv"
	"math"

	"github.com/winnow-search/winnow/cluster"
)

// Doc is what the winner rules and the output line need of a document.
type Doc struct {
	// Key is the document's distinct key (see [Keys]); the cluster ID is
	// its winner's key's hash.
	Key     string
	ID, URL string
	// Input is the input the document came from, as given, when a job
	// reads several ("" when one): IDs are unique only within an input
	// (a folder's relative paths), so a line names both.
	Input string
	// Popularity is the input's score, 0 if none.
	Popularity float64
}

// InputKey is a document's key before repeats are numbered: its ID,
// prefixed by its input when a job reads several.
func InputKey(several bool, input, id string) string {
	if several {
		return input + ":" + id
	}
	return id
}

// RepeatKey is the key of the n-th repeat of base in input order (n = 0:
// the first occurrence, base itself; n >= 1: base#n), so that keys stay
// distinct when an ID repeats (two JSONL lines with one id).
func RepeatKey(base string, n int) string {
	if n == 0 {
		return base
	}
	return fmt.Sprintf("%s#%d", base, n)
}

// Keys numbers the repeats of keys seen in input order. The zero value is
// ready; it is not safe for concurrent use.
type Keys struct {
	seen map[string]int // occurrences so far, by base key
}

// Next returns the key of the next occurrence of base: base, then base#1,
// base#2, ...
func (k *Keys) Next(base string) string {
	if k.seen == nil {
		k.seen = map[string]int{}
	}
	n := k.seen[base]
	k.seen[base] = n + 1
	return RepeatKey(base, n)
}

// Ranking orders documents by the winner rules, one document at a time.
// The zero value applies cluster's default rules with exact popularity.
// It is safe for concurrent use.
type Ranking struct {
	rules cluster.WinnerRules // PopularityTolerance 0; popularities banded
	band  float64             // the popularity tolerance: scores in one band of this width tie
}

// NewRanking returns the ranking of rules. A popularity tolerance t > 0
// becomes bands: scores in one band [k·t, (k+1)·t) tie. (The cluster
// service's "within t of each other" is not transitive, so it cannot
// order a corpus the same way whatever its other pages.)
func NewRanking(rules cluster.WinnerRules) Ranking {
	r := Ranking{rules: rules, band: rules.PopularityTolerance}
	r.rules.PopularityTolerance = 0
	return r
}

func (r Ranking) candidate(d Doc) cluster.Candidate {
	p := d.Popularity
	if r.band > 0 {
		p = math.Floor(p / r.band)
	}
	return cluster.Candidate{URL: d.URL, Popularity: p}
}

// Key returns d's rank key: the clustering key under which the smallest
// key of a cluster is the member the rules prefer, documents the rules
// cannot tell apart (same URL and popularity; no URL: a directory) in the
// order of their keys. It depends on d alone.
func (r Ranking) Key(d Doc) string {
	return r.rules.SortKey(r.candidate(d)) + d.Key
}

// Rule names the rule that made winner win over runnerUp, the best of the
// other members: popularity, https, shorter, static, market, url, or key
// (the rules cannot tell them apart).
func (r Ranking) Rule(winner, runnerUp Doc) string {
	_, rule := r.rules.Decide(r.candidate(winner), r.candidate(runnerUp))
	if rule == "" {
		return "key"
	}
	return rule
}

// ClusterID is the ID of the cluster whose winner has key: its FNV-1a
// hash, as similarity.BatchCluster gives it without ranks, so that IDs do
// not move when other documents come in.
func ClusterID(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()
}
