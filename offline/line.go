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
	Input    string  `json:"input,omitempty"`
	URL      string  `json:"url,omitempty"`
	Relation string  `json:"relation,omitempty"`
	Verdict  string  `json:"verdict,omitempty"`
	Explain  string  `json:"explain,omitempty"`
	Scores   *Scores `json:"scores,omitempty"`
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
// carries the pair's probability, not the bound an early exit leaves;
// the member's group verdict, of the same pair, lends it its alignment
// when that ran to its end ([similarity.Decision.DecideAfter]).
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
			ml.Scores = NewScores(&m.Verdict.Scores)
			rv := remove.DecideAfter(sigs[w], sigs[m.Index], &m.Verdict)
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

// Scores is the JSON form of [similarity.Scores]: a score not computed
// (NaN) is left out, numbers_differ unless it was computed. The fields
// are in the order of their names, the order encoding/json gives a map's
// keys (the form was a map, and a struct encodes without sorting them).
type Scores struct {
	BloomAB         float64  `json:"bloom_ab"`
	BloomBA         float64  `json:"bloom_ba"`
	ContainAB       float64  `json:"contain_ab"`
	ContainBA       float64  `json:"contain_ba"`
	Containment     string   `json:"containment"`
	CoverageA       OptFloat `json:"coverage_a,omitzero"`
	CoverageB       OptFloat `json:"coverage_b,omitzero"`
	Divergence      OptFloat `json:"divergence,omitzero"`
	Fingerprints    int      `json:"fingerprints"`
	Jaccard         float64  `json:"jaccard"`
	LCS             OptFloat `json:"lcs,omitzero"`
	LCSCentral      OptFloat `json:"lcs_central,omitzero"`
	LengthRatio     float64  `json:"length_ratio"`
	NumbersDiffer   *int     `json:"numbers_differ,omitempty"`
	SimhashDistance int      `json:"simhash_distance"`
	Supershingles   int      `json:"supershingles"`
}

// OptFloat is a score that may be missing: NaN, left out of JSON.
type OptFloat float64

// IsZero reports whether f is NaN (omitzero leaves it out).
func (f OptFloat) IsZero() bool { return math.IsNaN(float64(f)) }

// NewScores returns the JSON form of s.
func NewScores(s *similarity.Scores) *Scores {
	j := &Scores{
		BloomAB: s.BloomAB, BloomBA: s.BloomBA, ContainAB: s.ContainAB, ContainBA: s.ContainBA,
		Containment: s.Containment.String(),
		CoverageA:   OptFloat(s.CoverageA), CoverageB: OptFloat(s.CoverageB), Divergence: OptFloat(s.Divergence),
		Fingerprints: s.Fingerprints, Jaccard: s.Jaccard,
		LCS: OptFloat(s.LCS), LCSCentral: OptFloat(s.Central),
		LengthRatio: s.LengthRatio, SimhashDistance: s.SimhashDistance, Supershingles: s.Supershingles,
	}
	if s.HasNumbers {
		n := s.NumbersDiffer
		j.NumbersDiffer = &n
	}
	return j
}

// Probability returns p for JSON, nil for NaN (no calibrated
// probability).
func Probability(p float64) *float64 {
	if math.IsNaN(p) {
		return nil
	}
	return &p
}
