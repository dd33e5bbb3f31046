package similarity

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// textbookRuns returns the matched runs of the path of Myers' forward
// greedy algorithm on a and b (no common first or last token), written
// as in the paper, unclipped by any bound: every round keeps its whole
// V row, diagonals outside the band [-m, n] are unreachable, the path
// leaves down from k+1 when k = -d or V[k-1] < V[k+1], else right from
// k-1, and the backtrack follows the same rule from (n, m). It is the
// reference the bounded, traced search must reproduce run for run.
func textbookRuns(a, b []uint32) []Run {
	n, m := len(a), len(b)
	at := func(row []int, k int) int { // V[k] of a row of round len(row)/2
		d := len(row) / 2
		if k < -d || k > d || k < -m || k > n {
			return -1
		}
		return row[k+d]
	}
	var rows [][]int
	for d := 0; ; d++ {
		row := make([]int, 2*d+1)
		done := false
		for k := -d; k <= d; k += 2 {
			if k < -m || k > n {
				row[k+d] = -1
				continue
			}
			var x int
			if d == 0 {
				x = 0
			} else {
				prev := rows[d-1]
				if k == -d || (k != d && at(prev, k-1) < at(prev, k+1)) {
					x = at(prev, k+1)
				} else {
					x = at(prev, k-1) + 1
				}
			}
			for x < n && x-k < m && a[x] == b[x-k] {
				x++
			}
			row[k+d] = x
			if x >= n && x-k >= m {
				done = true
			}
		}
		rows = append(rows, row)
		if done {
			break
		}
	}
	var runs []Run
	x, y := n, m
	for d := len(rows) - 1; d > 0; d-- {
		k, prev := x-y, rows[d-1]
		pk := k - 1
		if k == -d || (k != d && at(prev, k-1) < at(prev, k+1)) {
			pk = k + 1
		}
		px := at(prev, pk)
		py := px - pk
		mx, my := px+1, py
		if pk == k+1 {
			mx, my = px, py+1
		}
		if x > mx {
			runs = append(runs, Run{A: mx, B: my, Len: x - mx})
		}
		x, y = px, py
	}
	if x > 0 {
		runs = append(runs, Run{Len: x})
	}
	slices.Reverse(runs)
	return runs
}

// TestAlignmentRunsMatchTextbook checks that [AppendRuns], whose traced
// search visits only the diagonals from which the end is within the
// distance, returns the very runs of the unclipped textbook search on
// random pairs and on real near-duplicates: the central part and the
// divergence depend on the runs, not only on their total.
func TestAlignmentRunsMatchTextbook(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	type pair struct{ a, b []uint32 }
	var pairs []pair
	for i := range 600 {
		k := []int{2, 4, 16, 1000}[i%4]
		a := lcsRandSeq(r, 1+r.IntN(200), k)
		b := lcsMutate(r, a, []float64{0.02, 0.1, 0.3}[i%3], k)
		if i%5 == 0 {
			b = lcsRandSeq(r, 1+r.IntN(200), k)
		}
		pairs = append(pairs, pair{a, b})
	}
	gpl := lcsReadWords(t, "gpl-3.txt", 3000)
	apache := lcsReadWords(t, "apache-2.0.txt", 1500)
	for _, rate := range []float64{0.005, 0.02, 0.05} {
		pairs = append(pairs, pair{lcsHash(gpl), lcsHash(lcsEditWords(r, gpl, rate, apache))})
	}
	traced := 0
	for _, p := range pairs {
		want, ok := traceAligned(p.a, p.b)
		if !ok {
			continue
		}
		traced++
		got, ok := AppendRuns(nil, p.a, p.b, -1)
		if !ok || !slices.Equal(got, want) {
			t.Fatalf("AppendRuns of %d and %d tokens: %d runs (ok %v), textbook %d runs; first difference at %d", len(p.a), len(p.b), len(got), ok, len(want), firstDiff(got, want))
		}
	}
	if traced < len(pairs)/4 {
		t.Fatalf("only %d of %d pairs aligned by the trace", traced, len(pairs))
	}
}

// firstDiff returns the first index at which x and y differ.
func firstDiff(x, y []Run) int {
	i := 0
	for i < len(x) && i < len(y) && x[i] == y[i] {
		i++
	}
	return i
}

// traceAligned returns the runs [AppendRuns] must give for a and b when
// it aligns them by the traced search (the distance without the common
// affixes within [myersCap]): the affixes and the textbook search's runs
// between them. ok is false when the pair is aligned otherwise.
func traceAligned(a, b []uint32) (runs []Run, ok bool) {
	pre, suf := commonAffixes(a, b)
	a2, b2 := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(a2) == 0 || len(b2) == 0 {
		return nil, false
	}
	if d := len(a2) + len(b2) - 2*lcsDP(a2, b2); d > myersCap(len(a2), len(b2)) {
		return nil, false // aligned by the bit-parallel rows, not the trace
	}
	if pre > 0 {
		runs = append(runs, Run{Len: pre})
	}
	for _, rn := range textbookRuns(a2, b2) {
		runs = append(runs, Run{A: rn.A + pre, B: rn.B + pre, Len: rn.Len})
	}
	if suf > 0 {
		runs = append(runs, Run{A: len(a) - suf, B: len(b) - suf, Len: suf})
	}
	return runs, true
}
