package pipeline

import (
	"encoding/binary"
	"errors"
	"maps"
	"math"
	"slices"
)

// Batches. The runner holds every element between two steps with a
// header of its own (prism: about 250 bytes of window, timestamp, pane
// and key), which for the forty candidate entries of each document, a
// few dozen bytes each, was most of the job's memory. The high-volume
// steps therefore send batches: a DoFn appends the compact encoding of
// each element to the buffer of its destination group (pack) and emits
// one []byte per group when its input group is done, and the next step
// decodes them. Elements keep their own sort keys, so batching changes
// no result.

// errBatch reports a batch that does not decode: a bug, or a runner
// that corrupted data.
var errBatch = errors.New("pipeline: corrupt batch")

// codec is a type's compact encoding in batches.
type codec[T any] interface {
	*T
	// appendTo appends the encoding of the value to b.
	appendTo(b []byte) []byte
	// readFrom decodes a value from the start of b and returns the rest.
	readFrom(b []byte) ([]byte, error)
}

// maxBatch is about the most bytes of one batch (one element more may
// cross it): a group's elements go in as many batches as they need. Flink
// sorts each GroupByKey's records in buffers of its managed memory, and a
// record larger than one buffer (about 3 MB under 512 MB) fails the job.
const maxBatch = 1 << 20

// batcher collects the encodings of elements by destination group.
type batcher[T any, P codec[T]] struct {
	bufs map[int][][]byte // the batches of each group, the last one filling
	size int              // bytes in bufs
}

// add appends v to the batch of group dest.
func (b *batcher[T, P]) add(dest int, v *T) {
	if b.bufs == nil {
		b.bufs = map[int][][]byte{}
	}
	bs := b.bufs[dest]
	if len(bs) == 0 || len(bs[len(bs)-1]) >= maxBatch {
		bs = append(bs, nil)
	}
	last := &bs[len(bs)-1]
	n := len(*last)
	*last = P(v).appendTo(*last)
	b.size += len(*last) - n
	b.bufs[dest] = bs
}

// flushOver flushes when the batches hold more than limit bytes, so that a
// DoFn that reads a large input holds at most about limit of its output.
func (b *batcher[T, P]) flushOver(limit int, emit func(int, []byte)) {
	if b.size > limit {
		b.flush(emit)
	}
}

// flush emits every batch and empties the batcher. With a spill
// directory (spill.go) the batches go to a file there and their
// references are emitted; a failure to write them panics, which fails
// the bundle (the runner retries it), since the emitting DoFns have no
// error to return at every flush.
func (b *batcher[T, P]) flush(emit func(int, []byte)) {
	dests := slices.Sorted(maps.Keys(b.bufs))
	if dir := spillDir(); dir != "" && len(dests) > 0 {
		var all [][]byte
		for _, dest := range dests {
			all = append(all, b.bufs[dest]...)
		}
		refs, err := spill(dir, all)
		if err != nil {
			panic(err)
		}
		for _, dest := range dests {
			n := len(b.bufs[dest])
			b.bufs[dest], refs = refs[:n], refs[n:]
		}
	}
	for _, dest := range dests {
		for _, batch := range b.bufs[dest] {
			emit(dest, batch)
		}
	}
	clear(b.bufs)
	b.size = 0
}

// readBatches appends to dst the elements of every batch of a group.
func readBatches[T any, P codec[T]](dst []T, values func(*[]byte) bool) ([]T, error) {
	var elem, buf []byte
	dir := spillDir()
	for values(&elem) {
		b, err := unspill(dir, elem, buf)
		if err != nil {
			return dst, err
		}
		if dir != "" {
			buf = b // the next spilled batch reuses the read buffer
		}
		for len(b) > 0 {
			var v T
			if b, err = P(&v).readFrom(b); err != nil {
				return dst, err
			}
			dst = append(dst, v)
		}
	}
	return dst, nil
}

// appendString appends s with its length.
func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// readString reads a string written by appendString.
func readString(b []byte) (string, []byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return "", b, errBatch
	}
	return string(b[w : w+int(n)]), b[w+int(n):], nil
}

func (e *Entry) appendTo(b []byte) []byte {
	b = appendString(b, e.Bucket)
	b = appendString(b, e.Key)
	if e.Rep == e.Key {
		// Most documents represent themselves: an empty Rep says so.
		b = appendString(b, "")
	} else {
		b = appendString(b, e.Rep)
	}
	return binary.LittleEndian.AppendUint64(b, e.Simhash)
}

func (e *Entry) readFrom(b []byte) ([]byte, error) {
	var err error
	if e.Bucket, b, err = readString(b); err != nil {
		return b, err
	}
	if e.Key, b, err = readString(b); err != nil {
		return b, err
	}
	if e.Rep, b, err = readString(b); err != nil {
		return b, err
	}
	if e.Rep == "" {
		e.Rep = e.Key
	}
	if len(b) < 8 {
		return b, errBatch
	}
	e.Simhash = binary.LittleEndian.Uint64(b)
	return b[8:], nil
}

func (j *Join) appendTo(b []byte) []byte {
	b = appendString(b, j.Key)
	b = append(b, byte(j.Kind))
	b = appendString(b, j.Other)
	return appendBytes(b, j.Sig)
}

func (j *Join) readFrom(b []byte) ([]byte, error) {
	var err error
	if j.Key, b, err = readString(b); err != nil {
		return b, err
	}
	if len(b) < 1 {
		return b, errBatch
	}
	j.Kind = int8(b[0])
	if j.Other, b, err = readString(b[1:]); err != nil {
		return b, err
	}
	j.Sig, b, err = readBytes(b)
	return b, err
}

// appendBytes appends b with its length.
func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// readBytes reads a copy of bytes written by appendBytes (nil when empty).
func readBytes(b []byte) ([]byte, []byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return nil, b, errBatch
	}
	var v []byte
	if n > 0 {
		v = slices.Clone(b[w : w+int(n)])
	}
	return v, b[w+int(n):], nil
}

// readUvarint reads an unsigned varint.
func readUvarint(b []byte) (uint64, []byte, error) {
	v, w := binary.Uvarint(b)
	if w <= 0 {
		return 0, b, errBatch
	}
	return v, b[w:], nil
}

const (
	docUsable = 1 << iota
	docCut
)

func (d *Doc) appendTo(b []byte) []byte {
	b = appendString(b, d.BaseKey)
	b = appendString(b, d.Key)
	b = appendString(b, d.ID)
	b = appendString(b, d.URL)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(d.Popularity))
	b = binary.AppendUvarint(b, uint64(d.Input))
	b = binary.AppendUvarint(b, uint64(d.Shard))
	b = binary.AppendUvarint(b, uint64(d.Pos))
	var flags byte
	if d.Usable {
		flags |= docUsable
	}
	if d.Cut {
		flags |= docCut
	}
	b = append(b, flags)
	b = binary.LittleEndian.AppendUint64(b, d.SigHash)
	return appendBytes(b, d.Sig)
}

func (d *Doc) readFrom(b []byte) ([]byte, error) {
	var err error
	for _, s := range []*string{&d.BaseKey, &d.Key, &d.ID, &d.URL} {
		if *s, b, err = readString(b); err != nil {
			return b, err
		}
	}
	if len(b) < 8 {
		return b, errBatch
	}
	d.Popularity = math.Float64frombits(binary.LittleEndian.Uint64(b))
	b = b[8:]
	var v [3]uint64
	for i := range v {
		if v[i], b, err = readUvarint(b); err != nil {
			return b, err
		}
	}
	d.Input, d.Shard, d.Pos = int(v[0]), int(v[1]), int64(v[2])
	if len(b) < 1 {
		return b, errBatch
	}
	d.Usable, d.Cut = b[0]&docUsable != 0, b[0]&docCut != 0
	if len(b) < 9 {
		return b, errBatch
	}
	d.SigHash = binary.LittleEndian.Uint64(b[1:])
	d.Sig, b, err = readBytes(b[9:])
	return b, err
}

func (m *Member) appendTo(b []byte) []byte {
	b = appendString(b, m.Key)
	b = appendString(b, m.Root)
	if m.Label {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = m.Doc.appendTo(b)
	b = appendString(b, m.Pair)
	return appendBytes(b, m.Verdict)
}

func (m *Member) readFrom(b []byte) ([]byte, error) {
	var err error
	if m.Key, b, err = readString(b); err != nil {
		return b, err
	}
	if m.Root, b, err = readString(b); err != nil {
		return b, err
	}
	if len(b) < 1 {
		return b, errBatch
	}
	m.Label = b[0] == 1
	if b, err = m.Doc.readFrom(b[1:]); err != nil {
		return b, err
	}
	if m.Pair, b, err = readString(b); err != nil {
		return b, err
	}
	m.Verdict, b, err = readBytes(b)
	return b, err
}

func (k *KeySig) appendTo(b []byte) []byte {
	b = appendString(b, k.Key)
	return appendBytes(b, k.Sig)
}

func (k *KeySig) readFrom(b []byte) ([]byte, error) {
	var err error
	if k.Key, b, err = readString(b); err != nil {
		return b, err
	}
	k.Sig, b, err = readBytes(b)
	return b, err
}

func (e *Edge) appendTo(b []byte) []byte {
	b = appendString(b, e.U)
	return appendString(b, e.V)
}

func (e *Edge) readFrom(b []byte) ([]byte, error) {
	var err error
	if e.U, b, err = readString(b); err != nil {
		return b, err
	}
	e.V, b, err = readString(b)
	return b, err
}

// eachInBatch calls fn with each element of one batch (or of the
// spilled batch it refers to).
func eachInBatch[T any, P codec[T]](b []byte, fn func(P)) error {
	b, err := unspill(spillDir(), b, nil)
	if err != nil {
		return err
	}
	for len(b) > 0 {
		var v T
		if b, err = P(&v).readFrom(b); err != nil {
			return err
		}
		fn(&v)
	}
	return nil
}
