package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDedupVerbose checks that dedup -v reports every stage, the CPU use,
// the pairs reaching each stage of the verification (summing to the
// candidates) and the memory held, and that -v changes no output.
func TestDedupVerbose(t *testing.T) {
	code, out, errs := winnow(t, "", "-set", "dedup.progress=never", "dedup", "-v")
	if code != 0 {
		t.Fatalf("winnow dedup -v = exit %d, stderr %s", code, errs)
	}
	for _, stage := range []string{"read ", "canonicalize ", "sign ", "candidates ", "verify ", "cluster ", "write "} {
		if !regexp.MustCompile(stage + `\d+\.\d\d s`).MatchString(errs) {
			t.Errorf("dedup -v stderr has no time for stage %q:\n%s", strings.TrimSpace(stage), errs)
		}
	}
	if !regexp.MustCompile(`CPU \d+\.\d\d s in \d+\.\d\d s of wall time: \d+ %`).MatchString(errs) {
		t.Errorf("dedup -v stderr has no CPU use:\n%s", errs)
	}
	m := regexp.MustCompile(`passed the cheap tests; settled by min-hash (\d+) .*by the length bound (\d+) .*by the LCS length (\d+) .*with the alignment (\d+) .*otherwise (\d+) .*already joined (\d+) `).FindStringSubmatch(errs)
	c := regexp.MustCompile(`pairs: \d+ from the candidate tables; (\d+) `).FindStringSubmatch(errs)
	if m == nil || c == nil {
		t.Fatalf("dedup -v stderr has no pair counts:\n%s", errs)
	}
	sum := 0
	for _, s := range m[1:] {
		n, _ := strconv.Atoi(s)
		sum += n
	}
	if cand, _ := strconv.Atoi(c[1]); sum != cand || cand == 0 {
		t.Errorf("pairs settled by stage or already joined sum to %d, candidates %d (want equal and > 0)", sum, cand)
	}
	if !regexp.MustCompile(`memory: [1-9]\d* word hashes held`).MatchString(errs) {
		t.Errorf("dedup -v stderr has no memory line:\n%s", errs)
	}
	if _, plain, _ := winnow(t, "", "-set", "dedup.progress=never", "dedup"); plain != out {
		t.Error("dedup -v output differs from dedup's")
	}
}
