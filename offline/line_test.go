package offline

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/winnow-search/winnow/similarity"
)

// TestScoresJSON: the struct form of the scores encodes byte for byte as
// the map it replaced (keys in sorted order, NaN left out, numbers_differ
// only when computed), for scores with and without the LCS and numbers.
func TestScoresJSON(t *testing.T) {
	nan := math.NaN()
	base := similarity.Scores{SimhashDistance: 6, BloomAB: 0.43333333333333335, BloomBA: 0.5, ContainAB: 1e-7, ContainBA: 0,
		Containment: similarity.RelationContains, Jaccard: 0.7499961852445258, Supershingles: 2, Fingerprints: 3, LengthRatio: 1}
	withLCS := base
	withLCS.LCS, withLCS.Central, withLCS.CoverageA, withLCS.CoverageB, withLCS.Divergence = 0.9473684210526315, 1, 0.98, 1e21, 0
	withNumbers := withLCS
	withNumbers.HasNumbers, withNumbers.NumbersDiffer = true, 4
	noLCS := base
	noLCS.LCS, noLCS.Central, noLCS.CoverageA, noLCS.CoverageB, noLCS.Divergence = nan, nan, nan, nan, nan
	for _, s := range []similarity.Scores{withLCS, withNumbers, noLCS, {LCS: nan, Central: 0.5, CoverageA: nan, CoverageB: 0.25, Divergence: nan}} {
		got, err := json.Marshal(NewScores(&s))
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(scoresMap(&s))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("NewScores = %s\n want (the map form) %s", got, want)
		}
	}
}

// scoresMap is the map form the output had before [Scores].
func scoresMap(s *similarity.Scores) map[string]any {
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
