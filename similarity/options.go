package similarity

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// Defaults of [Options]. Each comes from the paper named beside it.
const (
	// DefaultMaxBytes caps the canonical text signed (256 KiB).
	DefaultMaxBytes = 256 << 10
	// DefaultMaxTokens caps the word tokens signed.
	DefaultMaxTokens = 50_000
	// DefaultMaxSeq is the number of word hashes kept for LCS.
	DefaultMaxSeq = 8192

	// DefaultChunkMin, DefaultChunkAvg and DefaultChunkMax bound the
	// content-defined chunks (Jain §2.2 and §3.1.1: expected 256 B,
	// maximum 64 KB; the minimum of 64 B keeps a run of boundaries from
	// producing tiny chunks).
	DefaultChunkMin = 64
	DefaultChunkAvg = 256
	DefaultChunkMax = 64 << 10
	// DefaultBloomMaxBytes is the text chunked into the Bloom filter
	// (Jain §3.1.1: "we set the maximum document size to 64 KB").
	DefaultBloomMaxBytes = 64 << 10
	// DefaultBloomBits is the filter size m (Jain §3.1.1: 2048 bits).
	DefaultBloomBits = 2048

	// DefaultSimhashShingle is the width in words of the simhash features.
	DefaultSimhashShingle = 3

	// DefaultMinHashes is the number of min-hash values (Fetterly §2).
	DefaultMinHashes = 84
	// DefaultMinHashShingle is the width in words of min-hash shingles.
	DefaultMinHashShingle = 5
	// DefaultSupershingles and DefaultSupershingleSize: 6 supershingles
	// of 14 adjacent min-hash values (Fetterly §2).
	DefaultSupershingles    = 6
	DefaultSupershingleSize = 14

	// DefaultFingerprints is n, the sentence fingerprints kept per bucket.
	DefaultFingerprints = 8
	// DefaultFingerprintBuckets is m, the number of buckets sentence
	// fingerprints are split into by value mod m (Huang et al. use 7
	// buckets of 3; one bucket of 8 keeps a graded overlap, see
	// [Signature.Fingerprints]).
	DefaultFingerprintBuckets = 1

	// DefaultLengthDims is N, the dimensions of the length vector (Zhu
	// §6.1 chose 3-D mapping for production).
	DefaultLengthDims = 3
)

// Hard limits enforced by [Options.Validate] and by the decoder, so a
// decoded signature never describes more than this.
const (
	// MaxBloomBits is the largest Bloom filter m (8 KiB of bits).
	MaxBloomBits = 1 << 16
	// MaxBloomHashes is the largest Bloom filter k.
	MaxBloomHashes = 32
	// MaxMinHashes is the largest number of min-hash values.
	MaxMinHashes = 1024
	// MaxShingle is the widest word shingle.
	MaxShingle = 64
	// MaxFingerprints is the largest number of sentence fingerprints
	// (buckets times per bucket).
	MaxFingerprints = 1024
	// MaxLengthDims is the largest length vector.
	MaxLengthDims = 64
)

// Options sets every parameter of [Sign]. The zero value means the
// defaults from the papers; use [Options.WithDefaults] to see them. Two
// signatures compare only if they were built with the same Options.
type Options struct {
	// MaxBytes caps the canonical text signed, in bytes; the text is cut
	// at a UTF-8 boundary and [Signature.Capped] is set. Sentences are cut
	// to the same total length. Default 256 KiB.
	MaxBytes int
	// MaxTokens caps the word tokens signed. Default 50,000.
	MaxTokens int
	// MaxSeq is the number of leading word hashes kept in
	// [Signature.Seq] for LCS verification. Default 8192; a negative
	// value disables Seq.
	MaxSeq int

	// ChunkMin is the smallest content-defined chunk in bytes, except the
	// last one of a text. Default 64.
	ChunkMin int
	// ChunkAvg is the expected chunk size in bytes, a power of two.
	// Default 256.
	ChunkAvg int
	// ChunkMax is the largest chunk in bytes. Default 64 KiB.
	ChunkMax int
	// BloomMaxBytes is the length of the leading text chunked into the
	// Bloom filter, in bytes: past about m/8 chunks a filter of m bits
	// fills up and every pair looks alike. Default 64 KiB.
	BloomMaxBytes int
	// BloomBits is the Bloom filter size m in bits. Default 2048.
	BloomBits int
	// BloomHashes is the Bloom filter k. Default round((m/n)·ln 2) with
	// n = m/8, the chunks of a document of BloomMaxBytes at ChunkAvg
	// (Jain §3.1.1 sizes m as 8 times n): round(8·0.693) = 6.
	BloomHashes int

	// SimhashShingle is the width in words of the simhash features; each
	// occurrence of a shingle adds weight 1, so a feature's weight is its
	// term frequency. Default 3.
	SimhashShingle int

	// MinHashes is the number of min-hash values. Default 84.
	MinHashes int
	// MinHashShingle is the width in words of min-hash shingles; shingles
	// wrap at the end of the text so every word starts one (Fetterly §2).
	// Default 5.
	MinHashShingle int
	// Supershingles is the number of supershingles. Default 6.
	Supershingles int
	// SupershingleSize is the number of adjacent min-hash values per
	// supershingle. Default 14. Supershingles·SupershingleSize must not
	// exceed MinHashes.
	SupershingleSize int

	// Fingerprints is n, the smallest sentence fingerprints kept per
	// bucket. Default 8.
	Fingerprints int
	// FingerprintBuckets is m, the buckets that sentence fingerprints are
	// split into by value mod m. Default 1.
	FingerprintBuckets int

	// LengthDims is N, the dimensions of the length vector. Default 3.
	LengthDims int
}

// WithDefaults returns o with every zero field set to its default. It is
// idempotent.
func (o Options) WithDefaults() Options {
	o.MaxBytes = cmp.Or(o.MaxBytes, DefaultMaxBytes)
	o.MaxTokens = cmp.Or(o.MaxTokens, DefaultMaxTokens)
	o.MaxSeq = cmp.Or(o.MaxSeq, DefaultMaxSeq)
	o.ChunkMin = cmp.Or(o.ChunkMin, DefaultChunkMin)
	o.ChunkAvg = cmp.Or(o.ChunkAvg, DefaultChunkAvg)
	o.ChunkMax = cmp.Or(o.ChunkMax, DefaultChunkMax)
	o.BloomMaxBytes = cmp.Or(o.BloomMaxBytes, DefaultBloomMaxBytes)
	o.BloomBits = cmp.Or(o.BloomBits, DefaultBloomBits)
	if o.BloomHashes == 0 {
		o.BloomHashes = optimalBloomHashes(o.BloomBits, o.BloomMaxBytes, o.ChunkAvg)
	}
	o.SimhashShingle = cmp.Or(o.SimhashShingle, DefaultSimhashShingle)
	o.MinHashes = cmp.Or(o.MinHashes, DefaultMinHashes)
	o.MinHashShingle = cmp.Or(o.MinHashShingle, DefaultMinHashShingle)
	o.Supershingles = cmp.Or(o.Supershingles, DefaultSupershingles)
	o.SupershingleSize = cmp.Or(o.SupershingleSize, DefaultSupershingleSize)
	o.Fingerprints = cmp.Or(o.Fingerprints, DefaultFingerprints)
	o.FingerprintBuckets = cmp.Or(o.FingerprintBuckets, DefaultFingerprintBuckets)
	o.LengthDims = cmp.Or(o.LengthDims, DefaultLengthDims)
	return o
}

// optimalBloomHashes is k = round((m/n)·ln 2) for n, the expected chunks of
// a text of maxBytes: maxBytes/avg (Jain §2.1). With the defaults n = 256 =
// m/8 and k = round(5.545) = 6.
func optimalBloomHashes(m, maxBytes, avg int) int {
	if m <= 0 || maxBytes <= 0 || avg <= 0 {
		return 0 // Validate reports the field
	}
	n := max(1, maxBytes/avg)
	k := int(math.Round(float64(m) / float64(n) * math.Ln2))
	return min(max(k, 1), MaxBloomHashes)
}

// Validate reports every invalid field of o, each error naming its field.
// Call it on the result of [Options.WithDefaults].
func (o Options) Validate() error {
	var errs []error
	bad := func(field string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("similarity: options: %s %s", field, fmt.Sprintf(format, args...)))
	}
	positive := func(field string, v int) bool {
		if v <= 0 {
			bad(field, "= %d, want > 0", v)
			return false
		}
		return true
	}
	within := func(field string, v, lo, hi int) bool {
		if v < lo || v > hi {
			bad(field, "= %d, want %d..%d", v, lo, hi)
			return false
		}
		return true
	}
	positive("MaxBytes", o.MaxBytes)
	positive("MaxTokens", o.MaxTokens)
	okMin := positive("ChunkMin", o.ChunkMin)
	okAvg := positive("ChunkAvg", o.ChunkAvg)
	okMax := positive("ChunkMax", o.ChunkMax)
	if okAvg && (bits.OnesCount(uint(o.ChunkAvg)) != 1 || o.ChunkAvg < 4) {
		bad("ChunkAvg", "= %d, want a power of two >= 4", o.ChunkAvg)
	}
	if okMin && okAvg && okMax && !(o.ChunkMin <= o.ChunkAvg && o.ChunkAvg <= o.ChunkMax) {
		bad("ChunkAvg", "= %d, want ChunkMin (%d) <= ChunkAvg <= ChunkMax (%d)", o.ChunkAvg, o.ChunkMin, o.ChunkMax)
	}
	positive("BloomMaxBytes", o.BloomMaxBytes)
	within("BloomBits", o.BloomBits, 64, MaxBloomBits)
	within("BloomHashes", o.BloomHashes, 1, MaxBloomHashes)
	within("SimhashShingle", o.SimhashShingle, 1, MaxShingle)
	okMH := within("MinHashes", o.MinHashes, 1, MaxMinHashes)
	within("MinHashShingle", o.MinHashShingle, 1, MaxShingle)
	okSS := within("Supershingles", o.Supershingles, 0, MaxMinHashes)
	okSZ := within("SupershingleSize", o.SupershingleSize, 1, MaxMinHashes)
	if okMH && okSS && okSZ && o.Supershingles*o.SupershingleSize > o.MinHashes {
		bad("Supershingles", "·SupershingleSize = %d·%d, want <= MinHashes (%d)", o.Supershingles, o.SupershingleSize, o.MinHashes)
	}
	okFP := within("Fingerprints", o.Fingerprints, 1, MaxFingerprints)
	okFB := within("FingerprintBuckets", o.FingerprintBuckets, 1, MaxFingerprints)
	if okFP && okFB && o.Fingerprints*o.FingerprintBuckets > MaxFingerprints {
		bad("Fingerprints", "·FingerprintBuckets = %d·%d, want <= %d", o.Fingerprints, o.FingerprintBuckets, MaxFingerprints)
	}
	within("LengthDims", o.LengthDims, 1, MaxLengthDims)
	return errors.Join(errs...)
}
