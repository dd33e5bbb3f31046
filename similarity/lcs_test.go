package similarity

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// lcsDP is the O(NM) dynamic program the tests check LCS against.
func lcsDP(a, b []uint32) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] >= cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// lcsRandSeq returns n symbols from an alphabet of size k.
func lcsRandSeq(r *rand.Rand, n, k int) []uint32 {
	s := make([]uint32, n)
	for i := range s {
		s[i] = uint32(r.IntN(k))
	}
	return s
}

// lcsMutate returns a copy of s with about rate of its symbols replaced,
// deleted or followed by an insertion, using symbols below k.
func lcsMutate(r *rand.Rand, s []uint32, rate float64, k int) []uint32 {
	out := make([]uint32, 0, len(s)+len(s)/10)
	for _, x := range s {
		if r.Float64() >= rate {
			out = append(out, x)
			continue
		}
		switch r.IntN(3) {
		case 0:
			out = append(out, uint32(r.IntN(k)))
		case 1:
		case 2:
			out = append(out, x, uint32(r.IntN(k)))
		}
	}
	return out
}

func TestLCSAgainstDP(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 400 {
		n, m := r.IntN(60), r.IntN(60)
		k := 2 + r.IntN(8)
		a := lcsRandSeq(r, n, k)
		b := lcsRandSeq(r, m, k)
		if i%2 == 1 { // related pairs too
			b = lcsMutate(r, a, 0.2, k)
		}
		want := lcsDP(a, b)
		got, ok := LCS(a, b, -1)
		if !ok || got != want {
			t.Fatalf("LCS(%v, %v, -1) = %d, %v, want %d, true", a, b, got, ok, want)
		}
		runs, ok := AppendRuns(nil, a, b, -1)
		if !ok {
			t.Fatalf("AppendRuns(%v, %v, -1) not ok", a, b)
		}
		checkRuns(t, a, b, runs, want)
	}
}

// checkRuns checks that runs are a common subsequence of length want.
func checkRuns(t *testing.T, a, b []uint32, runs []Run, want int) {
	t.Helper()
	total, ea, eb := 0, 0, 0
	for _, rn := range runs {
		if rn.Len <= 0 || rn.A < ea || rn.B < eb || rn.A+rn.Len > len(a) || rn.B+rn.Len > len(b) {
			t.Fatalf("AppendRuns(%v, %v): bad run %+v in %+v", a, b, rn, runs)
		}
		for i := range rn.Len {
			if a[rn.A+i] != b[rn.B+i] {
				t.Fatalf("AppendRuns(%v, %v): run %+v does not match", a, b, rn)
			}
		}
		total += rn.Len
		ea, eb = rn.A+rn.Len, rn.B+rn.Len
	}
	if total != want {
		t.Fatalf("AppendRuns(%v, %v) matched %d tokens, want %d", a, b, total, want)
	}
}

func TestLCSEarlyExit(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		a := lcsRandSeq(r, r.IntN(50), 4)
		b := lcsMutate(r, a, 0.3, 4)
		l := lcsDP(a, b)
		d := len(a) + len(b) - 2*l
		for _, maxD := range []int{0, d / 2, d - 1, d, d + 1} {
			if maxD < 0 {
				continue
			}
			got, ok := LCS(a, b, maxD)
			wantOK := d <= maxD
			if ok != wantOK {
				t.Fatalf("LCS(%v, %v, %d) ok = %v, want %v (D = %d)", a, b, maxD, ok, wantOK, d)
			}
			if ok && got != l {
				t.Fatalf("LCS(%v, %v, %d) = %d, want %d", a, b, maxD, got, l)
			}
			if !ok && got < l {
				t.Fatalf("LCS(%v, %v, %d) = %d, not an upper bound of %d", a, b, maxD, got, l)
			}
			_, rok := AppendRuns(nil, a, b, maxD)
			if rok != wantOK {
				t.Fatalf("AppendRuns(%v, %v, %d) ok = %v, want %v", a, b, maxD, rok, wantOK)
			}
		}
	}
}

func TestLCSEdges(t *testing.T) {
	tests := []struct {
		name string
		a, b []uint32
		want int
	}{
		{"both empty", nil, nil, 0},
		{"one empty", []uint32{1, 2}, nil, 0},
		{"equal", []uint32{1, 2, 3}, []uint32{1, 2, 3}, 3},
		{"prefix", []uint32{1, 2, 3}, []uint32{1, 2}, 2},
		{"suffix", []uint32{1, 2, 3}, []uint32{2, 3}, 2},
		{"disjoint", []uint32{1, 2, 3}, []uint32{4, 5}, 0},
		{"middle", []uint32{1, 9, 3}, []uint32{1, 8, 3}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := LCS(tt.a, tt.b, -1); got != tt.want || !ok {
				t.Errorf("LCS(%v, %v, -1) = %d, %v, want %d, true", tt.a, tt.b, got, ok, tt.want)
			}
		})
	}
}

func TestMaxDForRatio(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		a := lcsRandSeq(r, 1+r.IntN(40), 5)
		b := lcsMutate(r, a, 0.25, 5)
		ratio, _ := LCSRatio(a, b, -1)
		for _, th := range []float64{0.3, 0.5, 0.7, 0.9} {
			_, ok := LCSRatio(a, b, MaxDForRatio(len(a), len(b), th))
			if ratio >= th && !ok {
				t.Fatalf("LCSRatio(%v, %v) = %.3f >= %.1f but exited early at MaxDForRatio", a, b, ratio, th)
			}
		}
	}
}

// lcsWords splits text into lower-case word tokens.
func lcsWords(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// lcsHash returns the 32-bit FNV-1a hash of each word.
func lcsHash(ws []string) []uint32 {
	out := make([]uint32, len(ws))
	for i, w := range ws {
		h := fnv.New32a()
		h.Write([]byte(w))
		out[i] = h.Sum32()
	}
	return out
}

// lcsReadWords returns the first n words of a testdata/lcs file.
func lcsReadWords(tb testing.TB, name string, n int) []string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "lcs", name))
	if err != nil {
		tb.Fatal(err)
	}
	ws := lcsWords(string(data))
	if len(ws) < n {
		tb.Fatalf("%s has %d words, want at least %d", name, len(ws), n)
	}
	return ws[:n]
}

// lcsEditWords returns a copy of ws with about rate of its words replaced,
// deleted, or followed by an inserted word, each drawn from pool.
func lcsEditWords(r *rand.Rand, ws []string, rate float64, pool []string) []string {
	out := make([]string, 0, len(ws)+len(ws)/10)
	for _, w := range ws {
		if r.Float64() >= rate {
			out = append(out, w)
			continue
		}
		switch r.IntN(3) {
		case 0:
			out = append(out, pool[r.IntN(len(pool))])
		case 1:
		case 2:
			out = append(out, w, pool[r.IntN(len(pool))])
		}
	}
	return out
}

func TestCentralLCS(t *testing.T) {
	gpl := lcsReadWords(t, "gpl-3.txt", 3000)
	apache := lcsReadWords(t, "apache-2.0.txt", 1500)
	templateA := lcsHash(gpl[2000:2150]) // head template of site A
	tailA := lcsHash(gpl[2150:2300])
	templateB := lcsHash(apache[1000:1150])
	tailB := lcsHash(apache[1150:1300])
	contentX := lcsHash(gpl[0:1000])
	contentY := lcsHash(apache[0:1000])
	cat := func(parts ...[]uint32) []uint32 {
		var out []uint32
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	r := rand.New(rand.NewPCG(7, 8))
	xEdited := lcsHash(lcsEditWords(r, gpl[0:1000], 0.03, apache))
	xSplit := cat(contentX[:500], templateB[:60], contentX[500:])

	tests := []struct {
		name          string
		a, b          []uint32
		wantHigh      bool
		minCov, maxCo float64
	}{
		{"same template different content", cat(templateA, contentX, tailA), cat(templateA, contentY, tailA), false, 0, 0.2},
		{"same content different template", cat(templateA, contentX, tailA), cat(templateB, contentX, tailB), true, 0.75, 1},
		{"edited content different template", cat(templateA, contentX, tailA), cat(templateB, xEdited, tailB), true, 0.75, 1},
		{"content split by inserted block", contentX, xSplit, true, 0.99, 1},
		{"identical", contentX, contentX, true, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := CentralLCS(tt.a, tt.b, -1, CentralOptions{})
			if !ok {
				t.Fatalf("CentralLCS not ok")
			}
			cov := min(c.CoverageA, c.CoverageB)
			high := c.CentralRatio >= 0.8 && cov >= 0.5
			if high != tt.wantHigh || cov < tt.minCov || cov > tt.maxCo {
				t.Errorf("CentralLCS = ratio %.3f coverage %.3f/%.3f (full ratio %.3f), want high %v, coverage in [%.2f, %.2f]",
					c.CentralRatio, c.CoverageA, c.CoverageB, c.Ratio, tt.wantHigh, tt.minCov, tt.maxCo)
			}
			if l := lcsDP(tt.a, tt.b); c.LCS != l {
				t.Errorf("CentralLCS.LCS = %d, want %d", c.LCS, l)
			}
		})
	}
}

func TestCentralLCSEmpty(t *testing.T) {
	c, ok := CentralLCS(nil, []uint32{1, 2, 3}, -1, CentralOptions{})
	if !ok || c.CentralRatio != 0 || c.CoverageA != 0 || c.CoverageB != 0 {
		t.Errorf("CentralLCS(nil, 3 tokens) = %+v, %v, want zero, true", c, ok)
	}
	if _, ok := CentralLCS([]uint32{1, 2, 3}, []uint32{4, 5, 6}, 2, CentralOptions{}); ok {
		t.Errorf("CentralLCS(disjoint, maxD 2) ok = true, want false")
	}
}

// TestBidiDistance checks the bidirectional search against the dynamic
// programme: for every bound it finds the edit distance when the
// distance is within it (or one over it), and reports it out of reach
// otherwise, resuming from a smaller bound as distance does.
func TestBidiDistance(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var s lcsScratch
	for i := range 600 {
		k := 2 + r.IntN(6)
		a := lcsRandSeq(r, 1+r.IntN(70), k)
		b := lcsMutate(r, a, 0.05+0.4*r.Float64(), k)
		if i%3 == 0 {
			b = lcsRandSeq(r, 1+r.IntN(70), k)
		}
		pre, suf := commonAffixes(a, b)
		a, b = a[pre:len(a)-suf], b[pre:len(b)-suf]
		if len(a) == 0 || len(b) == 0 {
			continue
		}
		d := len(a) + len(b) - 2*lcsDP(a, b)
		for _, lim := range []int{0, d / 2, d - 1, d, d + 1, 2 * d} {
			if lim < 0 {
				continue
			}
			s.bidiInit(lim)
			if lim > 2 { // resumed, as distance runs it
				if got, ok := s.bidiDistance(a, b, lim/2); ok && got != d {
					t.Fatalf("bidiDistance(%v, %v, %d) = %d, want %d", a, b, lim/2, got, d)
				}
			}
			got, ok := s.bidiDistance(a, b, lim)
			switch {
			case ok && got != d:
				t.Fatalf("bidiDistance(%v, %v, %d) = %d, want %d", a, b, lim, got, d)
			case ok && d > lim+1, !ok && d <= lim:
				t.Fatalf("bidiDistance(%v, %v, %d) ok = %v, distance %d", a, b, lim, ok, d)
			}
		}
	}
}

// multisetIntersection is Σ min(count in a, count in b) over the tokens.
func multisetIntersection(a, b []uint32) int {
	ca := map[uint32]int{}
	for _, x := range a {
		ca[x]++
	}
	n := 0
	for _, x := range b {
		if ca[x] > 0 {
			ca[x]--
			n++
		}
	}
	return n
}

// The bucketed intersection bounds the exact one from above, so it bounds
// the LCS length, and on real text it is close to the exact one.
func TestBucketBound(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	var s lcsScratch
	for range 300 {
		k := 2 + r.IntN(5000)
		a, b := lcsRandSeq(r, r.IntN(3000), k), lcsRandSeq(r, r.IntN(3000), k)
		if got, want := s.bucketBound(a, b), multisetIntersection(a, b); got < want {
			t.Fatalf("bucketBound(%d, %d tokens of %d) = %d, below the intersection %d", len(a), len(b), k, got, want)
		}
	}
	gpl := lcsHash(lcsReadWords(t, "gpl-3.txt", 5000))
	apache := lcsHash(lcsReadWords(t, "apache-2.0.txt", 1500))
	for _, n := range []int{100, 1500} {
		got, want := s.bucketBound(gpl[:n], apache[:n]), multisetIntersection(gpl[:n], apache[:n])
		if got < want || float64(got) > 1.05*float64(want) {
			t.Errorf("bucketBound(gpl, apache, %d words) = %d, want the intersection %d or up to 5%% above", n, got, want)
		}
		if l := lcsDP(gpl[:n], apache[:n]); got < l {
			t.Errorf("bucketBound(gpl, apache, %d words) = %d, below the LCS %d", n, got, l)
		}
	}
}

// fuzzSeqs returns the two sequences of a fuzz input: its bytes split at
// the first 0xff, each byte's value modulo an alphabet of
// alphabet%16+1 tokens, so that tokens repeat as words do, spread over
// the hash space as word hashes are.
func fuzzSeqs(data []byte, alphabet uint8) (a, b []uint32) {
	k := uint32(alphabet%16) + 1
	dst := &a
	for _, c := range data {
		if c == 0xff && dst == &a {
			dst = &b
			continue
		}
		*dst = append(*dst, uint32(c)%k*0x9E3779B1)
	}
	return a, b
}

// FuzzLCSBounded checks the bounded LCS against the dynamic programme on
// any pair: exact within the bound, an upper bound of the length beyond
// it, and the decision "D <= maxD" the same. The input's bytes are the two
// sequences' tokens (split at the first 0xff byte; each byte's low bits a
// token, so that tokens repeat as words do) and the bound.
func FuzzLCSBounded(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 0xff, 1, 3, 4, 6, 5}, uint16(2), uint8(3))
	f.Add([]byte{7, 7, 7, 1, 0xff, 7, 1, 7, 7}, uint16(0), uint8(1))
	f.Add([]byte{0xff}, uint16(1), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, maxD uint16, alphabet uint8) {
		a, b := fuzzSeqs(data, alphabet)
		want := lcsDP(a, b)
		d := len(a) + len(b) - 2*want
		lim := int(maxD) % (len(a) + len(b) + 2)
		got, ok := LCS(a, b, lim)
		if ok != (d <= lim) || (ok && got != want) || got < want {
			t.Fatalf("LCS(%v, %v, %d) = %d, %v; exact %d (D = %d)", a, b, lim, got, ok, want, d)
		}
		if got := LCSLength(a, b); got != want {
			t.Fatalf("LCSLength(%v, %v) = %d, exact %d", a, b, got, want)
		}
		if runs, traced := traceAligned(a, b); traced && ok {
			if got, _ := AppendRuns(nil, a, b, lim); !slices.Equal(got, runs) {
				t.Fatalf("AppendRuns(%v, %v, %d) = %v, textbook search %v", a, b, lim, got, runs)
			}
		}
	})
}

// divergencePrefix is the divergence of one side by a prefix count of
// its unmatched tokens over every window, the definition that
// [lcsScratch.divergence] computes from the runs' edges alone.
func divergencePrefix(runs []Run, n, window, share int, pos func(Run) int) float64 {
	start, span, w, ok := divergenceFrame(runs, n, window, share, pos)
	if !ok {
		return 1
	}
	prefix := make([]int, span+1)
	i := 0
	for _, r := range runs {
		at := pos(r) - start
		for ; i < at; i++ {
			prefix[i+1] = prefix[i] + 1
		}
		for ; i < at+r.Len; i++ {
			prefix[i+1] = prefix[i]
		}
	}
	worst := 0
	for j := w; j <= span; j++ {
		worst = max(worst, prefix[j]-prefix[j-w])
	}
	return float64(worst) / float64(w)
}

func TestDivergenceAgainstPrefixCount(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	s := new(lcsScratch)
	posA := func(r Run) int { return r.A }
	posB := func(r Run) int { return r.B }
	check := func(runs []Run, n, m, window int) {
		t.Helper()
		for _, side := range []struct {
			len int
			pos func(Run) int
		}{{n, posA}, {m, posB}} {
			for _, share := range []int{0, 3, DefaultPageShare} {
				got := s.divergence(runs, side.len, window, share, side.pos)
				if want := divergencePrefix(runs, side.len, window, share, side.pos); got != want {
					t.Fatalf("divergence(%v, %d, window %d, share %d) = %v, prefix count %v", runs, side.len, window, share, got, want)
				}
			}
		}
	}
	for i := range 3000 {
		// Runs with gaps of 0 to a few windows on either side, touching
		// runs included, and windows from 1 to beyond the span.
		var runs []Run
		a, b := r.IntN(5), r.IntN(5)
		for range 1 + r.IntN(30) {
			a += []int{0, 0, 1, r.IntN(20), r.IntN(300)}[r.IntN(5)]
			b += []int{0, 0, 1, r.IntN(20), r.IntN(300)}[r.IntN(5)]
			l := 1 + r.IntN([]int{2, 10, 200}[i%3])
			runs = append(runs, Run{A: a, B: b, Len: l})
			a += l
			b += l
		}
		check(runs, a+r.IntN(5), b+r.IntN(5), []int{1, 2, 7, 100, 5000}[r.IntN(5)])
	}
	// Real alignments: the licence texts at three edit rates.
	gpl := lcsHash(lcsReadWords(t, "gpl-3.txt", 4000))
	for _, rate := range []float64{0.01, 0.05, 0.3} {
		b := lcsMutate(r, gpl, rate, 50)
		runs, _ := AppendRuns(nil, gpl, b, -1)
		for _, window := range []int{1, 16, DefaultWindow, 10000} {
			check(runs, len(gpl), len(b), window)
		}
	}
}

// TestPageDivergence: a section of 150 words rewritten in a long text
// (the GPL and the Apache licence, 7,000 words) fills a 100-word window, so the
// divergence is 1 whatever the page's length; the page divergence reads
// it over a twentieth of the frame, as the small part of the page it is.
// In a text under 2,000 words both are the same, and neither is computed
// unless asked for.
func TestPageDivergence(t *testing.T) {
	long := lcsHash(append(lcsReadWords(t, "gpl-3.txt", 5500), lcsReadWords(t, "apache-2.0.txt", 1500)...))
	if len(long) < 6000 {
		t.Fatalf("the licences have %d words, want 6,000 or more", len(long))
	}
	rewrite := func(s []uint32, at int) []uint32 {
		out := slices.Clone(s)
		for i := at; i < at+150; i++ {
			out[i] ^= 0x9e3779b9 // another word
		}
		return out
	}
	for _, c := range []struct {
		name     string
		a        []uint32
		wantPage func(div, page float64) bool
	}{
		{"7,000 words", long, func(div, page float64) bool { return div == 1 && page <= 0.5 }},
		{"1,500 words", long[:1500], func(div, page float64) bool { return div == 1 && page == div }},
	} {
		b := rewrite(c.a, len(c.a)/2)
		got, ok := CentralLCS(c.a, b, -1, CentralOptions{PageShare: DefaultPageShare})
		if !ok {
			t.Fatalf("%s: no alignment", c.name)
		}
		if !c.wantPage(got.Divergence, got.PageDivergence) {
			t.Errorf("%s, 150 words rewritten: divergence %v, page divergence %v", c.name, got.Divergence, got.PageDivergence)
		}
		plain, _ := CentralLCS(c.a, b, -1, CentralOptions{})
		if !math.IsNaN(plain.PageDivergence) || plain.Divergence != got.Divergence {
			t.Errorf("%s without PageShare: page divergence %v (want NaN), divergence %v (want %v)", c.name, plain.PageDivergence, plain.Divergence, got.Divergence)
		}
	}
}
