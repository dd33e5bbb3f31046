package similarity

import (
	"slices"
	"sync"
	"sync/atomic"
)

// seqAlignments keeps the finished alignments of the verdicts of one
// [BatchCluster] call by the word sequences of their pair, so that a pair
// of other documents with the same texts (in the same order) takes the
// alignment's scores instead of aligning again: the scores are a function
// of the sequences and token counts ([Verdict.align]), and the verdict is
// the one Decide gives, bit for bit. Documents with the same words whose
// signatures differ elsewhere (so they are not copies of one signature)
// are common in a crawl of versioned manuals: on the Debian
// documentation crawl over a quarter of the aligned pairs had the texts
// of a pair aligned before (docs/performance.md, "Alignments of the same
// texts"). Safe for concurrent use.
type seqAlignments struct {
	sigs []*Signature
	// hash holds each signature's [seqHash] with the top bit set, or 0
	// before it is needed.
	hash []atomic.Uint64
	mu   sync.Mutex
	kept map[[2]uint64]seqAlignment
}

// seqAlignment is one kept alignment: the signatures it was computed on
// (to tell a hash collision), the verdict's scores and its alignment.
type seqAlignment struct {
	a, b    *Signature
	scores  Scores
	aligned Alignment
}

// newSeqAlignments returns an empty memory for the signatures sigs.
func newSeqAlignments(sigs []*Signature) *seqAlignments {
	return &seqAlignments{sigs: sigs, hash: make([]atomic.Uint64, len(sigs))}
}

// key returns the key of the pair (i, j).
func (sa *seqAlignments) key(i, j int) [2]uint64 {
	return [2]uint64{sa.hashOf(i), sa.hashOf(j)}
}

// hashOf returns the sequence hash of signature i, computing it once
// (two workers may both compute it; they store the same value).
func (sa *seqAlignments) hashOf(i int) uint64 {
	if h := sa.hash[i].Load(); h != 0 {
		return h
	}
	h := seqHash(sa.sigs[i]) | 1<<63
	sa.hash[i].Store(h)
	return h
}

// seqHash hashes a signature's word sequence and token count, the inputs
// of its alignments ([wholeOf]).
func seqHash(s *Signature) uint64 {
	h := uint64(14695981039346656037) ^ uint64(s.Tokens)
	for _, x := range s.Seq {
		h = (h ^ uint64(x)) * 1099511628211
	}
	return h
}

// sameSeq reports whether x and y hold the same word sequence and token
// count.
func sameSeq(x, y *Signature) bool {
	return x.Tokens == y.Tokens && slices.Equal(x.Seq, y.Seq)
}

// prior returns a verdict holding a kept alignment of the texts of the
// pair (i, j), or nil.
func (sa *seqAlignments) prior(i, j int) *Verdict {
	a, b := sa.sigs[i], sa.sigs[j]
	if len(a.Seq) == 0 || len(b.Seq) == 0 {
		return nil
	}
	k := sa.key(i, j)
	sa.mu.Lock()
	e, ok := sa.kept[k]
	sa.mu.Unlock()
	if !ok || !sameSeq(e.a, a) || !sameSeq(e.b, b) {
		return nil
	}
	return &Verdict{Scores: e.scores, Aligned: e.aligned}
}

// keep keeps v's alignment of the pair (i, j) when it ran to its end.
func (sa *seqAlignments) keep(i, j int, v *Verdict) {
	if !v.Aligned.Done {
		return
	}
	k := sa.key(i, j)
	e := seqAlignment{a: sa.sigs[i], b: sa.sigs[j], scores: v.Scores, aligned: v.Aligned}
	sa.mu.Lock()
	if sa.kept == nil {
		sa.kept = make(map[[2]uint64]seqAlignment)
	}
	if _, ok := sa.kept[k]; !ok {
		sa.kept[k] = e
	}
	sa.mu.Unlock()
}
