package pipeline

import (
	"errors"
	"reflect"
	"testing"
)

// roundTrip encodes vs into batches of two groups and reads them back.
func roundTrip[T any, P codec[T]](t *testing.T, vs []T) {
	t.Helper()
	var b batcher[T, P]
	for i := range vs {
		b.add(i%2, &vs[i])
	}
	var batches [][]byte
	b.flush(func(_ int, batch []byte) { batches = append(batches, batch) })
	if len(batches) != min(2, len(vs)) || b.size != 0 {
		t.Fatalf("%d batches, size %d after flush; want %d, 0", len(batches), b.size, min(2, len(vs)))
	}
	i := 0
	got, err := readBatches[T, P](nil, func(p *[]byte) bool {
		if i == len(batches) {
			return false
		}
		*p = batches[i]
		i++
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []T // group 0 first, then group 1
	for g := range 2 {
		for k := g; k < len(vs); k += 2 {
			want = append(want, vs[k])
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v, want %+v", got, want)
	}
	// Every cut of a batch short of its end is an error, not a wrong value.
	for cut := 1; cut < len(batches[0]); cut++ {
		err := eachInBatch[T, P](batches[0][:cut], func(P) {})
		if err != nil && !errors.Is(err, errBatch) {
			t.Fatalf("cut at %d: %v, want errBatch", cut, err)
		}
	}
}

// TestBatchCodecs: every element type survives its batch encoding, field
// for field, and a cut batch fails with errBatch.
func TestBatchCodecs(t *testing.T) {
	doc := Doc{BaseKey: "in/a", Key: "in/a#1", ID: "a", URL: "https://a.example/", Popularity: -2.5,
		Input: 3, Shard: 7, Pos: 1 << 40, Sig: []byte{1, 2, 3}, Usable: true, Cut: true}
	roundTrip[Doc](t, []Doc{doc, {Key: "k"}, {Sig: []byte{0}}})
	roundTrip[Member](t, []Member{{Key: "\x00\x01", Root: "r", Label: true, Doc: Doc{Pos: 999}}, {Key: "x", Doc: doc}, {Key: "y", Root: "r", Pair: "x", Verdict: []byte{1, 0, 2}}})
	roundTrip[KeySig](t, []KeySig{{Key: "k", Sig: []byte("sig")}, {Key: "j"}})
	roundTrip[Entry](t, []Entry{{Bucket: "b", Key: "k", Rep: "k", Simhash: 1 << 63}, {Bucket: "c", Key: "k2", Rep: "r", Simhash: 5}})
	roundTrip[Join](t, []Join{{Key: "a", Kind: joinSig, Sig: []byte("s")}, {Key: "b", Kind: joinPair, Other: "c"}, {Key: "d", Kind: joinHalf, Other: "e", Sig: []byte{9}}})
	roundTrip[Edge](t, []Edge{{U: "u", V: "v"}, {U: "", V: "w"}})
	roundTrip[probe](t, []probe{{Bucket: "b", Key: "\x00g\x00u", Winner: true, Part: 300}, {Bucket: "b", Key: "p", Parts: []uint64{1<<63 | 5, 2}}})
}
