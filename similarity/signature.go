package similarity

import (
	"github.com/bits-and-blooms/bloom/v3"
)

// SignatureVersion is the version byte of the binary encoding written by
// [Signature.MarshalBinary]. Decoding a signature of another version fails
// with [ErrVersion], so caches and stores never compare incompatible values;
// versions 2 to 5 are still read, without what changed since (see
// [Signature.UnmarshalBinary]).
// Version 2 changed the sentence fingerprints from MD5 to xxh3; version 3
// the chunk boundaries of the Bloom filter (a 16-byte gear window with
// jumps, see cdc.go); version 4 the word sequence, where every number is
// one token (numberHash in sign.go); version 5 added the numbers
// themselves ([Signature.Numbers]); version 6 the sketch of the link
// targets ([Signature.Links]).
const SignatureVersion = 6

// signatureVersionNoLinks is the version whose encoding is this one's
// without the links section; signatureVersionNoNumbers has, besides, no
// numbers section; signatureVersionOldSeq has, besides, numbers hashed
// as words in Seq; signatureVersionOldChunks has, besides, other CDC
// chunk boundaries.
const (
	signatureVersionNoLinks   = 5
	signatureVersionNoNumbers = 4
	signatureVersionOldSeq    = 3
	signatureVersionOldChunks = 2
)

// Input is one document as canon produces it. The seam between canon and
// similarity is plain data so neither package imports the other.
//
// Text is the canonical text (normalized, lower case, single spaces and
// newlines between blocks). Tokens are its word tokens in order (CJK runs
// already split into character bigrams). Sentences are its sentences in
// order. Sign neither retains nor modifies any of the slices.
//
// Links are the targets of the page's links that stay on its site, as
// written (canon.Document.Links: relative paths and fragments, absolute
// links left out), repeats allowed; nil when they were not read (a text
// page, or canon without Options.Links), empty when there are none.
type Input struct {
	Text      []byte
	Tokens    []string
	Sentences []string
	Links     []string
}

// Signature bundles every signature family of one document. The zero value
// is the signature of an empty document; it never matches anything (see
// [Signature.Empty]). A Signature is immutable once built and safe for
// concurrent reads.
type Signature struct {
	// Tokens is the number of word tokens the signature was built from,
	// after the cap of [Options.MaxTokens].
	Tokens int
	// Bytes is the number of canonical text bytes the signature was built
	// from, after the cap of [Options.MaxBytes].
	Bytes int
	// Capped reports that the input was longer than the caps and was cut.
	Capped bool

	// Simhash is the 64-bit Charikar simhash over weighted word shingles
	// (Moz; Manku et al.).
	Simhash uint64

	// Bloom holds the content-defined chunks of Text, each made unique by
	// its occurrence count (Jain §2.3), in a filter of fixed m and k so any
	// two signatures built with the same Options compare. nil when Text is
	// empty.
	Bloom *bloom.BloomFilter
	// Chunks is the number of distinct chunks inserted into Bloom.
	Chunks int

	// MinHash holds the low 16 bits of each of the min-hash values over
	// 5-word shingles (Fetterly §2: 84 values); b-bit min-hashing (Li and
	// König) keeps the Jaccard estimate within 2^-16 of the full values.
	MinHash []uint16
	// Supershingles are the hashes of the full 64-bit min-hash values
	// taken in runs of 14 (Fetterly: 6 supershingles of 14). Megashingles
	// are derived from them (see [Signature.Megashingles]).
	Supershingles []uint64

	// Fingerprints are the n smallest sentence fingerprints (the top 32
	// bits of the 64-bit xxh3 of each sentence; Huang et al. use MD5, but
	// any uniform hash gives the bottom-n sketch the same statistics and
	// MD5 cost a quarter of signing) of each of m buckets (value mod m;
	// n = 8, m = 1 by default), distinct and sorted ascending, used to
	// form perhaps-similar sets. nil without sentences.
	Fingerprints []uint32

	// Lengths is the N-dimensional length vector: the token count split
	// into N parts by word hash (Zhu et al. §4), used for partitioning.
	Lengths []uint32

	// Seq is the sequence of 32-bit word hashes of the first
	// [Options.MaxSeq] tokens, used for LCS verification; every number (a
	// token without a letter) has one hash, so changed prices, counts and
	// dates still align. It is optional: nil when Options.MaxSeq < 0 or
	// read from a version-3 encoding, and then LCS is not computed.
	Seq []uint32

	// Numbers are the first [MaxNumbers] number tokens of the page in
	// order, each as a value (a hash for leading zeros, more than 18
	// digits or other scripts' digits): what Seq holds as one token, kept
	// as evidence for the remove decision ([Scores.NumbersDiffer]) and
	// its explanation. nil when not recorded (read from an encoding older
	// than version 5); [Sign] sets it, empty when the page has no number.
	Numbers []uint64

	// Links is the bottom-k sketch of the page's link targets
	// ([Input.Links], [LinkSketch]), for [LinksDiffer]: nil when not
	// recorded (the links were not read, or an encoding older than
	// version 6), empty when the page has no link target.
	Links []uint32
}

// MinTokens is the fewest word tokens a document needs for a signature;
// [Sign] gives a shorter one an empty signature (see [Signature.Empty]).
// It is the min-hash shingle width of Fetterly et al.
const MinTokens = 5

// Empty reports whether s is the signature of an empty or tiny document
// (fewer than [MinTokens] tokens), including the zero Signature. An empty
// signature carries no families and must never match anything.
func (s *Signature) Empty() bool {
	return s.Tokens < MinTokens
}

// SeqCut reports that the signature's word sequence ([Signature.Seq],
// [Options.MaxSeq]) holds only the page's first words: an alignment
// reads the page up to there, not to its end (the Jaccard and the other
// families read it all).
func (s *Signature) SeqCut() bool {
	return len(s.Seq) > 0 && len(s.Seq) < s.Tokens
}
