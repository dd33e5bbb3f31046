package eval

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"
)

// smallSets scores the small test sets once.
func smallSets(t *testing.T) []*CVSet {
	t.Helper()
	var sets []*CVSet
	for _, dir := range []string{"testdata/pairs", sampleCorpus(t)} {
		set, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), set, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, NewCVSet(filepath.Base(dir), set, rep))
	}
	return sets
}

// jsonRoundTrip is what `winnow eval -cv -compare` reads: the report as
// `winnow eval -cv -json` wrote it.
func jsonRoundTrip(t *testing.T, r *CVReport) *CVReport {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back CVReport
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

func TestCompareCV(t *testing.T) {
	sets := smallSets(t)
	smallCV := func(t *testing.T, seed uint64) *CVReport {
		return CrossValidate(sets, CVOptions{Folds: 2, Repeats: 2, Seed: seed})
	}
	before := jsonRoundTrip(t, smallCV(t, 1))
	same, err := CompareCV(before, jsonRoundTrip(t, smallCV(t, 1)))
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, tab := range before.Tables {
		want += len(tab.Figures) + len(tab.AtShipped) + len(tab.AtOwn) + len(tab.Confidence)
	}
	if len(same) != want {
		t.Fatalf("CompareCV of two runs: %d deltas, want one per figure (%d)", len(same), want)
	}
	for _, d := range same {
		if d.DeltaF1 != 0 || d.SDDelta != 0 || d.Worse != 0 || d.Folds != 4 || d.Beyond() {
			t.Errorf("the same run twice: %+v, want no change over 4 folds", d)
		}
	}

	// A change in every fold is beyond its spread; one that goes both
	// ways is not, and its falling folds are counted.
	after := jsonRoundTrip(t, smallCV(t, 1))
	tab := &after.Tables[0]
	up, mixed := &tab.Figures[0], &tab.AtShipped[0]
	for i := range up.FoldF1 {
		up.FoldF1[i] -= 0.1
		up.FoldPrecision[i] -= 0.2
		mixed.FoldF1[i] += []float64{0.1, -0.1}[i%2]
	}
	ds, err := CompareCV(before, after)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ds, func(d CVDelta) bool {
		return d.Section == "figures" && d.Candidate == up.Candidate && d.Set == tab.Set && d.Truth == tab.Truth
	})
	j := slices.IndexFunc(ds, func(d CVDelta) bool {
		return d.Section == "at_shipped_confidence" && d.Candidate == mixed.Candidate && d.Set == tab.Set && d.Truth == tab.Truth
	})
	if i < 0 || j < 0 {
		t.Fatalf("changed figures not compared: %d, %d", i, j)
	}
	if d := ds[i]; math.Abs(d.DeltaF1+0.1) > 1e-9 || d.SDDelta > 1e-9 || math.Abs(d.DeltaPrecision+0.2) > 1e-9 || d.Worse != 4 || !d.Beyond() {
		t.Errorf("F1 down 0.1 in every fold: %+v, want ΔF1 -0.1 ± 0, ΔP -0.2, 4 folds worse, beyond the spread", d)
	}
	if d := ds[j]; math.Abs(d.DeltaF1) > 1e-9 || d.SDDelta < 0.1 || d.Worse != 2 || d.Beyond() {
		t.Errorf("F1 ±0.1 by turns: %+v, want ΔF1 0 with a spread, 2 folds worse, not beyond", d)
	}

	// Other folds cannot be paired, nor a report without per-fold figures.
	if _, err := CompareCV(before, jsonRoundTrip(t, smallCV(t, 2))); !errors.Is(err, ErrOtherFolds) {
		t.Errorf("another seed: %v, want ErrOtherFolds", err)
	}
	old := jsonRoundTrip(t, before)
	for ti := range old.Tables {
		for fi := range old.Tables[ti].Figures {
			old.Tables[ti].Figures[fi].FoldF1 = nil
		}
	}
	if _, err := CompareCV(old, before); err == nil {
		t.Error("a report without per-fold figures: no error")
	}
	if _, err := CompareCV(&CVReport{Folds: 2, Repeats: 2, Seed: 1}, before); err == nil {
		t.Error("no table in common: no error")
	}
}
