package eval

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"

	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/resultlist"
	"github.com/winnow-search/winnow/similarity"
)

// Method is one paper method scored by the evaluation: a score taken from
// [similarity.Scores] and the direction in which it means "duplicate".
type Method struct {
	Name string
	// Source names the paper and setting, e.g. "Moz: Hamming <= 5".
	Source string
	// Score extracts the method's score; NaN when it was not computed.
	Score func(s *similarity.Scores) float64
	// LowerIsDup is true for distances.
	LowerIsDup bool
	// Published is the paper's threshold; NaN when the paper gives none.
	Published float64
}

// Methods returns the paper methods at their published settings.
func Methods() []Method {
	nan := math.NaN()
	return []Method{
		{Name: "simhash", Source: "Moz: Hamming distance <= 5 of 64", LowerIsDup: true, Published: similarity.PaperSimhash,
			Score: func(s *similarity.Scores) float64 { return float64(s.SimhashDistance) }},
		{Name: "bloom", Source: "Jain: Bloom match ratio >= 0.70", Published: similarity.PaperBloom,
			Score: func(s *similarity.Scores) float64 { return max(s.BloomAB, s.BloomBA) }},
		{Name: "supershingles", Source: "Fetterly: >= 2 of 6 supershingles", Published: similarity.PaperSupershingles,
			Score: func(s *similarity.Scores) float64 { return float64(s.Supershingles) }},
		{Name: "jaccard", Source: "Fetterly/Broder: min-hash Jaccard of 5-word shingles", Published: nan,
			Score: func(s *similarity.Scores) float64 { return s.Jaccard }},
		{Name: "lcs", Source: "Huang: LCS ratio of word sequences", Published: nan,
			Score: func(s *similarity.Scores) float64 { return s.LCS }},
		{Name: "lcs-central", Source: "Huang: LCS ratio of the trusted central part", Published: nan,
			Score: func(s *similarity.Scores) float64 {
				if math.IsNaN(s.Central) || min(s.CoverageA, s.CoverageB) < similarity.DefaultCentralCoverage {
					return 0
				}
				return s.Central
			}},
	}
}

// Options tunes a run.
type Options struct {
	// Signer signs the documents.
	Signer page.Signer
	// Decision is the decision scored as "default".
	Decision similarity.Decision
	// Group and Remove are the decisions of the modes, scored under
	// "decisions"; Remove's Purpose is set to PurposeRemove and Group's
	// to PurposeGroup.
	Group, Remove similarity.Decision
	// Workers signs documents in parallel; zero means GOMAXPROCS.
	Workers int
}

// MethodResult is one method's figures.
type MethodResult struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// Published is the point at the paper's threshold, nil when the
	// paper gives none.
	Published *Point `json:"published,omitempty"`
	// Best is the point of best F1 over all thresholds.
	Best Point `json:"best"`
	// Transferred is the point at the threshold chosen on another set
	// ([Report.TransferThresholds]); nil unless one was given.
	Transferred *Point  `json:"transferred,omitempty"`
	Curve       []Point `json:"-"`
}

// Result is the figures of one labelling of a set: a definition of
// "duplicate" (label >= 1, label = 3, dup).
type Result struct {
	Definition string `json:"definition"`
	// ModeDecision names the mode decision whose definition this is, the
	// key of its figures in Decisions: "group" for label >= 1 and dup,
	// "remove" for label = 3.
	ModeDecision string `json:"mode_decision"`
	// ThresholdsFrom is the set whose thresholds the methods'
	// Transferred figures use; "" unless one was given.
	ThresholdsFrom string         `json:"thresholds_from,omitempty"`
	Pairs          int            `json:"pairs"`
	Positives      int            `json:"positives"`
	Default        Point          `json:"default"`
	Methods        []MethodResult `json:"methods"`
	// Decisions holds the figures of the decision each mode uses:
	// "group" (group and annotate) and "remove"; Point.Threshold is the
	// decision's min_confidence (under a paper method, its threshold).
	Decisions map[string]Point `json:"decisions"`
	// ECE is each mode decision's expected calibration error on the
	// candidate pairs of this set (in-sample for a dev set: the models
	// were fitted on it; `winnow eval -cv` gives the out-of-fold figure).
	ECE map[string]float64 `json:"ece"`
	// Confidence holds, per mode decision, the figures at each
	// min_confidence of [Confidences] (Point.Threshold): the operator's
	// knob. The pairs the decision refuses whatever their probability
	// ([ModeVerdict.Refused]) count at none, so the row at the decision's
	// own min_confidence is its Decisions figures. Empty for a paper
	// method.
	Confidence map[string][]Point `json:"confidence,omitempty"`
	// DecisionsTransferred holds, per mode decision, the figures at the
	// min_confidence chosen on another set ([Report.TransferThresholds]):
	// the one of [Confidences] with the best F1 there (Point.Threshold),
	// as an operator would read it off `winnow eval` on judged pages of
	// their own. Nil unless a set was given.
	DecisionsTransferred map[string]Point `json:"decisions_transferred,omitempty"`
	// Reliability holds each mode decision's reliability diagram.
	Reliability map[string][]ReliabilityBin `json:"-"`
	// Clusters scores the batch clustering with the default decision
	// (corpus mode only): pairwise and B-cubed.
	ClusterPairs  *Point `json:"cluster_pairs,omitempty"`
	ClusterBCubed *Point `json:"cluster_bcubed,omitempty"`
}

// Report is the evaluation of one data set.
type Report struct {
	Dir     string   `json:"dir"`
	Mode    string   `json:"mode"`
	Docs    int      `json:"docs"`
	Results []Result `json:"results"`
	// Scored holds every scored pair, for plots.
	Scored []ScoredPair `json:"-"`
}

// ScoredPair is one compared pair with its gold label.
type ScoredPair struct {
	A, B   int
	Label  int
	Scores similarity.Scores
	// Verdict is the decision's (Options.Decision).
	Verdict bool
	// Candidate reports that the pair passed the default candidate test
	// (and so the models see it).
	Candidate bool
	// Group and Remove are the mode decisions' verdicts.
	Group, Remove ModeVerdict
	// Legacy is the verdict of the hand-tuned decision the models
	// replaced, kept for comparison ([LegacyDecision]).
	Legacy bool
	// Capped reports that a side was cut at the signing caps (so
	// Remove.Refused); SeqCut that a side's word sequence was cut
	// ([similarity.Signature.SeqCut]), for a rule [NumbersOnlyCV]
	// measures but the decisions do not apply (docs/calibration.md).
	Capped, SeqCut bool
}

// ModeVerdict is a mode decision's verdict on a pair.
type ModeVerdict struct {
	Duplicate   bool
	Probability float64
	// Refused reports that the decision refuses the pair at any
	// min_confidence, whatever Probability: the remove decision does so
	// when a page was cut at the signing caps and its end is unread
	// ([similarity.Verdict.Capped]).
	Refused bool
}

// LegacyDecision is winnow's default decision before the fitted models:
// seven thresholds tuned jointly on webis-ecir20-dev and llvm-docs
// (Jaccard >= 0.9 accepts, else LCS ratio >= 0.77, or >= 0.56 with
// divergence <= 0.40). The cross-validation scores it beside the models.
func LegacyDecision() similarity.Decision {
	return similarity.Decision{Verify: similarity.Test{Method: similarity.MethodLCSLocal, Threshold: similarity.DefaultVerifyLCS}}
}

// ScoreOptions returns the scores Run computes for a pair it scores in full
// (every pair in pair mode, candidates and perhaps-similar pairs in
// corpus mode): every score a -cv candidate reads, LCS ratios below
// [MinLCSScored] as bounds; Run adds [similarity.Scores.LinksDiffer],
// which Compare leaves to the decisions that read it.
func ScoreOptions() similarity.CompareOptions {
	return similarity.CompareOptions{LCS: true, MinRatio: MinLCSScored, Bag: true, Numbers: true, Central: similarity.CentralOptions{PageShare: similarity.DefaultPageShare}}
}

// Run evaluates the set.
func Run(ctx context.Context, set *Set, o Options) (*Report, error) {
	sigs, err := signAll(ctx, set, o)
	if err != nil {
		return nil, err
	}
	rep := &Report{Dir: set.Dir, Mode: set.Mode.String(), Docs: len(set.Docs)}
	o.Group.Purpose, o.Remove.Purpose = similarity.PurposeGroup, similarity.PurposeRemove
	candidate, legacy := similarity.Decision{}, LegacyDecision()
	// LCS ratios below MinLCSScored are reported as bounds: no decision
	// turns there, and exact alignments of dissimilar pairs cost O(D²).
	cmpOpts := ScoreOptions()
	score := func(a, b, label int) ScoredPair {
		sp := ScoredPair{A: a, B: b, Label: label}
		sp.Candidate = candidate.IsCandidate(sigs[a], sigs[b])
		// LCS only inside Huang's perhaps-similar sets and the candidate
		// pairs in corpus mode, where all n² pairs are scored; pair mode
		// verifies every pair.
		if set.Mode == PairMode {
			sp.Scores = similarity.Compare(sigs[a], sigs[b], cmpOpts)
			sp.Scores.LinksDiffer, sp.Scores.HasLinks = similarity.LinksDiffer(sigs[a].Links, sigs[b].Links)
		} else if sp.Scores = similarity.Compare(sigs[a], sigs[b], similarity.CompareOptions{}); sp.Candidate || perhapsSimilar(&sp.Scores) {
			sp.Scores = similarity.Compare(sigs[a], sigs[b], cmpOpts)
			sp.Scores.LinksDiffer, sp.Scores.HasLinks = similarity.LinksDiffer(sigs[a].Links, sigs[b].Links)
		} else {
			sp.Scores.LCS, sp.Scores.Central = 0, 0
		}
		sp.Verdict = o.Decision.Decide(sigs[a], sigs[b]).Duplicate
		g, r := o.Group.Decide(sigs[a], sigs[b]), o.Remove.Decide(sigs[a], sigs[b])
		sp.Group = ModeVerdict{Duplicate: g.Duplicate, Probability: fullProbability(o.Group, g, &sp.Scores)}
		sp.Remove = ModeVerdict{Duplicate: resultlist.Removable(r), Probability: fullProbability(o.Remove, r, &sp.Scores),
			Refused: sigs[a].Capped || sigs[b].Capped}
		sp.Capped, sp.SeqCut = sigs[a].Capped || sigs[b].Capped, sigs[a].SeqCut() || sigs[b].SeqCut()
		sp.Legacy = legacy.Decide(sigs[a], sigs[b]).Duplicate
		return sp
	}
	if set.Mode == PairMode {
		for _, p := range set.Pairs {
			rep.Scored = append(rep.Scored, score(p.A, p.B, p.Label))
		}
		rep.Results = append(rep.Results,
			result("label >= 1", "group", rep.Scored, func(l int) bool { return l >= 1 }, &o),
			result("label = 3", "remove", rep.Scored, func(l int) bool { return l == 3 }, &o))
		return rep, nil
	}
	dup := map[uint64]bool{}
	for _, p := range set.Pairs {
		dup[PairKey(p.A, p.B)] = true
	}
	n := len(set.Docs)
	for a := range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for b := a + 1; b < n; b++ {
			k := PairKey(a, b)
			if set.Grey[k] {
				continue
			}
			label := 0
			if dup[k] {
				label = 1
			}
			rep.Scored = append(rep.Scored, score(a, b, label))
		}
	}
	r := result("dup", "group", rep.Scored, func(l int) bool { return l == 1 }, &o)
	cp, bc := clusterScores(set, sigs, o.Decision)
	r.ClusterPairs, r.ClusterBCubed = &cp, &bc
	rep.Results = append(rep.Results, r)
	return rep, nil
}

// perhapsSimilar is the filter of Huang's phase 1 (perhaps-similar sets
// from shared fingerprints), widened by the other cheap scores: pairs
// outside it are not aligned in corpus mode and get an LCS ratio of 0.
// It is looser than the default decision's candidate test.
func perhapsSimilar(s *similarity.Scores) bool {
	return s.Fingerprints >= 2 || s.Jaccard >= 0.2 || s.SimhashDistance <= 16 || max(s.ContainAB, s.ContainBA) >= 0.4
}

// fullProbability is a model verdict's probability with the alignment run
// to the end: a verdict whose LCS exited early carries only an upper bound
// (just under its confidence), which would pile up below the decision's
// min_confidence in the calibration figures. s are the pair's scores
// with the LCS computed down to MinLCSScored.
func fullProbability(d similarity.Decision, v similarity.Verdict, s *similarity.Scores) float64 {
	if !v.Verify.Cut || v.Model == nil {
		return v.Probability
	}
	return d.PurposeModels().Seq.Probability(s)
}

// MinLCSScored is the LCS ratio below which the evaluation's LCS exits
// early and reports a bound.
const MinLCSScored = 0.3

// knob returns the setting a decision is run at: its min_confidence
// under the models, a paper method's threshold in the method's unit
// (decision.threshold) otherwise.
func knob(d similarity.Decision) float64 {
	switch {
	case d.IsModel():
		return d.MinConfidence()
	case d.Verify.Method != similarity.MethodNone && d.Verify.Method != similarity.MethodDefault:
		return d.Verify.Threshold
	case len(d.Candidate) == 1: // a candidate-only method ([similarity.SingleMethod])
		return d.Candidate[0].Threshold
	}
	return 0
}

// result scores the pairs under one definition of a duplicate, that of
// the mode decision named mode; o gives the mode decisions' settings.
func result(def, mode string, scored []ScoredPair, isDup func(int) bool, o *Options) Result {
	r := Result{Definition: def, ModeDecision: mode, Pairs: len(scored)}
	pred := make([]bool, len(scored))
	gold := make([]bool, len(scored))
	group := make([]bool, len(scored))
	remove := make([]bool, len(scored))
	for i, sp := range scored {
		pred[i], gold[i] = sp.Verdict, isDup(sp.Label)
		group[i], remove[i] = sp.Group.Duplicate, sp.Remove.Duplicate
		if gold[i] {
			r.Positives++
		}
	}
	r.Default = Verdicts(pred, gold)
	g, rm := Verdicts(group, gold), Verdicts(remove, gold)
	g.Threshold, rm.Threshold = knob(o.Group), knob(o.Remove)
	r.Decisions = map[string]Point{"group": g, "remove": rm}
	r.ECE, r.Reliability = map[string]float64{}, map[string][]ReliabilityBin{}
	count := make([]int, len(scored))
	for i := range count {
		count[i] = 1
	}
	for _, pu := range resultlist.Purposes() {
		mode := pu.String()
		prob := make([]float64, len(scored))
		refused := make([]bool, len(scored))
		for i, sp := range scored {
			v := sp.Group
			if pu == resultlist.Remove.Purpose() {
				v = sp.Remove
			}
			prob[i], refused[i] = v.Probability, v.Refused
			if math.IsNaN(prob[i]) {
				count[i] = 0 // a paper method: no probability
			}
		}
		bins := reliability(scored, prob, count, func(sp *ScoredPair) bool { return isDup(sp.Label) })
		r.Reliability[mode], r.ECE[mode] = bins, ece(bins)
		if math.IsNaN(r.ECE[mode]) {
			continue
		}
		if r.Confidence == nil {
			r.Confidence = map[string][]Point{}
		}
		for _, c := range Confidences {
			// The decision at c: its probability reaches c, and the
			// decision does not refuse the pair whatever it (a remove
			// decision's page cut at the size cap).
			at := make([]bool, len(scored))
			for i := range scored {
				at[i] = count[i] > 0 && prob[i] >= c && !refused[i]
			}
			pt := Verdicts(at, gold)
			pt.Threshold = c
			r.Confidence[mode] = append(r.Confidence[mode], pt)
		}
	}
	for _, m := range Methods() {
		js := make([]Judged, len(scored))
		for i := range scored {
			js[i] = Judged{Score: m.Score(&scored[i].Scores), Dup: gold[i]}
		}
		mr := MethodResult{Name: m.Name, Source: m.Source, Curve: Curve(js, m.LowerIsDup)}
		mr.Best = Best(mr.Curve)
		if !math.IsNaN(m.Published) {
			p := At(js, m.Published, m.LowerIsDup)
			mr.Published = &p
		}
		r.Methods = append(r.Methods, mr)
	}
	return r
}

// clusterScores runs the batch clustering with the decision and scores it
// against the gold clusters (connected components of the dup pairs),
// pairwise (grey pairs left out) and with B-cubed.
func clusterScores(set *Set, sigs []*similarity.Signature, d similarity.Decision) (pairs, bcubed Point) {
	n := len(set.Docs)
	gold := similarity.NewUnionFind(n)
	for _, p := range set.Pairs {
		gold.Union(p.A, p.B)
	}
	pred := make([]int, n)
	for i := range pred {
		pred[i] = -1 - i // singletons
	}
	for ci, c := range similarity.BatchCluster(sigs, d, similarity.BatchOptions{WinnerVerified: true}) {
		for _, m := range c.Members {
			pred[m.Index] = ci
		}
	}
	goldLabel := make([]int, n)
	for i := range goldLabel {
		goldLabel[i] = gold.Find(i)
	}
	return pairScore(set, pred), BCubed(pred, goldLabel)
}

// signAll signs every document of the set in parallel, each with its
// link targets ([similarity.Signature.Links]) for the candidates and the
// calibration rows that read them; the other families do not change.
func signAll(ctx context.Context, set *Set, o Options) ([]*similarity.Signature, error) {
	sigs := make([]*similarity.Signature, len(set.Docs))
	signer := o.Signer
	signer.Canon.Links = true
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	jobs := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				d := set.Docs[i]
				body, err := os.ReadFile(d.Path)
				var res page.Result
				if err == nil {
					res, err = signer.Sign(body, d.ContentType)
				}
				if err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, fmt.Errorf("eval: %s: %w", d.ID, err))
					mu.Unlock()
					continue
				}
				sigs[i] = &res.Sig
			}
		})
	}
	for i := range set.Docs {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return sigs, ctx.Err()
}

func cmpErr(first, next error) error {
	if first != nil {
		return first
	}
	return next
}
