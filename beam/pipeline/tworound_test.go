package pipeline

import (
	"context"
	"slices"
	"testing"
)

// TestJoinedFn shows the second round's filter: a pair whose documents
// the first round's components join is dropped, once however many
// buckets made it; a pair of two components, or of a document without a
// label, goes on to be decided.
func TestJoinedFn(t *testing.T) {
	const packs = 3
	var rest batcher[Member, *Member]
	for _, p := range [][2]string{{"a", "b"}, {"a", "b"}, {"a", "c"}, {"b", "d"}, {"d", "e"}} {
		addRest(&rest, &Entry{Rep: p[0]}, &Entry{Rep: p[1]}, packs)
	}
	groups := func(bs ...*batcher[Member, *Member]) map[int][][]byte {
		g := map[int][][]byte{}
		for _, b := range bs {
			b.flush(func(k int, v []byte) { g[k] = append(g[k], v) })
		}
		return g
	}
	run := func(f *joinedFn, in map[int][][]byte, extra ...map[int][][]byte) map[int][][]byte {
		t.Helper()
		f.Setup()
		for _, e := range extra {
			for k, v := range e {
				in[k] = append(in[k], v...)
			}
		}
		out := map[int][][]byte{}
		for g := range packs {
			vs := in[g]
			err := f.ProcessElement(context.Background(), g, func(p *[]byte) bool {
				if len(vs) == 0 {
					return false
				}
				*p, vs = vs[0], vs[1:]
				return true
			}, func(k int, v []byte) { out[k] = append(out[k], v) })
			if err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	// c has no label; a and b are joined, d and e too.
	labelGroups := func() map[int][][]byte {
		var l batcher[Member, *Member]
		for _, x := range [][2]string{{"a", "a"}, {"b", "a"}, {"d", "d"}, {"e", "d"}} {
			l.add(pack(x[0], packs), &Member{Key: x[0], Root: x[1], Label: true})
		}
		return groups(&l)
	}
	byQ := run(&joinedFn{Packs: packs}, groups(&rest), labelGroups())
	left := run(&joinedFn{Packs: packs, ByQ: true}, byQ, labelGroups())
	var got []string
	for _, vs := range left {
		js, err := readBatches[Join](nil, func(p *[]byte) bool {
			if len(vs) == 0 {
				return false
			}
			*p, vs = vs[0], vs[1:]
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range js {
			if j.Kind == joinPair {
				got = append(got, j.Key+"-"+j.Other)
			}
		}
	}
	slices.Sort(got)
	if want := []string{"a-c", "b-d"}; !slices.Equal(got, want) {
		t.Fatalf("pairs left %v, want %v", got, want)
	}
}
