package pipeline

import (
	"encoding/binary"
	"errors"
	"maps"
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

// batcher collects the encodings of elements by destination group.
type batcher[T any, P codec[T]] struct {
	bufs map[int][]byte
}

// add appends v to the batch of group dest.
func (b *batcher[T, P]) add(dest int, v *T) {
	if b.bufs == nil {
		b.bufs = map[int][]byte{}
	}
	b.bufs[dest] = P(v).appendTo(b.bufs[dest])
}

// flush emits every batch and empties the batcher.
func (b *batcher[T, P]) flush(emit func(int, []byte)) {
	for _, dest := range slices.Sorted(maps.Keys(b.bufs)) {
		emit(dest, b.bufs[dest])
	}
	clear(b.bufs)
}

// readBatches appends to dst the elements of every batch of a group.
func readBatches[T any, P codec[T]](dst []T, values func(*[]byte) bool) ([]T, error) {
	var b []byte
	for values(&b) {
		for len(b) > 0 {
			var v T
			var err error
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
	b = appendString(b, e.Rep)
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
	b = binary.AppendUvarint(b, uint64(len(j.Sig)))
	return append(b, j.Sig...)
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
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return b, errBatch
	}
	j.Sig = nil
	if n > 0 {
		j.Sig = slices.Clone(b[w : w+int(n)])
	}
	return b[w+int(n):], nil
}
