package similarity

import (
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/zeebo/xxh3"
)

// hashPool recycles the token hash buffers of Sign (8 bytes per token, up
// to 400 KB at the default MaxTokens).
var hashPool = sync.Pool{New: func() any { return new([]uint64) }}

// Sign computes every signature family of in. It applies
// [Options.WithDefaults] to o itself, so a zero Options gives the paper
// defaults and an already defaulted one is unchanged; o must then pass
// [Options.Validate] (check it once at start-up): Sign panics on invalid
// options, a programmer error.
//
// Text is cut to o.MaxBytes and Tokens to o.MaxTokens, setting
// [Signature.Capped]. A document of fewer than [MinTokens] tokens gets a
// signature with only Tokens, Bytes and Capped set; its
// [Signature.Empty] reports true. Sign does not retain in.
//
// Every token is hashed once with xxh3; simhash, min-hash, the length
// vector and Seq all work on these hashes in single passes. Cost: linear in
// the input; four allocations (one block for the families, three for the
// Bloom filter).
func Sign(in Input, o Options) Signature {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		panic(err)
	}
	var sig Signature
	text := in.Text
	if len(text) > o.MaxBytes {
		text = cutUTF8(text, o.MaxBytes)
		sig.Capped = true
	}
	tokens := in.Tokens
	if len(tokens) > o.MaxTokens {
		tokens = tokens[:o.MaxTokens]
		sig.Capped = true
	}
	sentences := in.Sentences
	total := 0
	for i, s := range sentences {
		if total += len(s); total > o.MaxBytes {
			sentences = sentences[:i]
			sig.Capped = true
			break
		}
	}
	sig.Tokens = len(tokens)
	sig.Bytes = len(text)
	if sig.Empty() {
		return sig
	}

	var fpBuf [MaxFingerprints]uint32
	fp := appendFingerprints(fpBuf[:0], sentences, o.Fingerprints, o.FingerprintBuckets)
	var numBuf [MaxNumbers]uint64
	nums := appendNumbers(numBuf[:0], tokens)
	var linkBuf [MaxLinks]uint32
	var links []uint32
	if in.Links != nil {
		links = appendLinkSketch(linkBuf[:0], in.Links)
	}

	// One allocation for every family but the Bloom filter: a block of
	// words holding the supershingles, then the min-hashes and the uint32
	// families (fingerprints, lengths, Seq) viewed as narrower values.
	// Each view is capped at its length, so an append copies. The families
	// share the block's lifetime, as those of one signature do anyway.
	nseq := 0
	if o.MaxSeq > 0 {
		nseq = min(o.MaxSeq, len(tokens))
	}
	nss, nmh, n32 := o.Supershingles, o.MinHashes, len(links)+len(fp)+o.LengthDims+nseq
	block := make([]uint64, len(nums)+nss+(nmh+3)/4+(n32+1)/2)
	// Numbers first, non-nil even when empty: the signature recorded
	// them.
	sig.Numbers = block[:len(nums):len(nums)]
	copy(sig.Numbers, nums)
	block = block[len(nums):]
	if nss > 0 {
		sig.Supershingles = block[:nss:nss]
	}
	sig.MinHash = unsafe.Slice((*uint16)(unsafe.Pointer(&block[nss])), nmh)
	u32 := unsafe.Slice((*uint32)(unsafe.Pointer(&block[nss+(nmh+3)/4])), n32) // n32 >= LengthDims >= 1
	// Links first of the uint32 families, non-nil (even when empty)
	// when the page's links were read.
	if links != nil {
		sig.Links = u32[:len(links):len(links)]
		copy(sig.Links, links)
		u32 = u32[len(links):]
	}
	if len(fp) > 0 {
		sig.Fingerprints = u32[:len(fp):len(fp)]
		copy(sig.Fingerprints, fp)
	}
	u32 = u32[len(fp):]
	sig.Lengths = u32[:o.LengthDims:o.LengthDims]
	if o.MaxSeq > 0 {
		sig.Seq = u32[o.LengthDims:]
	}

	// One pass hashes the tokens and fills the length vector and Seq.
	hp := hashPool.Get().(*[]uint64)
	defer hashPool.Put(hp)
	if cap(*hp) < len(tokens) {
		*hp = make([]uint64, len(tokens))
	}
	h := (*hp)[:len(tokens)]
	for i, t := range tokens[:nseq] {
		x := xxh3.HashString(t)
		h[i] = x
		sig.Lengths[lengthDim(x, len(sig.Lengths))]++
		// The first byte settles most tokens: a lower-case ASCII letter
		// (canonical text is lower case) starts a word.
		if t != "" && (t[0] < 'a' || t[0] >= utf8.RuneSelf) && isNumber(t) {
			sig.Seq[i] = numberHash
		} else {
			sig.Seq[i] = uint32(x)
		}
	}
	for i, t := range tokens[nseq:] {
		x := xxh3.HashString(t)
		h[nseq+i] = x
		sig.Lengths[lengthDim(x, len(sig.Lengths))]++
	}

	sig.Simhash = simhash(h, o.SimhashShingle)

	var minsBuf [MaxMinHashes]uint64
	mins := minsBuf[:o.MinHashes]
	minhash(h, o.MinHashShingle, mins)
	for i, v := range mins {
		sig.MinHash[i] = uint16(v)
	}
	if nss > 0 {
		supershingles(mins, o.SupershingleSize, sig.Supershingles)
	}

	if len(text) > 0 {
		var scratch [512]uint64
		sig.Bloom, sig.Chunks, _ = chunkFilter(text[:min(len(text), o.BloomMaxBytes)], o, scratch[:0])
	}
	return sig
}

// numberHash stands in [Signature.Seq] for every token that is a number,
// so the LCS and the divergence read "3 reviews" and "4 reviews" as the
// same text. Prices, counters, scores, dates and times change between two
// fetches or two URLs of one page; people judge such pages the same
// (copycat-dev's content-equivalent pairs that differ only in a stats
// table, docs/decisions.md), while pages that differ in their words keep their
// distance. The other families hash numbers as words: their paper methods
// stay as published. Any fixed value serves; this one is xxh3 of "0".
const numberHash uint32 = 0xbb241055

// appendNumbers appends the codes ([numberCode]) of the first
// [MaxNumbers] number tokens of tokens to dst.
func appendNumbers(dst []uint64, tokens []string) []uint64 {
	for _, t := range tokens {
		if t != "" && (t[0] < 'a' || t[0] >= utf8.RuneSelf) && isNumber(t) {
			if len(dst) == MaxNumbers {
				break
			}
			dst = append(dst, numberCode(t))
		}
	}
	return dst
}

// isNumber reports whether the token t is a number: digits (and the marks
// that may follow them) and no letter, as [canon.Tokenize] splits "19.99"
// into "19" and "99" and "v2" is a word.
func isNumber(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c >= utf8.RuneSelf {
			return isNumberRunes(t)
		}
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isNumberRunes is isNumber for a token with a non-ASCII byte.
func isNumberRunes(t string) bool {
	digit := false
	for _, r := range t {
		switch {
		case unicode.IsLetter(r):
			return false
		case unicode.IsNumber(r):
			digit = true
		case !unicode.IsMark(r):
			return false
		}
	}
	return digit
}

// cutUTF8 returns the longest prefix of b of at most n bytes that does not
// split a UTF-8 sequence.
func cutUTF8(b []byte, n int) []byte {
	if n >= len(b) {
		return b
	}
	for i := n; i > 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return b[:i]
		}
	}
	return b[:n]
}
