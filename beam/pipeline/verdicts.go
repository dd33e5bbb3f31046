package pipeline

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"

	"github.com/winnow-search/winnow/similarity"
)

// Verdicts carried from the decide step to the cluster step. decideFn
// decides every candidate pair that reaches it; clusterFn then clusters
// each component with similarity.BatchCluster, which decides its pairs
// and every member against its winner. A member's verdict against its
// winner is mostly one that decideFn already decided (the winner and
// the member shared a candidate bucket), and an LCS is most of a
// decision's cost, so decideFn sends the verdicts whose LCS ran, and
// every duplicate's, to the component of the pair's second document
// (memberFn), and clusterFn hands them to BatchCluster as its
// VerdictCache. A verdict is a function of the two signatures and the
// decision, the same on every worker, so the output does not change.

// keepVerdict reports whether decideFn sends v on: a duplicate (the
// verdicts against winners are mostly duplicates) or one whose LCS ran
// (the costly ones). Others are recomputed in a few microseconds.
func keepVerdict(v *similarity.Verdict) bool { return v.Duplicate || v.Scores.HasLCS }

// knownVerdicts is a similarity.VerdictCache holding one component's
// verdicts from decideFn, by the documents' representatives (exactFn: the
// smallest key among byte-identical signatures), so that a copy finds its
// original's verdicts. Read only once built: safe for concurrent use.
type knownVerdicts struct {
	rep  map[*similarity.Signature]string
	pair map[[2]string]similarity.Verdict
}

func (k *knownVerdicts) Verdict(a, b *similarity.Signature) (similarity.Verdict, bool) {
	ra, ok := k.rep[a]
	if !ok {
		return similarity.Verdict{}, false
	}
	rb, ok := k.rep[b]
	if !ok {
		return similarity.Verdict{}, false
	}
	v, ok := k.pair[[2]string{ra, rb}]
	return v, ok
}

// SetVerdict keeps nothing: BatchCluster keeps its own verdicts.
func (k *knownVerdicts) SetVerdict(*similarity.Signature, *similarity.Signature, similarity.Verdict) {
}

// appendVerdict appends the encoding of v to b.
func appendVerdict(b []byte, v *similarity.Verdict) []byte {
	return appendPlain(b, reflect.ValueOf(v).Elem())
}

// readVerdict decodes a verdict written by appendVerdict.
func readVerdict(b []byte) (similarity.Verdict, error) {
	var v similarity.Verdict
	rest, err := readPlain(b, reflect.ValueOf(&v).Elem())
	if err == nil && len(rest) != 0 {
		err = errBatch
	}
	return v, err
}

// appendPlain appends the encoding of v, plain data: booleans, numbers,
// strings, and slices, arrays, structs and pointers of them. Every bit of
// a float is kept (a NaN score stays the NaN it was); a nil slice or
// pointer stays nil. It panics on any other kind or an unexported field:
// a field added to similarity.Verdict that it cannot carry is a bug that
// the round-trip test shows.
func appendPlain(b []byte, v reflect.Value) []byte {
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return append(b, 1)
		}
		return append(b, 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendVarint(b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return binary.AppendUvarint(b, v.Uint())
	case reflect.Float32, reflect.Float64:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float()))
	case reflect.String:
		return appendString(b, v.String())
	case reflect.Slice:
		if v.IsNil() {
			return append(b, 0)
		}
		b = binary.AppendUvarint(b, uint64(v.Len())+1)
		for i := range v.Len() {
			b = appendPlain(b, v.Index(i))
		}
		return b
	case reflect.Array:
		for i := range v.Len() {
			b = appendPlain(b, v.Index(i))
		}
		return b
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if !t.Field(i).IsExported() {
				panic(fmt.Sprintf("pipeline: %s.%s: unexported field", t, t.Field(i).Name))
			}
			b = appendPlain(b, v.Field(i))
		}
		return b
	case reflect.Pointer:
		if v.IsNil() {
			return append(b, 0)
		}
		return appendPlain(append(b, 1), v.Elem())
	}
	panic(fmt.Sprintf("pipeline: %s: not plain data", v.Type()))
}

// readPlain decodes into v (settable) what appendPlain wrote and returns
// the rest of b.
func readPlain(b []byte, v reflect.Value) ([]byte, error) {
	switch v.Kind() {
	case reflect.Bool:
		if len(b) < 1 {
			return b, errBatch
		}
		v.SetBool(b[0] == 1)
		return b[1:], nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, w := binary.Varint(b)
		if w <= 0 {
			return b, errBatch
		}
		v.SetInt(x)
		return b[w:], nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x, rest, err := readUvarint(b)
		if err == nil {
			v.SetUint(x)
		}
		return rest, err
	case reflect.Float32, reflect.Float64:
		if len(b) < 8 {
			return b, errBatch
		}
		v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(b)))
		return b[8:], nil
	case reflect.String:
		s, rest, err := readString(b)
		if err == nil {
			v.SetString(s)
		}
		return rest, err
	case reflect.Slice:
		n, rest, err := readUvarint(b)
		if err != nil || n == 0 {
			return rest, err
		}
		if n-1 > uint64(len(rest)) {
			return b, errBatch // every element takes a byte at least
		}
		v.Set(reflect.MakeSlice(v.Type(), int(n-1), int(n-1)))
		for i := range int(n - 1) {
			if rest, err = readPlain(rest, v.Index(i)); err != nil {
				return rest, err
			}
		}
		return rest, nil
	case reflect.Array:
		var err error
		for i := range v.Len() {
			if b, err = readPlain(b, v.Index(i)); err != nil {
				return b, err
			}
		}
		return b, nil
	case reflect.Struct:
		var err error
		for i := range v.NumField() {
			if b, err = readPlain(b, v.Field(i)); err != nil {
				return b, err
			}
		}
		return b, nil
	case reflect.Pointer:
		if len(b) < 1 {
			return b, errBatch
		}
		if b[0] == 0 {
			return b[1:], nil
		}
		v.Set(reflect.New(v.Type().Elem()))
		return readPlain(b[1:], v.Elem())
	}
	panic(fmt.Sprintf("pipeline: %s: not plain data", v.Type()))
}
