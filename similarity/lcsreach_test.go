package similarity

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkReaches checks LCSReaches(a, b, need) against the exact length l:
// the answer is the truth and the bounds hold and prove it.
func checkReaches(t *testing.T, a, b []uint32, need, l int) {
	t.Helper()
	lo, hi, reached := LCSReaches(a, b, need)
	if reached != (l >= need) || lo > l || hi < l || (reached && lo < need) || (!reached && hi >= need) {
		t.Fatalf("LCSReaches(%d tokens, %d tokens, need %d) = %d, %d, %v; exact length %d", len(a), len(b), need, lo, hi, reached, l)
	}
}

// checkGreedy checks that the greedy walk's runs are a common
// subsequence of a and b as long as the length it returns, and no longer
// than the LCS.
func checkGreedy(t *testing.T, a, b []uint32, need, lim, l int) {
	t.Helper()
	s := new(lcsScratch)
	g := s.greedy(a, b, need, lim, true)
	runs := sortRuns(s.runs)
	checkRuns(t, a, b, runs, g)
	if g > l {
		t.Fatalf("greedy walk found %d common tokens, the LCS has %d", g, l)
	}
	if len(a) == 0 || len(b) == 0 {
		return
	}
	s.runs = s.runs[:0]
	w := s.jumpWalk(a, b, need, lim, true)
	checkRuns(t, a, b, s.runs, w)
	if w > l {
		t.Fatalf("walk with jumps found %d common tokens, the LCS has %d", w, l)
	}
}

// sortRuns returns the runs of the greedy walk in order of position:
// the forward walk appends its runs in order, the backward one in
// reverse. A checked walk's runs do not overlap, so their starts order
// them.
func sortRuns(runs []Run) []Run {
	out := slices.Clone(runs)
	slices.SortFunc(out, func(x, y Run) int { return cmp.Compare(x.A, y.A) })
	return out
}

func TestLCSReachesAgainstDP(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for i := range 400 {
		n := r.IntN(200)
		k := []int{2, 4, 16, 1000}[i%4]
		a := lcsRandSeq(r, n, k)
		b := lcsRandSeq(r, r.IntN(200), k)
		if i%2 == 1 {
			b = lcsMutate(r, a, []float64{0.02, 0.1, 0.3}[i%3], k)
		}
		l := lcsDP(a, b)
		for _, need := range []int{0, 1, l - 5, l - 1, l, l + 1, l + 5, min(len(a), len(b)) + 1} {
			checkReaches(t, a, b, need, l)
		}
		for _, need := range []int{l / 2, l, len(a) + len(b)} {
			checkGreedy(t, a, b, need, len(a)+len(b), l)
		}
		checkGreedy(t, a, b, l, (len(a)+len(b))/4, l)
	}
}

func TestLCSReachesRealText(t *testing.T) {
	gpl := lcsReadWords(t, "gpl-3.txt", 5000)
	apache := lcsReadWords(t, "apache-2.0.txt", 1500)
	r := rand.New(rand.NewPCG(23, 24))
	for _, rate := range []float64{0, 0.01, 0.03, 0.1, 0.3, 1} {
		for _, n := range []int{70, 1300, 5000} {
			a := lcsHash(gpl[:n])
			b := lcsHash(lcsEditWords(r, gpl[:n], rate, apache))
			l := exactMyers(a, b)
			for _, ratio := range []float64{0.3, DefaultVerifyLCS, 0.9, 0.99} {
				need := NeedForRatio(len(a), len(b), ratio)
				checkReaches(t, a, b, need, l)
				// The same question as the bounded LCS answers.
				_, ok := LCS(a, b, MaxDForRatio(len(a), len(b), ratio))
				if _, _, reached := LCSReaches(a, b, need); reached != ok {
					t.Errorf("%d words, edit rate %.2f, ratio %.2f: LCSReaches %v, LCS within MaxDForRatio %v", n, rate, ratio, reached, ok)
				}
			}
			checkGreedy(t, a, b, len(a), len(a)+len(b), l)
		}
	}
	// A paragraph inserted: the forward walk stops there and the backward
	// one finds the rest.
	a := lcsHash(gpl[:3000])
	b := lcsHash(append(append(append([]string{}, gpl[:1500]...), apache[:400]...), gpl[1500:3000]...))
	s := new(lcsScratch)
	if g := s.greedy(a, b, len(a), len(a)+len(b), true); g != len(a) {
		t.Errorf("greedy walk across an inserted paragraph: %d common tokens, want %d", g, len(a))
	}
	checkRuns(t, a, b, sortRuns(s.runs), len(a))
}

// TestLCSReachesTemplates checks that one text under two different site
// templates, a head and a tail longer than the greedy walk's window, is
// proved to reach the verification's ratio by a common subsequence
// found (the walk with jumps), not by the length.
func TestLCSReachesTemplates(t *testing.T) {
	gpl := lcsHash(lcsReadWords(t, "gpl-3.txt", 3000))
	apache := lcsHash(lcsReadWords(t, "apache-2.0.txt", 1500))
	content := gpl[:2000]
	a := slices.Concat(gpl[2000:2300], content, gpl[2300:2600])
	b := slices.Concat(apache[:300], content, apache[300:600])
	need := NeedForRatio(len(a), len(b), DefaultVerifyLCS)
	l := exactMyers(a, b)
	if l < need {
		t.Fatalf("test pages: LCS %d below the ratio's %d", l, need)
	}
	lo, hi, ok := LCSReaches(a, b, need)
	if !ok || lo < need || lo >= hi || hi < l {
		t.Errorf("LCSReaches(template pages, need %d) = %d, %d, %v; want reached by a common subsequence below the bound, exact %d", need, lo, hi, ok, l)
	}
	if s := new(lcsScratch); s.greedy(a, b, need, len(a)+len(b)-2*need, false) >= need {
		t.Errorf("the greedy walk alone proved the template pages: the test does not reach the walk with jumps")
	}
}

func TestNeedForRatio(t *testing.T) {
	for _, c := range []struct{ n, m int }{{0, 0}, {1, 1}, {10, 13}, {1000, 1000}, {997, 1200}} {
		for _, ratio := range []float64{0, 0.3, DefaultVerifyLCS, 0.9, 1} {
			need := NeedForRatio(c.n, c.m, ratio)
			if need > 0 && Ratio(need-1, c.n, c.m) >= ratio && need-1 <= min(c.n, c.m) {
				t.Errorf("NeedForRatio(%d, %d, %v) = %d, but %d reaches the ratio", c.n, c.m, ratio, need, need-1)
			}
			if need <= min(c.n, c.m) && Ratio(need, c.n, c.m) < ratio-1e-9 {
				t.Errorf("NeedForRatio(%d, %d, %v) = %d, whose ratio %v is below", c.n, c.m, ratio, need, Ratio(need, c.n, c.m))
			}
		}
	}
}

// FuzzLCSReaches checks LCSReaches against the dynamic program on any
// pair and need, and that the greedy walk's runs are a common
// subsequence; the input as in FuzzLCSBounded.
func FuzzLCSReaches(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 0xff, 1, 3, 4, 6, 5}, uint16(3), uint8(3))
	f.Add([]byte{7, 7, 7, 1, 0xff, 7, 1, 7, 7}, uint16(0), uint8(1))
	f.Add([]byte{0xff}, uint16(1), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, need uint16, alphabet uint8) {
		a, b := fuzzSeqs(data, alphabet)
		l := lcsDP(a, b)
		nd := int(need) % (len(a) + len(b) + 2)
		checkReaches(t, a, b, nd, l)
		checkGreedy(t, a, b, nd, int(need)%(len(a)+len(b)+1), l)
	})
}
