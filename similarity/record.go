package similarity

import "math"

// Record returns s as a flat map of its scores by name, for logs that a
// later run reads back with [ScoresFromRecord] (the search page's
// feedback log, read by `winnow calibrate`): "simhash_distance",
// "bloom_ab", "bloom_ba", "contain_ab", "contain_ba", "jaccard",
// "supershingles", "fingerprints", "length_ratio", and, when computed,
// "lcs", "lcs_cut" (1 for an early exit), "lcs_central", "coverage_a",
// "coverage_b", "divergence", "page_divergence", "bag" and
// "numbers_differ". A score that was not computed is left out, never
// written as NaN, which JSON has no number for.
func (s *Scores) Record() map[string]float64 {
	m := map[string]float64{
		"simhash_distance": float64(s.SimhashDistance),
		"bloom_ab":         s.BloomAB, "bloom_ba": s.BloomBA,
		"contain_ab": s.ContainAB, "contain_ba": s.ContainBA,
		"jaccard":       s.Jaccard,
		"supershingles": float64(s.Supershingles),
		"fingerprints":  float64(s.Fingerprints),
		"length_ratio":  s.LengthRatio,
	}
	if s.HasLCS {
		m["lcs_cut"] = 0
		if s.LCSCut {
			m["lcs_cut"] = 1
		}
		for k, v := range map[string]float64{"lcs": s.LCS, "lcs_central": s.Central, "coverage_a": s.CoverageA,
			"coverage_b": s.CoverageB, "divergence": s.Divergence, "page_divergence": s.PageDivergence} {
			if !math.IsNaN(v) {
				m[k] = v
			}
		}
	}
	if !math.IsNaN(s.Bag) {
		m["bag"] = s.Bag
	}
	if s.HasNumbers {
		m["numbers_differ"] = float64(s.NumbersDiffer)
	}
	for k, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			delete(m, k)
		}
	}
	return m
}

// ScoresFromRecord returns the scores [Scores.Record] wrote: a score
// missing from m is not computed (NaN, HasLCS or HasNumbers false), so
// every feature of a [Model] reads it as it would have read the pair.
func ScoresFromRecord(m map[string]float64) Scores {
	nan := math.NaN()
	get := func(k string) float64 {
		if v, ok := m[k]; ok {
			return v
		}
		return nan
	}
	zero := func(k string) float64 { return m[k] }
	s := Scores{
		SimhashDistance: int(zero("simhash_distance")),
		BloomAB:         zero("bloom_ab"), BloomBA: zero("bloom_ba"),
		ContainAB: zero("contain_ab"), ContainBA: zero("contain_ba"),
		Jaccard:       zero("jaccard"),
		Supershingles: int(zero("supershingles")),
		Fingerprints:  int(zero("fingerprints")),
		LengthRatio:   zero("length_ratio"),
		LCS:           get("lcs"), Central: get("lcs_central"),
		CoverageA: get("coverage_a"), CoverageB: get("coverage_b"),
		Divergence: get("divergence"), PageDivergence: get("page_divergence"),
		Bag: get("bag"),
	}
	s.Megashingle = s.Supershingles >= 2
	_, s.HasLCS = m["lcs"]
	s.LCSCut = m["lcs_cut"] == 1
	if n, ok := m["numbers_differ"]; ok {
		s.HasNumbers, s.NumbersDiffer = true, int(n)
	}
	return s
}
