package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/eval"
)

// TestWriteCVTextMarksBestConfidence checks that the confidence table of
// `winnow eval -cv` marks the F1-best row, the operator's choice.
func TestWriteCVTextMarksBestConfidence(t *testing.T) {
	rep := &eval.CVReport{Tables: []eval.CVTable{{
		Set: "pages", Truth: "label >= 1",
		Confidence: []eval.CVFigure{
			{Candidate: "min_confidence 0.50", F1: 0.80},
			{Candidate: "min_confidence 0.60", F1: 0.85},
			{Candidate: "min_confidence 0.70", F1: 0.85},
		},
	}}}
	var b bytes.Buffer
	writeCVText(&b, rep)
	var marked []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "min_confidence 0.") && strings.Contains(l, "*") {
			marked = append(marked, strings.Fields(l)[1])
		}
	}
	if len(marked) != 1 || marked[0] != "0.60" {
		t.Errorf("marked rows %v, want only min_confidence 0.60 (the first of the best F1)\n%s", marked, b.String())
	}
	if bestF1(nil) != -1 {
		t.Error("bestF1(nil) != -1")
	}
}
