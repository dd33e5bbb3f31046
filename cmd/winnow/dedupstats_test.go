package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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

// TestDedupSeveralFoldersNameTheInput: two folders hold a page under
// the same relative path; the lines name each member's input, so every
// member can be found (input joined with id) and compared.
func TestDedupSeveralFoldersNameTheInput(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	page, err := os.ReadFile("../../corpus/sample/html/13/Benchmarking.html")
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile("../../corpus/sample/html/13/CodeReview.html")
	if err != nil {
		t.Fatal(err)
	}
	for path, body := range map[string][]byte{filepath.Join(a, "page.html"): page, filepath.Join(b, "page.html"): other, filepath.Join(b, "copy.html"): page} {
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out.jsonl")
	if code, _, errs := winnow(t, "", "-set", "dedup.progress=never", "dedup", "-o", out, a, b); code != 0 {
		t.Fatalf("dedup = exit %d: %s", code, errs)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var line struct {
		Members []struct{ ID, Input string } `json:"members"`
	}
	if err := json.Unmarshal(raw, &line); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if len(line.Members) != 2 {
		t.Fatalf("members %+v, want the page and its copy", line.Members)
	}
	for _, m := range line.Members {
		if _, err := os.Stat(filepath.Join(m.Input, m.ID)); err != nil || m.Input == "" {
			t.Errorf("member %+v: input joined with id does not name its file: %v", m, err)
		}
	}
}
