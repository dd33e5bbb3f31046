package similarity

import (
	"slices"
	"sync"
	"unsafe"

	"github.com/zeebo/xxh3"
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
// of a pair aligned before (docs/performance.md, "Where the
// verification's cost goes on the Debian crawl"). Safe for concurrent use.
//
// Only pairs with a side whose text another signature shares are kept:
// no other pair can have the texts of a pair of two unique texts, and
// keeping every alignment would hold about 250 bytes for each aligned
// pair of a call, whatever the input.
type seqAlignments struct {
	sigs []*Signature
	// hash holds each signature's [seqHash] with the low bit set (0: no
	// sequence).
	hash []uint64
	// shared marks the signatures whose hash another signature has.
	shared []bool
	mu     sync.Mutex
	kept   map[[2]uint64]seqAlignment
}

// seqAlignment is one kept alignment: the signatures it was computed on
// (to tell a hash collision), the verdict's scores and its alignment.
type seqAlignment struct {
	a, b    *Signature
	scores  Scores
	aligned Alignment
}

// newSeqAlignments returns an empty memory for the signatures sigs, or
// nil when no two of them have the same word sequence and token count.
func newSeqAlignments(sigs []*Signature) *seqAlignments {
	sa := &seqAlignments{sigs: sigs, hash: make([]uint64, len(sigs))}
	sorted := make([]uint64, 0, len(sigs))
	for i, s := range sigs {
		if s != nil && len(s.Seq) > 0 {
			sa.hash[i] = seqHash(s) | 1
			sorted = append(sorted, sa.hash[i])
		}
	}
	slices.Sort(sorted)
	var repeated []uint64 // the hashes of two signatures or more
	for k := 1; k < len(sorted); k++ {
		if sorted[k] == sorted[k-1] && (len(repeated) == 0 || repeated[len(repeated)-1] != sorted[k]) {
			repeated = append(repeated, sorted[k])
		}
	}
	if len(repeated) == 0 {
		return nil
	}
	sa.shared = make([]bool, len(sigs))
	for i, h := range sa.hash {
		_, sa.shared[i] = slices.BinarySearch(repeated, h)
	}
	return sa
}

// key returns the key of the pair (i, j), and whether a pair of other
// signatures may have its texts.
func (sa *seqAlignments) key(i, j int) ([2]uint64, bool) {
	return [2]uint64{sa.hash[i], sa.hash[j]}, sa.shared[i] || sa.shared[j]
}

// seqHash hashes a signature's word sequence and token count, the inputs
// of its alignments ([wholeOf]). Every signature of a call is hashed
// (6.6 M words on the Debian crawl), so the words are hashed as bytes, not
// one at a time.
func seqHash(s *Signature) uint64 {
	words := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s.Seq))), 4*len(s.Seq))
	return xxh3.HashSeed(words, uint64(s.Tokens))
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
	k, shared := sa.key(i, j)
	if !shared {
		return nil
	}
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
	k, shared := sa.key(i, j)
	if !shared || !v.Aligned.Done {
		return
	}
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
