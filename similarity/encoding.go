package similarity

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/bits-and-blooms/bloom/v3"
)

// ErrVersion is returned by [Signature.UnmarshalBinary] for data written
// with a [SignatureVersion] it cannot read (every version but this one and
// versions 2 to 5, see [Signature.UnmarshalBinary]).
var ErrVersion = errors.New("similarity: signature encoding of another version")

// ErrCorrupt is returned by [Signature.UnmarshalBinary] for data that is
// not a valid signature encoding.
var ErrCorrupt = errors.New("similarity: corrupt signature encoding")

// EncodedWithSeq reports whether data, an encoding of
// [Signature.MarshalBinary], holds a word sequence that decoding it
// would give ([Signature.Seq], written when not nil), without decoding
// it: false for an encoding of an older version, which is read without
// its sequence.
func EncodedWithSeq(data []byte) bool {
	return len(data) >= 2 && (data[0] == SignatureVersion || data[0] == signatureVersionNoLinks || data[0] == signatureVersionNoNumbers) && data[1]&flagSeq != 0
}

// Encoding, version 1. Integers are unsigned varints unless a width is
// given; fixed-width values are little endian.
//
//	version  byte = SignatureVersion
//	flags    byte: 1 Capped, 2 Bloom present, 4 Bloom dense, 8 Seq present,
//	         16 Numbers present (version 5), 32 Links present (version 6)
//	Tokens, Bytes
//	Simhash  8 bytes
//	Bloom    (if flag 2) m, k, Chunks, then
//	         dense:  ceil(m/8) bytes of bits, bit i in byte i/8 at i%8
//	         sparse: count, rice parameter r (1 byte), then the gaps
//	                 between set bit positions (first position, then
//	                 difference − 1) Rice-coded, LSB first: the quotient
//	                 g>>r in unary as ones ended by a zero, then the r low
//	                 bits; padded to a byte
//	         whichever is smaller
//	MinHash  count, 2 bytes each
//	Supershingles count, 8 bytes each
//	Fingerprints  count, 4 bytes each
//	Lengths  count, varint each
//	Seq      (if flag 8) count, 4 bytes each
//	Numbers  (if flag 16) count, varint each (a value v as 2v, most
//	         numbers of a page in 1–3 bytes)
//	Links    (if flag 32) count (at most MaxLinks), 4 bytes each
//
// A typical 8 KB page takes about 400 bytes without Seq.
const (
	flagCapped     = 1
	flagBloom      = 2
	flagBloomDense = 4
	flagSeq        = 8
	flagNumbers    = 16
	flagLinks      = 32
	flagsKnown     = flagCapped | flagBloom | flagBloomDense | flagSeq | flagNumbers | flagLinks
	maxRice        = 16
)

// MarshalBinary encodes s in the compact binary form described by
// [SignatureVersion]; it implements [encoding.BinaryMarshaler].
func (s *Signature) MarshalBinary() ([]byte, error) {
	return s.AppendBinary(make([]byte, 0, 64+2*len(s.MinHash)+8*len(s.Supershingles)+4*len(s.Fingerprints)+4*len(s.Seq)+4*len(s.Links)+300))
}

// AppendBinary appends the encoding of s to b, as [Signature.MarshalBinary]
// returns it; it implements [encoding.BinaryAppender]. It fails only when s
// exceeds the limits of [Options.Validate] (then b is returned unchanged).
func (s *Signature) AppendBinary(b []byte) ([]byte, error) {
	if err := s.checkLimits(); err != nil {
		return b, err
	}
	start := len(b)
	flags := byte(0)
	if s.Capped {
		flags |= flagCapped
	}
	if s.Seq != nil {
		flags |= flagSeq
	}
	if s.Numbers != nil {
		flags |= flagNumbers
	}
	if s.Links != nil {
		flags |= flagLinks
	}
	b = append(b, SignatureVersion, 0)
	b = binary.AppendUvarint(b, uint64(s.Tokens))
	b = binary.AppendUvarint(b, uint64(s.Bytes))
	b = binary.LittleEndian.AppendUint64(b, s.Simhash)
	if s.Bloom != nil {
		flags |= flagBloom
		var dense bool
		b, dense = appendBloom(b, s.Bloom, s.Chunks)
		if dense {
			flags |= flagBloomDense
		}
	}
	b[start+1] = flags
	b = binary.AppendUvarint(b, uint64(len(s.MinHash)))
	for _, v := range s.MinHash {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(s.Supershingles)))
	for _, v := range s.Supershingles {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(s.Fingerprints)))
	for _, v := range s.Fingerprints {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(s.Lengths)))
	for _, v := range s.Lengths {
		b = binary.AppendUvarint(b, uint64(v))
	}
	if s.Seq != nil {
		b = binary.AppendUvarint(b, uint64(len(s.Seq)))
		for _, v := range s.Seq {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
	}
	if s.Numbers != nil {
		b = binary.AppendUvarint(b, uint64(len(s.Numbers)))
		for _, v := range s.Numbers {
			b = binary.AppendUvarint(b, v)
		}
	}
	if s.Links != nil {
		b = binary.AppendUvarint(b, uint64(len(s.Links)))
		for _, v := range s.Links {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
	}
	return b, nil
}

func (s *Signature) checkLimits() error {
	var errs []error
	if s.Tokens < 0 || s.Bytes < 0 || s.Chunks < 0 {
		errs = append(errs, errors.New("similarity: cannot encode negative Tokens, Bytes or Chunks"))
	}
	if f := s.Bloom; f != nil && (f.Cap() < 1 || f.Cap() > MaxBloomBits || f.K() < 1 || f.K() > MaxBloomHashes) {
		errs = append(errs, fmt.Errorf("similarity: cannot encode Bloom filter with m=%d k=%d", f.Cap(), f.K()))
	}
	if len(s.MinHash) > MaxMinHashes || len(s.Supershingles) > MaxMinHashes {
		errs = append(errs, fmt.Errorf("similarity: cannot encode %d min-hashes, %d supershingles", len(s.MinHash), len(s.Supershingles)))
	}
	if len(s.Fingerprints) > MaxFingerprints || len(s.Lengths) > MaxLengthDims {
		errs = append(errs, fmt.Errorf("similarity: cannot encode %d fingerprints, %d lengths", len(s.Fingerprints), len(s.Lengths)))
	}
	if len(s.Numbers) > MaxNumbers {
		errs = append(errs, fmt.Errorf("similarity: cannot encode %d numbers", len(s.Numbers)))
	}
	if len(s.Links) > MaxLinks {
		errs = append(errs, fmt.Errorf("similarity: cannot encode %d link hashes", len(s.Links)))
	}
	return errors.Join(errs...)
}

// appendBloom appends m, k, chunks and the bits of f, dense or sparse,
// whichever is smaller; it reports whether it chose dense.
func appendBloom(b []byte, f *bloom.BloomFilter, chunks int) ([]byte, bool) {
	m := f.Cap()
	b = binary.AppendUvarint(b, uint64(m))
	b = binary.AppendUvarint(b, uint64(f.K()))
	b = binary.AppendUvarint(b, uint64(chunks))
	words := f.BitSet().Words()
	denseLen := int(m+7) / 8

	// Gaps between set positions: the first position, then differences
	// minus one.
	var gapBuf [512]uint32
	gaps := gapBuf[:0]
	sum := 0
	prev := -1
	forEachSet(words, m, func(p int) {
		gaps = append(gaps, uint32(p-prev-1))
		sum += p - prev - 1
		prev = p
	})
	// The best Rice parameter is near log2 of the mean gap; try the
	// neighbours of that guess.
	guess := 0
	if len(gaps) > 0 {
		guess = bits.Len(uint(sum / len(gaps)))
	}
	// Cost of r: Σ(g>>r) + count·(1+r); four candidates in one pass.
	lo := max(guess-2, 0)
	var q [4]int
	for _, g := range gaps {
		q[0] += int(g >> lo)
		q[1] += int(g >> (lo + 1))
		q[2] += int(g >> (lo + 2))
		q[3] += int(g >> (lo + 3))
	}
	r, best := 0, math.MaxInt
	for i, qi := range q {
		c := lo + i
		if n := qi + len(gaps)*(1+c); c <= maxRice && n < best {
			r, best = c, n
		}
	}
	sparseLen := uvarintLen(uint64(len(gaps))) + 1 + (best+7)/8
	if denseLen <= sparseLen {
		for i := range denseLen {
			b = append(b, byte(words[i/8]>>(8*(i%8))))
		}
		return b, true
	}
	b = binary.AppendUvarint(b, uint64(len(gaps)))
	b = append(b, byte(r))
	w := bitWriter{b: b}
	for _, g := range gaps {
		q := uint(g >> r)
		for ; q >= 32; q -= 32 {
			w.write(1<<32-1, 32)
		}
		w.write(1<<q-1, q+1) // q ones and the ending zero
		w.write(uint64(g)&(1<<r-1), uint(r))
	}
	return w.flush(), false
}

// forEachSet calls fn with each set bit position below m in ascending
// order.
func forEachSet(words []uint64, m uint, fn func(int)) {
	for i, w := range words {
		for w != 0 {
			p := i*64 + bits.TrailingZeros64(w)
			if uint(p) >= m {
				return
			}
			fn(p)
			w &= w - 1
		}
	}
}

func uvarintLen(x uint64) int {
	return (bits.Len64(x|1) + 6) / 7
}

type bitWriter struct {
	b   []byte
	acc uint64 // pending bits, LSB first
	n   uint   // pending bit count, < 8 between calls
}

// write appends the low nbits (at most 33) of v.
func (w *bitWriter) write(v uint64, nbits uint) {
	w.acc |= v << w.n
	w.n += nbits
	for w.n >= 8 {
		w.b = append(w.b, byte(w.acc))
		w.acc >>= 8
		w.n -= 8
	}
}

func (w *bitWriter) flush() []byte {
	if w.n > 0 {
		w.b = append(w.b, byte(w.acc))
	}
	return w.b
}

// decoder reads the encoding; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = ErrCorrupt
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// int reads a varint that must fit in [0, limit].
func (d *decoder) int(limit int) int {
	v := d.uvarint()
	if v > uint64(limit) {
		d.fail()
		return 0
	}
	return int(v)
}

// uint32 returns the next uvarint, which must fit in 32 bits (d.int
// cannot take the limit where int is 32 bits wide).
func (d *decoder) uint32() uint32 {
	v := d.uvarint()
	if v > math.MaxUint32 {
		d.fail()
		return 0
	}
	return uint32(v)
}

// bytes returns the next n bytes.
func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.fail()
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

// count reads an element count that must fit in limit and in the bytes
// left at size bytes per element, so no count allocates more than the
// input describes.
func (d *decoder) count(size, limit int) int {
	n := d.int(limit)
	if d.err == nil && n > len(d.b)/size {
		d.fail()
		return 0
	}
	return n
}

// UnmarshalBinary decodes data written by [Signature.MarshalBinary] into
// s; it implements [encoding.BinaryUnmarshaler]. It returns [ErrVersion] for
// another version and [ErrCorrupt] for anything else that is not a valid
// encoding, never panics, and allocates at most in proportion to len(data)
// (plus a Bloom filter of at most [MaxBloomBits]). On error s is unchanged.
// s does not retain data.
//
// Versions 2 to 5 have this version's layout, and each is read without
// what has changed since, so that no score compares values of two rules.
// Version 5 had no links section: it is read with Links nil, and a pair
// with such a page has no [Scores.LinksDiffer].
// Version 4 had no numbers section: it is read with Numbers nil, and a
// pair with such a page has no [Scores.NumbersDiffer].
// Version 3 hashed numbers as words in the word sequence: it is read
// without Seq (nil), and a pair with such a page is decided on the scores
// without a sequence ([PurposeModel.NoSeq]) until the page is signed
// again. Version 2 also cut the CDC chunks by the old rule and is read
// without its Bloom filter too (nil, Chunks 0). Everything else (simhash,
// min-hashes, lengths, fingerprints) is unchanged, so a cluster service
// upgraded from version 2 or 3 keeps its store.
func (s *Signature) UnmarshalBinary(data []byte) error {
	if len(data) == 0 {
		return ErrCorrupt
	}
	if data[0] < signatureVersionOldChunks || data[0] > SignatureVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrVersion, data[0], SignatureVersion)
	}
	if len(data) < 2 || data[1]&^flagsKnown != 0 || data[0] < signatureVersionNoLinks && data[1]&flagNumbers != 0 ||
		data[0] < SignatureVersion && data[1]&flagLinks != 0 {
		return ErrCorrupt
	}
	flags := data[1]
	d := decoder{b: data[2:]}
	var t Signature
	t.Capped = flags&flagCapped != 0
	t.Tokens = d.int(math.MaxInt32)
	t.Bytes = d.int(math.MaxInt)
	if p := d.bytes(8); p != nil {
		t.Simhash = binary.LittleEndian.Uint64(p)
	}
	if flags&flagBloom != 0 {
		t.Bloom, t.Chunks = d.bloom(flags&flagBloomDense != 0)
	} else if flags&flagBloomDense != 0 {
		d.fail()
	}
	if n := d.count(2, MaxMinHashes); n > 0 {
		t.MinHash = make([]uint16, n)
		p := d.bytes(2 * n)
		for i := range t.MinHash {
			t.MinHash[i] = binary.LittleEndian.Uint16(p[2*i:])
		}
	}
	if n := d.count(8, MaxMinHashes); n > 0 {
		t.Supershingles = make([]uint64, n)
		p := d.bytes(8 * n)
		for i := range t.Supershingles {
			t.Supershingles[i] = binary.LittleEndian.Uint64(p[8*i:])
		}
	}
	if n := d.count(4, MaxFingerprints); n > 0 {
		t.Fingerprints = make([]uint32, n)
		p := d.bytes(4 * n)
		for i := range t.Fingerprints {
			t.Fingerprints[i] = binary.LittleEndian.Uint32(p[4*i:])
		}
	}
	if n := d.count(1, MaxLengthDims); n > 0 {
		t.Lengths = make([]uint32, n)
		for i := range t.Lengths {
			t.Lengths[i] = d.uint32()
		}
	}
	if flags&flagSeq != 0 {
		n := d.count(4, math.MaxInt32)
		t.Seq = make([]uint32, n)
		p := d.bytes(4 * n)
		for i := range t.Seq {
			t.Seq[i] = binary.LittleEndian.Uint32(p[4*i:])
		}
	}
	if flags&flagNumbers != 0 {
		n := d.count(1, MaxNumbers)
		t.Numbers = make([]uint64, n)
		for i := range t.Numbers {
			t.Numbers[i] = d.uvarint()
		}
	}
	if flags&flagLinks != 0 {
		n := d.count(4, MaxLinks)
		t.Links = make([]uint32, n)
		p := d.bytes(4 * n)
		for i := range t.Links {
			t.Links[i] = binary.LittleEndian.Uint32(p[4*i:])
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		return d.err
	}
	if data[0] == signatureVersionOldChunks {
		t.Bloom, t.Chunks = nil, 0
	}
	if data[0] <= signatureVersionOldSeq {
		t.Seq = nil
	}
	*s = t
	return nil
}

// bloom reads a Bloom filter section.
func (d *decoder) bloom(dense bool) (*bloom.BloomFilter, int) {
	m := d.int(MaxBloomBits)
	k := d.int(MaxBloomHashes)
	chunks := d.int(math.MaxInt32)
	if d.err != nil || m == 0 || k == 0 {
		d.fail()
		return nil, 0
	}
	if dense {
		p := d.bytes((m + 7) / 8)
		if p == nil {
			return nil, 0
		}
		words := make([]uint64, (m+63)/64)
		for i, c := range p {
			words[i/8] |= uint64(c) << (8 * (i % 8))
		}
		if m%64 != 0 && words[len(words)-1]>>(m%64) != 0 {
			d.fail() // bits past m
			return nil, 0
		}
		return bloom.FromWithM(words, uint(m), uint(k)), chunks
	}
	count := d.int(m)
	rb := d.bytes(1)
	if d.err != nil || rb[0] > maxRice || count*(int(rb[0])+1) > 8*len(d.b) {
		d.fail()
		return nil, 0
	}
	r := uint(rb[0])
	words := make([]uint64, (m+63)/64)
	pos := -1
	br := bitReader{b: d.b}
	for range count {
		q, ok := br.unary(m)
		if !ok {
			d.fail()
			return nil, 0
		}
		low, ok := br.bits(r)
		if !ok {
			d.fail()
			return nil, 0
		}
		pos += q<<r | low + 1
		if pos >= m {
			d.fail()
			return nil, 0
		}
		words[pos/64] |= 1 << (pos % 64)
	}
	bit := br.pos
	used := (bit + 7) / 8
	// Padding bits must be zero, so every filter has one encoding.
	if bit%8 != 0 && d.b[bit/8]>>(bit%8) != 0 {
		d.fail()
		return nil, 0
	}
	d.b = d.b[used:]
	return bloom.FromWithM(words, uint(m), uint(k)), chunks
}

// bitReader reads the LSB-first bit stream written by bitWriter.
type bitReader struct {
	b   []byte
	pos int // next bit
}

// unary reads ones up to a zero and returns their count; it fails past
// limit ones or at the end of the data.
func (r *bitReader) unary(limit int) (int, bool) {
	q := 0
	for {
		i := r.pos >> 3
		if i >= len(r.b) {
			return 0, false
		}
		v := r.b[i] >> (r.pos & 7)
		// Count the ones available in this byte at once.
		ones := bits.TrailingZeros8(^v)
		avail := 8 - r.pos&7
		if ones < avail {
			r.pos += ones + 1
			return q + ones, true
		}
		q += avail
		r.pos += avail
		if q > limit {
			return 0, false
		}
	}
}

// bits reads n bits, least significant first.
func (r *bitReader) bits(n uint) (int, bool) {
	if r.pos+int(n) > 8*len(r.b) {
		return 0, false
	}
	v := 0
	for i := range n {
		p := r.pos + int(i)
		v |= int(r.b[p>>3]>>(p&7)&1) << i
	}
	r.pos += int(n)
	return v, true
}
