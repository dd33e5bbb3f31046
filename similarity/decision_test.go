package similarity

import (
	"fmt"
	"github.com/winnow-search/winnow/internal/hashmix"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// clSign signs a document made of the words ws, one sentence per 15
// words, with the default options.
func clSign(ws []string) *Signature {
	var sentences []string
	for i := 0; i < len(ws); i += 15 {
		sentences = append(sentences, strings.Join(ws[i:min(i+15, len(ws))], " "))
	}
	s := Sign(Input{Text: []byte(strings.Join(ws, " ")), Tokens: ws, Sentences: sentences}, Options{})
	return &s
}

// clDocs returns signatures of real text: a GPL page, a near-duplicate
// of it (3% of words edited), an unrelated Apache page, and the page's
// first 500 words.
func clDocs(tb testing.TB) (page, near, other, part *Signature) {
	gpl := lcsReadWords(tb, "gpl-3.txt", 1300)
	apache := lcsReadWords(tb, "apache-2.0.txt", 1300)
	r := rand.New(rand.NewPCG(11, 12))
	return clSign(gpl), clSign(lcsEditWords(r, gpl, 0.03, apache)), clSign(apache), clSign(gpl[:500])
}

func noSeq(s *Signature) *Signature {
	c := *s
	c.Seq = nil
	return &c
}

// legacyDecision is the hand-tuned default before the fitted models.
var legacyDecision = Decision{Verify: Test{MethodLCSLocal, DefaultVerifyLCS}}

func TestDecide(t *testing.T) {
	page, near, other, part := clDocs(t)
	mirror := clSign(lcsEditWords(rand.New(rand.NewPCG(41, 42)), lcsReadWords(t, "gpl-3.txt", 1300), 0.002, []string{"mirror"}))
	tiny := clSign(strings.Fields("one two three four five six seven eight"))
	var empty Signature
	tests := []struct {
		name    string
		d       Decision
		a, b    *Signature
		want    bool
		step    Step
		method  Method
		rel     Relation
		explain string // prefix of Explain
	}{
		{"default near-duplicate", Decision{}, page, near, true, StepVerify, MethodModel, RelationDuplicate, "duplicate: simhash distance"},
		{"default mirror accepted", Decision{}, page, mirror, true, StepAccept, MethodModel, RelationDuplicate, "duplicate: simhash distance 2 <= 16 (candidate), P(near-duplicate) 0.96 >= 0.95 [jaccard 0.98 (+8.4), intercept -5.3] (accepted without LCS)"},
		{"default mirror without seq accepted", Decision{}, noSeq(page), mirror, true, StepAccept, MethodModel, RelationDuplicate, "duplicate: simhash distance 2 <= 16 (candidate), P(near-duplicate) 0.96 >= 0.95"},
		{"accept disabled verifies mirror", Decision{Accept: Test{Method: MethodNone}}, page, mirror, true, StepVerify, MethodModel, RelationDuplicate, "duplicate: simhash distance 2 <= 16 (candidate), P(near-duplicate) 0.97 >= 0.68 [lcs 1.00 (+8.6), divergence 0.00 (-0.0), intercept -5.0] (verified)"},
		{"accept disabled, no seq, cheap model", Decision{Accept: Test{Method: MethodNone}}, noSeq(page), mirror, true, StepVerify, MethodModel, RelationDuplicate, "duplicate: simhash distance 2 <= 16 (candidate), P(near-duplicate) 0.96 >= 0.68 [jaccard 0.98 (+8.4), intercept -5.3] (verified; no token sequence for LCS)"},
		{"remove mirror", Decision{Purpose: PurposeRemove}, page, mirror, true, StepVerify, MethodModel, RelationDuplicate, "duplicate: simhash distance 2 <= 16 (candidate), P(content-equivalent) 0.98 >= 0.90 [lcs_gap 0.98 (+5.4), jaccard 0.98 (+3.8), divergence 0.00 (-0.0), intercept -5.4] (verified)"},
		{"remove keeps the edited copy", Decision{Purpose: PurposeRemove}, page, near, false, StepVerify, MethodModel, RelationNone, "not duplicate: simhash distance"},
		{"legacy accepts mirror", legacyDecision, page, mirror, true, StepAccept, MethodJaccard, RelationDuplicate, "duplicate: simhash distance 2 <= 16 (candidate), jaccard 0.98 >= 0.90 (accepted without LCS)"},
		{"legacy accept disabled verifies mirror", Decision{Verify: legacyDecision.Verify, Accept: Test{Method: MethodNone}}, page, mirror, true, StepVerify, MethodLCSLocal, RelationDuplicate, "duplicate: simhash distance 2 <= 16 (candidate), LCS ratio 1.00 >= 0.77 (verified)"},
		{"accept by supershingles", Decision{Accept: Test{MethodSupershingles, 6}}, page, noSeq(page), true, StepAccept, MethodSupershingles, RelationDuplicate, "duplicate: simhash distance 0 <= 16 (candidate), supershingles 6 >= 6 (accepted without LCS)"},
		{"legacy accept below threshold verifies", Decision{Verify: legacyDecision.Verify, Accept: Test{MethodJaccard, 0.99}}, page, near, true, StepVerify, MethodLCSLocal, RelationDuplicate, "duplicate: simhash distance"},
		{"legacy no seq falls back to jaccard", legacyDecision, noSeq(page), noSeq(near), true, StepVerify, MethodJaccard, RelationDuplicate, "duplicate: simhash distance"},
		{"lcs single method never accepts", SingleMethod(MethodLCSLocal, 0.56), page, mirror, true, StepVerify, MethodLCSLocal, RelationDuplicate, "duplicate: every pair is a candidate, LCS ratio 1.00 >= 0.77 (verified)"},
		{"default unrelated", Decision{}, page, other, false, StepCandidate, MethodNone, RelationNone, "not duplicate: simhash distance"},
		{"default no seq falls back to the cheap model", Decision{}, noSeq(page), noSeq(near), true, StepVerify, MethodModel, RelationDuplicate, "duplicate: simhash distance"},
		{"default part of page", Decision{}, page, part, false, StepVerify, MethodModel, RelationContains, "not duplicate: "},
		{"default part of page, containment", Decision{Containment: true}, part, page, true, StepVerify, MethodModel, RelationContained, "duplicate: "},
		{"empty never matches empty", Decision{}, &empty, &empty, false, StepSkip, MethodNone, RelationNone, "not duplicate: a has 0 tokens, fewer than 10: too short to compare"},
		{"tiny never matches itself", Decision{}, tiny, tiny, false, StepSkip, MethodNone, RelationNone, "not duplicate: a has 8 tokens, fewer than 10"},
		{"tiny allowed by MinTokens", Decision{MinTokens: 5, Verify: Test{Method: MethodNone}}, tiny, tiny, true, StepCandidate, MethodNone, RelationDuplicate, "duplicate: simhash distance 0 <= 16 (candidate, no verification)"},
		{"empty b", Decision{}, page, &empty, false, StepSkip, MethodNone, RelationNone, "not duplicate: b has 0 tokens"},
		{"simhash identical", SingleMethod(MethodSimhash, PaperSimhash), page, noSeq(page), true, StepCandidate, MethodNone, RelationDuplicate, "duplicate: simhash distance 0 <= 5 (candidate, no verification)"},
		{"simhash unrelated", SingleMethod(MethodSimhash, PaperSimhash), page, other, false, StepCandidate, MethodNone, RelationNone, "not duplicate: no candidate test passed: simhash distance"},
		{"bloom identical", SingleMethod(MethodBloom, PaperBloom), page, noSeq(page), true, StepCandidate, MethodNone, RelationDuplicate, "duplicate: bloom match"},
		{"bloom unrelated", SingleMethod(MethodBloom, PaperBloom), page, other, false, StepCandidate, MethodNone, RelationNone, "not duplicate: no candidate test passed: bloom match"},
		{"supershingles identical", SingleMethod(MethodSupershingles, PaperSupershingles), page, noSeq(page), true, StepCandidate, MethodNone, RelationDuplicate, "duplicate: supershingles 6 >= 2"},
		{"supershingles unrelated", SingleMethod(MethodSupershingles, PaperSupershingles), page, other, false, StepCandidate, MethodNone, RelationNone, "not duplicate: no candidate test passed: supershingles 0 < 2"},
		{"jaccard near", SingleMethod(MethodJaccard, 0.5), page, near, true, StepCandidate, MethodNone, RelationDuplicate, "duplicate: jaccard"},
		{"lcs near", SingleMethod(MethodLCS, 0.7), page, near, true, StepVerify, MethodLCS, RelationDuplicate, "duplicate: every pair is a candidate, LCS ratio 0.9"},
		{"lcs unrelated exits early", SingleMethod(MethodLCS, 0.7), page, other, false, StepVerify, MethodLCS, RelationNone, "not duplicate: every pair is a candidate, LCS ratio < 0.70 (early exit) (rejected)"},
		{"lcs without seq", SingleMethod(MethodLCS, 0.7), page, noSeq(near), false, StepVerify, MethodLCS, RelationNone, "not duplicate: every pair is a candidate, no token sequence to verify by lcs (rejected)"},
		{"lcs central near", SingleMethod(MethodLCSCentral, 0.7), page, near, true, StepVerify, MethodLCSCentral, RelationDuplicate, "duplicate: every pair is a candidate, LCS central ratio 0.9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.d.Decide(tt.a, tt.b)
			if v.Duplicate != tt.want || v.Step != tt.step || v.Relation != tt.rel {
				t.Errorf("Decide = %v/%v/%v, want %v/%v/%v; %s", v.Duplicate, v.Step, v.Relation, tt.want, tt.step, tt.rel, v.Explain())
			}
			if (tt.step == StepVerify || tt.step == StepAccept) && v.Verify.Method != tt.method {
				t.Errorf("Decide verified by %v, want %v", v.Verify.Method, tt.method)
			}
			if got := v.Explain(); !strings.HasPrefix(got, tt.explain) || strings.Contains(got, "\n") {
				t.Errorf("Explain() = %q, want prefix %q", got, tt.explain)
			}
			if rev := tt.d.Decide(tt.b, tt.a); rev.Duplicate != v.Duplicate {
				t.Errorf("Decide(b, a).Duplicate = %v, want %v (symmetric)", rev.Duplicate, v.Duplicate)
			}
		})
	}
}

// synthSig returns a synthetic signature with random simhash and
// min-hashes; supershingles are hashes of runs of 14 min-hashes.
func synthSig(r *rand.Rand) *Signature {
	s := &Signature{Tokens: 1000, Bytes: 6000, Simhash: r.Uint64(), MinHash: make([]uint16, 84)}
	for i := range s.MinHash {
		s.MinHash[i] = uint16(r.Uint32())
	}
	synthSupershingles(s)
	return s
}

func synthSupershingles(s *Signature) {
	s.Supershingles = make([]uint64, 6)
	for i := range s.Supershingles {
		h := uint64(i + 1)
		for _, v := range s.MinHash[i*14 : (i+1)*14] {
			h = hashmix.Mix64(h ^ uint64(v))
		}
		s.Supershingles[i] = h
	}
}

// synthCopy returns a near-copy of s: up to bits simhash bits flipped and
// each min-hash replaced with probability p.
func synthCopy(r *rand.Rand, s *Signature, bits int, p float64) *Signature {
	c := &Signature{Tokens: s.Tokens, Bytes: s.Bytes, Simhash: s.Simhash, MinHash: make([]uint16, len(s.MinHash))}
	for range r.IntN(bits + 1) {
		c.Simhash ^= 1 << r.IntN(64)
	}
	for i, v := range s.MinHash {
		if r.Float64() < p {
			v = uint16(r.Uint32())
		}
		c.MinHash[i] = v
	}
	synthSupershingles(c)
	return c
}

func TestExplainExact(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	a := synthSig(r)
	b := &Signature{Tokens: 800, Simhash: a.Simhash ^ 0b111, MinHash: append([]uint16(nil), a.MinHash...)}
	for i := range 10 {
		b.MinHash[i*8]++
	}
	synthSupershingles(b)
	v := legacyDecision.Decide(a, b)
	want := "duplicate: simhash distance 3 <= 16 (candidate), jaccard 0.88 >= 0.70 (verified; no token sequence for LCS)"
	if got := v.Explain(); got != want {
		t.Errorf("Explain() = %q, want %q", got, want)
	}
	if got, want := v.String(), "duplicate by jaccard 0.88"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	v = Decision{}.Decide(a, b)
	want = "duplicate: simhash distance 3 <= 16 (candidate), P(near-duplicate) 0.91 >= 0.68 [jaccard 0.88 (+7.6), intercept -5.3] (verified; no token sequence for LCS)"
	if got := v.Explain(); got != want {
		t.Errorf("Explain() = %q, want %q", got, want)
	}
	if got, want := v.String(), "duplicate by model, P(near-duplicate) 0.91"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	// The short form writes the probability as the explanation does: a
	// pair rejected just under its confidence is not "0.90", and an
	// alignment that exited early gives a bound.
	for _, tt := range []struct {
		p    float64
		cut  bool
		want string
	}{
		{0.8997, false, "none by model, P(content-equivalent) 0.8997"},
		{0.8991, true, "none by model, P(content-equivalent) <= 0.899"},
		{0.58, true, "none by model, P(content-equivalent) <= 0.58"},
	} {
		v := Verdict{Step: StepVerify, Purpose: PurposeRemove, Probability: tt.p,
			Verify: TestResult{Test: Test{Method: MethodModel, Threshold: 0.9}, Value: tt.p, Cut: tt.cut, Purpose: PurposeRemove}}
		if got := v.String(); got != tt.want {
			t.Errorf("String() of P %v (cut %v) at 0.9 = %q, want %q", tt.p, tt.cut, got, tt.want)
		}
	}
	c := synthSig(r)
	v = Decision{Gate: -1}.Decide(a, c)
	want = fmt.Sprintf("not duplicate: no candidate test passed: simhash distance %d > 16, supershingles 0 < 1, jaccard 0.00 < 0.30", Hamming(a.Simhash, c.Simhash))
	if got := v.Explain(); got != want {
		t.Errorf("Explain() = %q, want %q", got, want)
	}
	v = Decision{Gate: -1, Containment: true}.Decide(a, c)
	want = fmt.Sprintf("not duplicate: no candidate test passed: simhash distance %d > 16, supershingles 0 < 1, jaccard 0.00 < 0.30, bloom containment 0.00 < 0.50", Hamming(a.Simhash, c.Simhash))
	if got := v.Explain(); got != want {
		t.Errorf("Explain() = %q, want %q", got, want)
	}
	// The gate: a pair far apart in simhash runs no candidate test.
	far := *a
	far.Simhash = ^a.Simhash
	v = Decision{}.Decide(a, &far)
	want = "not duplicate: simhash distance 64 > 30: too far apart to be a candidate"
	if got := v.Explain(); got != want || !v.Gated || v.Duplicate || len(v.Candidates) != 0 {
		t.Errorf("Decide(gated) = %q, gated %v, %d candidate tests; want %q", got, v.Gated, len(v.Candidates), want)
	}
	if v := (Decision{Gate: -1}).Decide(a, &far); !v.Duplicate {
		t.Errorf("Decide(Gate -1) on equal min-hashes = %s, want duplicate (no gate)", v.Explain())
	}
}

func TestCompareLCSFlags(t *testing.T) {
	page, near, _, _ := clDocs(t)
	s := Compare(page, near, CompareOptions{})
	if s.HasLCS || s.LCS == s.LCS || s.Central == s.Central {
		t.Errorf("Compare without LCS = HasLCS %v, LCS %v, Central %v, want false, NaN, NaN", s.HasLCS, s.LCS, s.Central)
	}
	s = Compare(page, near, CompareOptions{LCS: true})
	if !s.HasLCS || s.LCSCut || s.LCS < 0.9 || s.Central < 0.9 || s.CoverageA < 0.9 || s.CoverageB < 0.9 {
		t.Errorf("Compare with LCS = %+v, want LCS, central and coverage >= 0.9", s)
	}
	if s.LengthRatio <= 0.9 || s.Supershingles > 6 || s.Jaccard < 0.5 || s.SimhashDistance > 16 {
		t.Errorf("Compare = %+v, want a near-duplicate's cheap scores", s)
	}
}

func ExampleDecision_Decide() {
	text := "the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat by the door"
	tokens := strings.Fields(text)
	a := Sign(Input{Text: []byte(text), Tokens: tokens, Sentences: []string{text}}, Options{})
	b := Sign(Input{Text: []byte(text), Tokens: tokens, Sentences: []string{text}}, Options{})
	v := Decision{}.Decide(&a, &b)
	fmt.Println(v.Duplicate, v.Relation, v.Step)
	fmt.Println(v.Explain())

	var empty Signature
	fmt.Println(Decision{}.Decide(&empty, &empty).Explain())
	// Output:
	// true duplicate accept
	// duplicate: simhash distance 0 <= 16 (candidate), P(near-duplicate) 0.97 >= 0.95 [jaccard 1.00 (+8.6), intercept -5.3] (accepted without LCS)
	// not duplicate: a has 0 tokens, fewer than 10: too short to compare
}

// TestQuickCandidateAgrees checks that the cheap candidate test of the
// clustering agrees with the candidate step of Decide, pair by pair.
func TestQuickCandidateAgrees(t *testing.T) {
	page, near, other, part := clDocs(t)
	sigs := append(clRanked(t), page, near, other, part, noSeq(page))
	r := rand.New(rand.NewPCG(43, 44))
	synth, _ := synthSet(45, 40, 0.3)
	sigs = append(sigs, synth...)
	sigs = append(sigs, &Signature{Tokens: 50, Simhash: r.Uint64()}) // no families but a simhash
	decisions := []struct {
		name string
		d    Decision
	}{
		{"default", Decision{}},
		{"containment 0.05", Decision{Candidate: []Test{{MethodContainment, 0.05}}}},
		{"containment 0.3", Decision{Candidate: []Test{{MethodContainment, 0.3}}}},
		{"containment 0", Decision{Candidate: []Test{{MethodContainment, 0}}}},
		{"containment 1", Decision{Candidate: []Test{{MethodContainment, 1}}}},
		{"bloom", SingleMethod(MethodBloom, 0.2)},
		{"jaccard 0.05", SingleMethod(MethodJaccard, 0.05)},
		{"fingerprints", SingleMethod(MethodFingerprints, 1)},
		{"simhash 28", SingleMethod(MethodSimhash, 28)},
		{"lcs candidate", Decision{Candidate: []Test{{MethodLCS, 0.5}, {MethodLCSLocal, 0.5}, {MethodSupershingles, 1}}}},
		{"none", Decision{Candidate: []Test{{Method: MethodNone}}}},
	}
	for _, dt := range decisions {
		t.Run(dt.name, func(t *testing.T) {
			dt.d.Verify = Test{Method: MethodNone} // the candidate step alone decides
			infos := make([]bloomInfo, len(sigs))
			for i, s := range sigs {
				infos[i] = newBloomInfo(s.Bloom)
			}
			pass := 0
			for i, a := range sigs {
				for j, b := range sigs {
					v := dt.d.Decide(a, b)
					if v.Step == StepSkip {
						continue
					}
					want := slices.ContainsFunc(v.Candidates, func(c TestResult) bool { return c.Pass })
					if v.Duplicate != want {
						t.Fatalf("Decide(%d, %d).Duplicate = %v without verification, want %v", i, j, v.Duplicate, want)
					}
					if got := dt.d.quickCandidate(a, b, &infos[i], &infos[j]); got != want {
						t.Errorf("quickCandidate(%d, %d) = %v, want %v: %s", i, j, got, want, v.Explain())
					}
					if got := dt.d.quickCandidate(a, b, nil, nil); got != want { // the filters read when needed
						t.Errorf("quickCandidate(%d, %d) without Bloom data = %v, want %v: %s", i, j, got, want, v.Explain())
					}
					if want {
						pass++
					}
				}
			}
			if pass == 0 {
				t.Errorf("no pair passed the candidate test")
			}
		})
	}
}

func TestParseMethod(t *testing.T) {
	for _, name := range []string{"simhash", "bloom", "containment", "supershingles", "jaccard", "fingerprints", "lcs", "lcs-central", "lcs-local"} {
		m, err := ParseMethod(name)
		if err != nil || m.String() != name {
			t.Errorf("ParseMethod(%q) = %v, %v", name, m, err)
		}
		if m.DefaultThreshold() <= 0 {
			t.Errorf("%s.DefaultThreshold() = %g, want > 0", name, m.DefaultThreshold())
		}
	}
	for _, bad := range []string{"", "default", "none", "cosine"} {
		if _, err := ParseMethod(bad); err == nil {
			t.Errorf("ParseMethod(%q) = nil error", bad)
		}
	}
	if got := MethodSimhash.DefaultThreshold(); got != PaperSimhash {
		t.Errorf("simhash default threshold %g, want Moz's %d", got, PaperSimhash)
	}
}

// TestProbabilityPair checks that an explanation never shows a rejected
// probability equal to its threshold.
func TestProbabilityPair(t *testing.T) {
	for _, c := range []struct {
		v, t         float64
		wantV, wantT string
	}{
		{0.97, 0.7, "0.97", "0.70"},
		{0.8997, 0.9, "0.8997", "0.90"},
		{0.899996, 0.9, "0.899996", "0.90"},
		{0.9, 0.9, "0.90", "0.90"},
		{0.93, 0.925, "0.930", "0.925"},
		{0.9249, 0.925, "0.9249", "0.925"},
	} {
		if v, th := probabilityPair(c.v, c.t); v != c.wantV || th != c.wantT {
			t.Errorf("probabilityPair(%v, %v) = %s, %s; want %s, %s", c.v, c.t, v, th, c.wantV, c.wantT)
		}
	}
}

// TestPageDivergenceComputedWhenAsked: the page divergence is NaN unless
// asked for (CentralOptions.PageShare), 1 where the alignment was cut as
// the divergence is, NaN where there is no alignment (no sequence, the
// length-only ratio); a model that reads it makes Decide ask for it, and
// the default models do not.
func TestPageDivergenceComputedWhenAsked(t *testing.T) {
	page, near, _, part := clDocs(t)
	asked := CentralOptions{PageShare: DefaultPageShare}
	nan := math.IsNaN
	// A page cut at the sequence cap, 20,000 words long: against a
	// 500-word page even equal sequences stay under the ratio asked.
	long := *page
	long.Tokens = 20000
	for _, c := range []struct {
		name string
		a, b *Signature
		o    CompareOptions
		want func(s Scores) bool
	}{
		{"no LCS", page, near, CompareOptions{Central: asked}, func(s Scores) bool { return nan(s.PageDivergence) }},
		{"not asked", page, near, CompareOptions{LCS: true}, func(s Scores) bool { return nan(s.PageDivergence) && !nan(s.Divergence) }},
		{"asked", page, near, CompareOptions{LCS: true, Central: asked}, func(s Scores) bool {
			return s.PageDivergence >= 0 && s.PageDivergence <= 1 && !nan(s.Divergence)
		}},
		{"length only", page, near, CompareOptions{LCS: true, LengthOnly: true, Central: asked}, func(s Scores) bool { return nan(s.PageDivergence) }},
		{"no sequence", noSeq(page), near, CompareOptions{LCS: true, Central: asked}, func(s Scores) bool { return nan(s.PageDivergence) }},
		{"cut in the alignment, asked", page, part, CompareOptions{LCS: true, MinRatio: 0.99, Central: asked}, func(s Scores) bool {
			return s.LCSCut && s.PageDivergence == 1 && s.Divergence == 1
		}},
		{"cut in the alignment, not asked", page, part, CompareOptions{LCS: true, MinRatio: 0.99}, func(s Scores) bool {
			return s.LCSCut && nan(s.PageDivergence) && s.Divergence == 1
		}},
		{"whole pages apart, asked", &long, part, CompareOptions{LCS: true, MinRatio: 0.5, Central: asked}, func(s Scores) bool {
			return s.LCSStage == LCSStageBound && s.LCSCut && s.PageDivergence == 1 && s.Divergence == 1
		}},
		{"whole pages apart, not asked", &long, part, CompareOptions{LCS: true, MinRatio: 0.5}, func(s Scores) bool {
			return s.LCSStage == LCSStageBound && s.LCSCut && nan(s.PageDivergence) && s.Divergence == 1
		}},
		{"edit bound, asked", page, near, CompareOptions{LCS: true, MaxD: 1, Central: asked}, func(s Scores) bool {
			return s.LCSCut && s.PageDivergence == 1
		}},
	} {
		if s := Compare(c.a, c.b, c.o); !c.want(s) {
			t.Errorf("%s: cut %v, divergence %v, page divergence %v", c.name, s.LCSCut, s.Divergence, s.PageDivergence)
		}
	}

	// Feature.Value reads a page divergence not computed as the worst.
	if v := FeaturePageDivergence.Value(&Scores{PageDivergence: math.NaN()}); v != 1 {
		t.Errorf("FeaturePageDivergence of NaN = %v, want 1", v)
	}
	// Decide computes it for a model that reads it, not for the default.
	if v := (Decision{}).Decide(page, near); !nan(v.Scores.PageDivergence) || nan(v.Scores.Divergence) {
		t.Errorf("default decision: page divergence %v, divergence %v; want NaN and a value", v.Scores.PageDivergence, v.Scores.Divergence)
	}
	pm := *DefaultModel(PurposeGroup)
	pm.Seq = Model{Features: []Feature{FeatureLCS, FeaturePageDivergence}, Weights: []float64{8, -2}, Intercept: -5}
	v := Decision{Models: &pm}.Decide(page, near)
	if nan(v.Scores.PageDivergence) || v.Model == nil || !v.Model.uses(FeaturePageDivergence) {
		t.Errorf("a model reading the page divergence: %v (%s)", v.Scores.PageDivergence, v.Explain())
	}
}

// TestDecideExact checks that an exact decision reports the pair's
// probability where the default one stops at a bound: a near-duplicate
// (3 % of words edited) is rejected for removal both ways, by a bound
// without Exact and by its probability with it, which the model gives
// its whole-alignment scores.
func TestDecideExact(t *testing.T) {
	page, near, _, _ := clDocs(t)
	fast := Decision{Purpose: PurposeRemove}.Decide(page, near)
	if !fast.Verify.Cut || fast.Duplicate {
		t.Fatalf("the default decision %s; the test needs a pair it rejects by a bound", fast.Explain())
	}
	exact := Decision{Purpose: PurposeRemove, Exact: true}.Decide(page, near)
	if exact.Verify.Cut || exact.Scores.LCSCut || exact.Duplicate || exact.Model == nil {
		t.Fatalf("the exact decision %s (cut %v), want the whole alignment and the same verdict", exact.Explain(), exact.Verify.Cut)
	}
	if want := exact.Model.Probability(&exact.Scores); exact.Probability != want || !(exact.Probability <= fast.Probability) {
		t.Errorf("exact probability %v, want the model's %v on the whole alignment, under the bound %v", exact.Probability, want, fast.Probability)
	}
	if bound := ") <= "; strings.Contains(exact.Explain(), bound) || strings.Contains(exact.String(), bound) || !strings.Contains(fast.Explain(), bound) {
		t.Errorf("the exact verdict reads as a bound (%s / %s), or the default's does not (%s)", exact.String(), exact.Explain(), fast.Explain())
	}
	// The near-duplicate decision accepts the pair either way.
	if g := (Decision{Exact: true}).Decide(page, near); !g.Duplicate || g.Probability != (Decision{}).Decide(page, near).Probability {
		t.Errorf("group decision exact %s, want the default's accepted verdict", g.Explain())
	}
	// A paper LCS method reports the pair's ratio too, not the early
	// exit's bound.
	lcs := SingleMethod(MethodLCS, 0.99)
	fastLCS := lcs.Decide(page, near)
	lcs.Exact = true
	exactLCS := lcs.Decide(page, near)
	whole := Compare(page, near, CompareOptions{LCS: true})
	if !fastLCS.Scores.LCSCut || exactLCS.Scores.LCSCut || exactLCS.Scores.LCS != whole.LCS || exactLCS.Duplicate {
		t.Errorf("LCS 0.99 exact: ratio %v (cut %v), want the whole alignment's %v, rejected; without Exact cut %v",
			exactLCS.Scores.LCS, exactLCS.Scores.LCSCut, whole.LCS, fastLCS.Scores.LCSCut)
	}
}
