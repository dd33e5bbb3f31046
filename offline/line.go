package offline

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/winnow-search/winnow/resultlist"
	"github.com/winnow-search/winnow/similarity"
)

// Line is one line of the offline job's output: one cluster.
type Line struct {
	ID     string `json:"id"`
	Size   int    `json:"size"`
	Winner Member `json:"winner"`
	// WinnerRule names the winner rule that made the winner win over the
	// best other member ([Ranking.Rule]); empty for a single page.
	WinnerRule string   `json:"winner_rule,omitempty"`
	Members    []Member `json:"members"`
}

// Member is one member of a [Line]: the winner first, then its duplicates
// with the group decision's verdict and scores.
type Member struct {
	ID string `json:"id"`
	// Input is the input the member came from when the job read several
	// (an ID is unique only within its input: a folder's relative path).
	Input    string         `json:"input,omitempty"`
	URL      string         `json:"url,omitempty"`
	Relation string         `json:"relation,omitempty"`
	Verdict  string         `json:"verdict,omitempty"`
	Explain  string         `json:"explain,omitempty"`
	Scores   map[string]any `json:"scores,omitempty"`
	// Removal is what the content-equivalence decision says of deleting
	// this member in favour of the winner; nil for the winner.
	*Removal
}

// Removal is the part of an output line that says whether a duplicate
// may be deleted: its probability under the near-duplicate decision that
// grouped it, and the content-equivalence decision's verdict against the
// winner (only what it accepts may be deleted; the rest stays grouped).
type Removal struct {
	// Probability is the near-duplicate decision's; absent for a paper
	// method, which has none.
	Probability *float64 `json:"probability,omitempty"`
	// Removable reports that the content-equivalence decision accepts
	// the member at its min_confidence.
	Removable bool `json:"removable"`
	// RemoveProbability is that decision's probability.
	RemoveProbability *float64 `json:"remove_probability,omitempty"`
	// RemoveExplain explains it.
	RemoveExplain string `json:"remove_explain,omitempty"`
}

// NewLine returns the line of cluster c, a cluster of
// similarity.BatchCluster over the documents docs and their signatures
// sigs (indexed as c's members) clustered under [Ranking.Key] keys of
// rank. remove decides each member's [Removal] against the winner,
// aligned to the end ([similarity.Decision.Exact]) so that the line
// carries the pair's probability, not the bound an early exit leaves.
func NewLine(c similarity.Cluster, docs []Doc, sigs []*similarity.Signature, rank Ranking, remove similarity.Decision) Line {
	remove.Exact = true
	w := c.Members[0].Index
	line := Line{ID: fmt.Sprintf("%016x", ClusterID(docs[w].Key)), Size: len(c.Members)}
	if len(c.Members) > 1 {
		// Members after the winner are in rank order: the second is the
		// best of the rest.
		line.WinnerRule = rank.Rule(docs[w], docs[c.Members[1].Index])
	}
	for i, m := range c.Members {
		d := docs[m.Index]
		ml := Member{ID: d.ID, Input: d.Input, URL: d.URL}
		if i == 0 {
			line.Winner = ml
			ml.Relation = "winner"
		} else {
			ml.Relation = m.Verdict.Relation.String()
			ml.Verdict = m.Verdict.String()
			ml.Explain = m.Verdict.Explain()
			ml.Scores = ScoresMap(&m.Verdict.Scores)
			rv := remove.Decide(sigs[w], sigs[m.Index])
			ml.Removal = &Removal{Probability: Probability(m.Verdict.Probability), Removable: resultlist.Removable(rv),
				RemoveProbability: Probability(rv.Probability), RemoveExplain: rv.Explain()}
		}
		line.Members = append(line.Members, ml)
	}
	return line
}

// Write writes l as one JSON line.
func (l *Line) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // explanations hold "<=" and ">="
	return enc.Encode(l)
}

// ScoresMap is the JSON form of the scores: NaN (not computed) is left
// out.
func ScoresMap(s *similarity.Scores) map[string]any {
	m := map[string]any{
		"simhash_distance": s.SimhashDistance,
		"bloom_ab":         s.BloomAB, "bloom_ba": s.BloomBA,
		"contain_ab": s.ContainAB, "contain_ba": s.ContainBA,
		"containment":   s.Containment.String(),
		"jaccard":       s.Jaccard,
		"supershingles": s.Supershingles,
		"fingerprints":  s.Fingerprints,
		"length_ratio":  s.LengthRatio,
	}
	if s.HasNumbers {
		m["numbers_differ"] = s.NumbersDiffer
	}
	for k, v := range map[string]float64{"lcs": s.LCS, "lcs_central": s.Central, "coverage_a": s.CoverageA, "coverage_b": s.CoverageB, "divergence": s.Divergence} {
		if !math.IsNaN(v) {
			m[k] = v
		}
	}
	return m
}

// Probability returns p for JSON, nil for NaN (no calibrated
// probability).
func Probability(p float64) *float64 {
	if math.IsNaN(p) {
		return nil
	}
	return &p
}
