package partition

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// EncodingVersion is the version byte of the binary encoding written by
// [Partitioner.MarshalBinary].
const EncodingVersion = 1

// ErrCorrupt is returned by [Partitioner.UnmarshalBinary] for data that is
// not a valid encoding of this [EncodingVersion].
var ErrCorrupt = errors.New("partition: corrupt partitioner encoding")

// Encoding, version 1; integers are unsigned varints:
//
//	version  byte = EncodingVersion
//	dims, then dims factors
//	the cuts of each dimension in order: for dimension k, the product of
//	factors[:k] nodes of factors[k]−1 cuts each (P−1 cuts in all)

// MarshalBinary encodes p; it implements [encoding.BinaryMarshaler]. The
// encoding takes about P−1 varints.
func (p *Partitioner) MarshalBinary() ([]byte, error) {
	return p.AppendBinary(make([]byte, 0, 8+3*p.parts))
}

// AppendBinary appends the encoding of p to b, as [Partitioner.MarshalBinary]
// returns it; it implements [encoding.BinaryAppender].
func (p *Partitioner) AppendBinary(b []byte) ([]byte, error) {
	if p == nil || p.dims == 0 {
		return b, errors.New("partition: cannot encode a zero Partitioner")
	}
	b = append(b, EncodingVersion)
	b = binary.AppendUvarint(b, uint64(p.dims))
	for _, f := range p.factors {
		b = binary.AppendUvarint(b, uint64(f))
	}
	for _, cs := range p.cuts {
		for _, c := range cs {
			b = binary.AppendUvarint(b, uint64(c))
		}
	}
	return b, nil
}

// UnmarshalBinary decodes data written by [Partitioner.MarshalBinary] into
// p; it implements [encoding.BinaryUnmarshaler]. It fails with
// [ErrCorrupt] for any other data and leaves p unchanged then. It does not
// retain data.
func (p *Partitioner) UnmarshalBinary(data []byte) error {
	if len(data) == 0 || data[0] != EncodingVersion {
		return fmt.Errorf("%w: not version %d", ErrCorrupt, EncodingVersion)
	}
	d := data[1:]
	next := func(limit uint64) (uint64, bool) {
		v, n := binary.Uvarint(d)
		if n <= 0 || v > limit {
			return 0, false
		}
		d = d[n:]
		return v, true
	}
	dims, ok := next(MaxDims)
	if !ok || dims == 0 {
		return fmt.Errorf("%w: dimensions", ErrCorrupt)
	}
	q := Partitioner{dims: int(dims), parts: 1, factors: make([]int, dims), cuts: make([][]uint32, dims)}
	for k := range q.factors {
		f, ok := next(MaxParts)
		if !ok || f < 2 || q.parts*int(f) > MaxParts {
			return fmt.Errorf("%w: factors", ErrCorrupt)
		}
		q.factors[k] = int(f)
		q.parts *= int(f)
	}
	nodes := 1
	for k, f := range q.factors {
		cs := make([]uint32, nodes*(f-1))
		for i := range cs {
			c, ok := next(1<<32 - 1)
			if !ok {
				return fmt.Errorf("%w: cuts", ErrCorrupt)
			}
			cs[i] = uint32(c)
		}
		for n := range nodes {
			if !slices.IsSorted(cs[n*(f-1) : (n+1)*(f-1)]) {
				return fmt.Errorf("%w: cuts not ascending", ErrCorrupt)
			}
		}
		q.cuts[k] = cs
		nodes *= f
	}
	if len(d) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(d))
	}
	*p = q
	return nil
}
