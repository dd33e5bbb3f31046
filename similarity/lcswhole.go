package similarity

import "math"

// wholePages relates the LCS of two signatures' sequences to the LCS of
// the whole pages when a sequence holds only the first [Options.MaxSeq]
// tokens of its page ([Signature.Tokens] > len(Seq)). Pages longer than
// the cap that share their first MaxSeq words would otherwise get the
// ratio 1 whatever their lengths: two copycat-dev pages of 8,969 and
// 11,059 words with the same first 8,192 words, judged not
// near-duplicates, scored 1.000, and remove mode would have dropped the
// longer page with its 2,000 more words. The whole pages' LCS is
// estimated as the sequences' LCS l plus the words beyond both sequences
// that can pair up (the fewer of the two sides' rests), matched at the
// rate the beginnings matched (l over the shorter sequence): a common
// beginning keeps its ratio on pages of equal length and loses what the
// lengths differ by. It is an estimate, not a bound: the tokens beyond
// the cap are not read (an upper bound, every such token matched, would
// call two 40,000-word pages that share a 6,000-word template 0.87
// alike). When neither sequence was cut it is the sequences' LCS.
type wholePages struct {
	n, m   int     // the sequences' lengths
	ta, tb int     // the pages' token counts
	k      float64 // the rests that can pair up, over the shorter sequence
}

// wholeOf returns the relation for a and b's sequences.
func wholeOf(a, b *Signature) wholePages {
	w := wholePages{n: len(a.Seq), m: len(b.Seq), ta: max(a.Tokens, len(a.Seq)), tb: max(b.Tokens, len(b.Seq))}
	if s := min(w.n, w.m); s > 0 {
		w.k = float64(min(w.ta-w.n, w.tb-w.m)) / float64(s)
	}
	return w
}

// cut reports whether a sequence holds less than its page.
func (w wholePages) cut() bool { return w.ta > w.n || w.tb > w.m }

// ratio returns the whole pages' estimated LCS ratio for the sequences'
// LCS ratio r.
func (w wholePages) ratio(r float64) float64 {
	if !w.cut() || math.IsNaN(r) {
		return r
	}
	l := r * float64(w.n+w.m) / (1 + r)
	est := min(l*(1+w.k), float64(min(w.ta, w.tb)))
	return est / (float64(w.ta+w.tb) - est)
}

// seqRatio returns the sequences' LCS ratio below which the whole pages'
// estimate stays under t: the cut-off of the sequences' search for a
// whole-page [CompareOptions.MinRatio] of t.
func (w wholePages) seqRatio(t float64) float64 {
	if !w.cut() || t <= 0 {
		return t
	}
	need := t * float64(w.ta+w.tb) / (1 + t) / (1 + w.k) // l at which the estimate reaches t
	l := min(math.Floor(need), float64(min(w.n, w.m)))
	return l / (float64(w.n+w.m) - l)
}
