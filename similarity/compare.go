package similarity

import (
	"math"
	"strconv"
)

// Relation is how two documents relate.
type Relation uint8

// Relations. In [Scores.Containment] only RelationNone, RelationContains
// and RelationContained occur.
const (
	// RelationNone: the documents are not duplicates.
	RelationNone Relation = iota
	// RelationDuplicate: the documents are near-duplicates.
	RelationDuplicate
	// RelationContains: a contains b (b's chunks are almost all in a and
	// a is clearly larger).
	RelationContains
	// RelationContained: a is contained in b.
	RelationContained
)

// String returns the relation's name: "none", "duplicate", "contains" or
// "contained".
func (r Relation) String() string {
	switch r {
	case RelationNone:
		return "none"
	case RelationDuplicate:
		return "duplicate"
	case RelationContains:
		return "contains"
	case RelationContained:
		return "contained"
	}
	return "relation(" + strconv.Itoa(int(r)) + ")"
}

// Containment parameters (Jain §2.3: a page included in another).
const (
	// DefaultContainMissing is the largest fraction of the smaller
	// filter's set bits that may be missing from the larger one.
	DefaultContainMissing = 0.10
	// DefaultContainSize is the smallest ratio of distinct chunks,
	// larger over smaller, for a containment rather than a duplicate.
	DefaultContainSize = 1.5
	// DefaultMaxD caps the edit distance of every LCS computed by
	// [Compare]: the alignment keeps 4·(D+1)² bytes (64 MiB at 4096) and
	// a dissimilar pair costs O(D²) before it exits.
	DefaultMaxD = 4096
)

// Scores holds every similarity score of a pair (a, b). The zero value
// means nothing matched. Directed scores name a first: BloomAB is the
// fraction of a's bits found in b.
type Scores struct {
	// SimhashDistance is the Hamming distance of the simhashes (Moz:
	// near-duplicates within 5 of 64).
	SimhashDistance int
	// BloomAB and BloomBA are Jain's match ratios popcount(A∧B)/popcount(A)
	// and popcount(A∧B)/popcount(B), not corrected for chance.
	BloomAB, BloomBA float64
	// ContainAB and ContainBA estimate |A∩B|/|A| and |A∩B|/|B| over the
	// chunks, corrected for chance bit collisions as [BloomContainment]
	// does.
	ContainAB, ContainBA float64
	// Containment is RelationContains when a's filter holds almost all of
	// b's bits (at most [DefaultContainMissing] of them or one chunk's
	// bits missing) and a has at
	// least [DefaultContainSize] times b's distinct chunks,
	// RelationContained the other way round, else RelationNone.
	Containment Relation
	// Jaccard is the min-hash estimate of the Jaccard similarity of the
	// 5-word shingle sets ([EstimateJaccard]).
	Jaccard float64
	// Supershingles is the number of matching supershingles, 0..6
	// (Fetterly: >= 2 very similar, 6 virtually identical).
	Supershingles int
	// Megashingle reports a shared megashingle, which is the case exactly
	// when at least two supershingles match.
	Megashingle bool
	// Fingerprints is the number of shared sentence fingerprints (Huang).
	Fingerprints int
	// LengthRatio is the smaller token count over the larger, 0..1.
	LengthRatio float64

	// HasLCS reports that the LCS scores below were computed: only when
	// [CompareOptions.LCS] is set and both signatures have a Seq.
	HasLCS bool
	// LCSCut reports that the LCS exited early because the edit distance
	// exceeded the bound; LCS is then an upper bound (the ratio itself when
	// the length was computed) and Central and the coverages are 0 (NaN
	// with [CompareOptions.LengthOnly]).
	LCSCut bool
	// LCS is the LCS ratio |LCS|/(|A|+|B|-|LCS|) of the word sequences
	// (Huang); NaN unless HasLCS. For a page longer than its sequence
	// (the first [Options.MaxSeq] words) it is the ratio of an estimate
	// of the whole pages' LCS from the sequences' (see wholePages), so
	// that a shared beginning does not make two pages of different
	// lengths equal.
	LCS float64
	// Central is the LCS ratio of the trusted central part ([CentralLCS]);
	// NaN unless HasLCS.
	Central float64
	// CoverageA and CoverageB are the fractions of each sequence the
	// central part spans; NaN unless HasLCS.
	CoverageA, CoverageB float64
	// Divergence is the largest share of unmatched tokens in a window of
	// either sequence inside its matched frame ([Central.Divergence]):
	// high when one block of content differs inside a shared template.
	// NaN unless HasLCS.
	Divergence float64
	// PageDivergence is the divergence over a window of a
	// [CentralOptions.PageShare]-th of the matched frame when that is more
	// than the divergence's window ([Central.PageDivergence]): the share
	// of the page that differs in one place. NaN unless HasLCS and
	// CompareOptions.Central.PageShare is positive.
	PageDivergence float64

	// LCSStage tells how far the LCS went before it settled, for the
	// stage counts of [BatchStats]; LCSStageNone unless HasLCS.
	LCSStage LCSStage

	// Bag is the word-multiset overlap of the sequences ([BagRatio]), the
	// LCS ratio without the order; NaN unless [CompareOptions.Bag] and
	// both signatures have a Seq.
	Bag float64

	// HasNumbers reports that NumbersDiffer was computed: with
	// [CompareOptions.Numbers] (and always by a remove decision) when
	// both signatures recorded their numbers ([Signature.Numbers]).
	HasNumbers bool
	// NumbersDiffer is how many numbers differ between the pages
	// ([NumbersDiffer]): the word sequence holds every number as one
	// token, so two pages that differ only in prices, counts or
	// catalogue numbers have LCS ratio 1 and this tells them apart.
	NumbersDiffer int
	// NumbersOfNote is how many of the differing numbers are not dates,
	// times or counters ([NumbersOfNote]): by [Compare] with
	// NumbersDiffer when it is positive, by [Decision.Decide] only for a
	// pair the numbers-only rule ([Model.NumbersOnly]) reads; else 0.
	NumbersOfNote int

	// HasLinks reports that LinksDiffer was set. A signature does not
	// carry its page's links, so neither [Compare] nor a decision sets
	// it: package eval does, from the pages' link sketches ([LinkSketch]),
	// for the candidate models that read [FeatureLinks].
	HasLinks bool
	// LinksDiffer is the share of the link targets of the page with
	// fewer that the other page lacks ([LinksDiffer]); 0 unless
	// HasLinks.
	LinksDiffer float64
}

// LCSStage is how far the LCS of [Compare] went, cheapest first.
type LCSStage uint8

// LCS stages.
const (
	// LCSStageNone: no LCS was asked for or a side had no sequence.
	LCSStageNone LCSStage = iota
	// LCSStageBound: the lengths or the multiset intersection of the
	// tokens settled the pair (cut) without an LCS computation.
	LCSStageBound
	// LCSStageLength: the LCS length, by a bounded Myers search or the
	// bit-parallel algorithm, settled the pair.
	LCSStageLength
	// LCSStageAlignment: the alignment (central part, divergence) was
	// computed.
	LCSStageAlignment
)

// CompareOptions selects the costly scores of [Compare]. The zero value
// computes the cheap scores only.
type CompareOptions struct {
	// LCS computes the LCS ratio, the central ratio and the coverages
	// when both signatures carry a Seq.
	LCS bool
	// MinRatio and MinCoverage let the LCS exit early once the pair can
	// no longer reach a central ratio of MinRatio with both coverages at
	// least MinCoverage (nor a whole LCS ratio of MinRatio). Zero: no
	// early exit below MaxD.
	MinRatio, MinCoverage float64
	// MaxD caps the edit distance; zero means [DefaultMaxD], negative no
	// cap.
	MaxD int
	// Central sets the central part's parameters.
	Central CentralOptions
	// LengthOnly computes only the whole-page LCS ratio (with LCS set):
	// exactly, or cut early with [Scores.LCSCut] when MinRatio > 0 and
	// the ratio cannot reach it; Central, CoverageA, CoverageB,
	// Divergence and PageDivergence are then NaN. No alignment is kept,
	// so the cost is that of [LCS] (near-duplicates) or [LCSLength] (the
	// rest), and MaxD applies only when positive. False: the alignment
	// is computed for every pair that can reach MinRatio, as before.
	LengthOnly bool
	// Bag computes [Scores.Bag] (one hashed pass over each sequence)
	// when both signatures have a Seq.
	Bag bool
	// Numbers computes [Scores.NumbersDiffer] (a sort of each side's
	// numbers) when both signatures recorded them.
	Numbers bool
}

// maxD returns the edit distance bound for sequences of lengths n and m.
// A central ratio t over a span that covers at least c of each side
// leaves at most (n+m)(1-t)/(1+t) unmatched tokens inside the span and
// (n+m)(1-c) outside it.
func (o CompareOptions) maxD(n, m int) int {
	d := n + m
	if o.MinRatio > 0 {
		bound := MaxDForRatio(n, m, o.MinRatio)
		if o.MinCoverage > 0 {
			// The central span may leave the rest of each side unmatched.
			c := min(o.MinCoverage, 1)
			bound += int(math.Ceil(float64(n+m) * (1 - c)))
		}
		d = min(d, bound)
	}
	switch {
	case o.MaxD == 0:
		d = min(d, DefaultMaxD)
	case o.MaxD > 0:
		d = min(d, o.MaxD)
	}
	return d
}

// Compare returns the scores of a and b. The cheap scores cost a few
// hundred nanoseconds; the LCS scores, only with o.LCS, cost O(N+M+D²)
// for near-duplicates (about 12 µs for two 8 KB pages) and at most
// O(⌈M/64⌉·N) otherwise, twice that with the alignment (see [LCS] and
// [AppendRuns]). Compare does not look
// at [Signature.Empty]: [Decision.Decide] does. Safe for concurrent use.
func Compare(a, b *Signature, o CompareOptions) Scores {
	s, _ := compare(a, b, o)
	return s
}

// compare is [Compare]; l is the LCS length of the word sequences when
// their alignment ran to its end, else -1.
func compare(a, b *Signature, o CompareOptions) (s Scores, l int) {
	l = -1
	s.SimhashDistance = Hamming(a.Simhash, b.Simhash)
	if a.Bloom != nil && b.Bloom != nil {
		s.BloomAB = BloomMatch(a.Bloom, b.Bloom)
		s.BloomBA = BloomMatch(b.Bloom, a.Bloom)
		s.ContainAB, s.ContainBA = containBoth(a, b)
		s.Containment = containment(a, b)
	}
	s.Jaccard = EstimateJaccard(a.MinHash, b.MinHash)
	s.Supershingles = SupershingleMatches(a.Supershingles, b.Supershingles)
	s.Megashingle = s.Supershingles >= 2
	s.Fingerprints = SharedFingerprints(a.Fingerprints, b.Fingerprints)
	if lo, hi := min(a.Tokens, b.Tokens), max(a.Tokens, b.Tokens); hi > 0 {
		s.LengthRatio = float64(lo) / float64(hi)
	}
	s.LCS, s.Central, s.CoverageA, s.CoverageB, s.Divergence, s.PageDivergence = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
	if o.LCS && len(a.Seq) > 0 && len(b.Seq) > 0 {
		w := wholeOf(a, b)
		if best := w.ratio(1); o.MinRatio > 0 && best < o.MinRatio {
			// Even equal sequences leave the whole pages under MinRatio:
			// their lengths differ too much.
			s.HasLCS, s.LCSCut, s.LCS, s.LCSStage = true, true, best, LCSStageBound
			if !o.LengthOnly {
				s.Central, s.CoverageA, s.CoverageB, s.Divergence = 0, 0, 0, 1
				if o.Central.PageShare > 0 {
					s.PageDivergence = 1
				}
			}
		} else {
			so := o
			so.MinRatio = w.seqRatio(o.MinRatio)
			l = compareLCS(&s, a.Seq, b.Seq, so)
			s.LCS = w.ratio(s.LCS)
		}
	}
	s.Bag = math.NaN()
	if o.Bag && len(a.Seq) > 0 && len(b.Seq) > 0 {
		s.Bag = BagRatio(a.Seq, b.Seq)
	}
	if o.Numbers {
		s.numbers(a, b)
	}
	return s, l
}

// finishes reports whether [Compare] under o runs the alignment of a's and
// b's word sequences, at edit distance d, to its end: the whole pages can
// reach o.MinRatio and d is within the bound of o's early exit, as
// compareLCS and [lcsScratch.appendRuns] apply them (the search finds
// every distance within its bound exactly).
func (o CompareOptions) finishes(a, b *Signature, d int) bool {
	w := wholeOf(a, b)
	if o.MinRatio > 0 && w.ratio(1) < o.MinRatio {
		return false
	}
	so := o
	so.MinRatio = w.seqRatio(o.MinRatio)
	return d <= so.maxD(len(a.Seq), len(b.Seq))
}

// numbers fills NumbersDiffer, NumbersOfNote and HasNumbers.
func (s *Scores) numbers(a, b *Signature) {
	s.NumbersDiffer, s.HasNumbers = NumbersDiffer(a, b)
	if s.NumbersDiffer > 0 {
		s.NumbersOfNote, _ = NumbersOfNote(a, b)
	}
}

// compareLCS fills the LCS scores of s for the sequences a and b and
// returns their LCS length when the alignment ran to its end, else -1.
func compareLCS(s *Scores, a, b []uint32, o CompareOptions) int {
	s.HasLCS = true
	n, m := len(a), len(b)
	sc := lcsPool.Get().(*lcsScratch)
	defer lcsPool.Put(sc)
	if o.LengthOnly {
		maxD := -1
		if o.MinRatio > 0 {
			maxD = MaxDForRatio(n, m, o.MinRatio)
		}
		if o.MaxD > 0 && (maxD < 0 || o.MaxD < maxD) {
			maxD = o.MaxD
		}
		l, ok := sc.bounded(a, b, maxD)
		s.LCS, s.LCSCut, s.LCSStage = Ratio(l, n, m), !ok, sc.settled
		return -1
	}
	runs, l, ok := sc.appendRuns(sc.runs[:0], a, b, o.maxD(n, m))
	sc.runs = runs
	s.LCSStage = sc.settled
	if !ok {
		s.LCSCut = true
		s.LCS = Ratio(l, n, m)
		s.Central, s.CoverageA, s.CoverageB, s.Divergence = 0, 0, 0, 1
		if o.Central.PageShare > 0 {
			s.PageDivergence = 1
		}
		return -1
	}
	c := sc.central(runs, n, m, o.Central)
	s.LCS, s.Central, s.CoverageA, s.CoverageB = c.Ratio, c.CentralRatio, c.CoverageA, c.CoverageB
	s.Divergence, s.PageDivergence = c.Divergence, c.PageDivergence
	return l
}

// containment returns the containment relation of a to b from their
// Bloom filters (see [Scores.Containment]).
func containment(a, b *Signature) Relation {
	switch {
	case float64(a.Chunks) >= DefaultContainSize*float64(b.Chunks) && contained(b, a):
		return RelationContains
	case float64(b.Chunks) >= DefaultContainSize*float64(a.Chunks) && contained(a, b):
		return RelationContained
	}
	return RelationNone
}

// contained reports whether a's Bloom bits are almost all in b's: at most
// [DefaultContainMissing] of them, or the k bits of one chunk if that is
// more, are missing. The one chunk allows for an excerpt's last chunk,
// which content-defined chunking cuts where the longer text does not.
func contained(a, b *Signature) bool {
	miss := BloomMissing(a.Bloom, b.Bloom)
	if miss < 0 {
		return false
	}
	na := a.Bloom.BitSet().Count()
	return na > 0 && float64(miss) <= max(DefaultContainMissing*float64(na), float64(a.Bloom.K()))
}
