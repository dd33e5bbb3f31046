package pipeline

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/zeebo/xxh3"
)

// grouped holds batches by group, as a grouping hands them to a step.
type grouped map[int][][]byte

// add is an emit function that adds a batch to group g.
func (gs grouped) add(g int, b []byte) { gs[g] = append(gs[g], b) }

// values iterates over group g's batches, as a grouping's values.
func (gs grouped) values(g int) func(*[]byte) bool {
	vs := gs[g]
	return func(p *[]byte) bool {
		if len(vs) == 0 {
			return false
		}
		*p, vs = vs[0], vs[1:]
		return true
	}
}

// members decodes every group's Members.
func (gs grouped) members(t *testing.T) map[int][]Member {
	t.Helper()
	out := map[int][]Member{}
	for g := range gs {
		ms, err := readBatches[Member](nil, gs.values(g))
		if err != nil {
			t.Fatal(err)
		}
		out[g] = ms
	}
	return out
}

// idsByHand runs rankIDs' steps on ranked, its groupings done by hand.
func idsByHand(t *testing.T, ranked grouped, packs int, keepSig bool) grouped {
	t.Helper()
	var sample []string
	for g := range ranked {
		for _, b := range ranked[g] {
			if err := sampleFn(0, b, func(k string) { sample = append(sample, k) }); err != nil {
				t.Fatal(err)
			}
		}
	}
	byRange := grouped{}
	(&splittersFn{Ranges: packs, Groups: packs}).ProcessElement(0, func(k *string) bool {
		if len(sample) == 0 {
			return false
		}
		*k, sample = sample[0], sample[1:]
		return true
	}, func(g int, b []byte) { ranked.add(g, b) })
	for g := range packs {
		if err := (&rangeFn{}).ProcessElement(g, ranked.values(g), byRange.add); err != nil {
			t.Fatal(err)
		}
	}
	ided := grouped{}
	for r := range packs {
		if err := (&idFn{Packs: packs, KeepSig: keepSig}).ProcessElement(r, byRange.values(r), ided.add); err != nil {
			t.Fatal(err)
		}
	}
	return ided
}

// TestRankIDsKeys: the assign pipeline's pages get compact IDs keyed by
// their document keys (rankIDs with keepSig). The IDs are 8 bytes, spread
// over several ranges, and compare as the keys (so that every bucket's
// order, representative and component root is the same as under the
// keys), and each document keeps its signature, in its signature's
// group; without keepSig (the dedup pipeline) the signature is dropped.
func TestRankIDsKeys(t *testing.T) {
	const packs, n = 4, 600
	ranked := grouped{}
	var b batcher[Member, *Member]
	sigs := map[string][]byte{}
	for i := range n {
		// Keys whose order is not their numbers' (9 before 10 as text).
		key := fmt.Sprintf("http://127.0.0.1:40087/llvm-%d/page-%d.html", i%7, i)
		sig := []byte(fmt.Sprintf("signature of page %d", i%50)) // copies share one
		sigs[key] = sig
		b.add(pack(key, packs), &Member{Key: key, Doc: Doc{Key: key, Sig: sig, SigHash: xxh3.Hash(sig), Usable: true}})
	}
	b.flush(ranked.add)
	for _, keepSig := range []bool{true, false} {
		// The ranked batches are consumed by hand: a fresh copy each time.
		in := grouped{}
		for g, bs := range ranked {
			in[g] = slices.Clone(bs)
		}
		var all []Member
		ranges := map[uint64]bool{}
		for g, ms := range idsByHand(t, in, packs, keepSig).members(t) {
			for _, m := range ms {
				if len(m.Key) != 8 {
					t.Fatalf("ID %q: %d bytes, want 8", m.Key, len(m.Key))
				}
				if want := int(m.Doc.SigHash % packs); g != want {
					t.Errorf("%s in group %d, its signature's is %d", m.Doc.Key, g, want)
				}
				if keepSig && !bytes.Equal(m.Doc.Sig, sigs[m.Doc.Key]) || !keepSig && m.Doc.Sig != nil {
					t.Errorf("%s: signature %q (keepSig %v)", m.Doc.Key, m.Doc.Sig, keepSig)
				}
				ranges[uint64(m.Key[0])<<24|uint64(m.Key[1])<<16|uint64(m.Key[2])<<8|uint64(m.Key[3])] = true
				all = append(all, m)
			}
		}
		if len(all) != n {
			t.Fatalf("%d documents with IDs, want %d", len(all), n)
		}
		if len(ranges) < 2 {
			t.Errorf("IDs of %d range(s), want several: the sample sort is not exercised", len(ranges))
		}
		byID := slices.Clone(all)
		slices.SortFunc(byID, func(a, b Member) int { return cmp.Compare(a.Key, b.Key) })
		byKey := slices.Clone(all)
		slices.SortFunc(byKey, func(a, b Member) int { return cmp.Compare(a.Doc.Key, b.Doc.Key) })
		for i := range byID {
			if byID[i].Doc.Key != byKey[i].Doc.Key || i > 0 && byID[i].Key == byID[i-1].Key {
				t.Fatalf("ID order differs from key order at %d: %s by ID, %s by key", i, byID[i].Doc.Key, byKey[i].Doc.Key)
			}
		}
	}
}

// TestNewGroupFn: the components' labels, of compact IDs, go back to the
// pages' keys: each member of a component is labelled with the key of its
// smallest ID, which is its smallest key; a page in no component gets no
// label. A component whose root is not among its members is an error.
func TestNewGroupFn(t *testing.T) {
	const packs = 3
	// IDs in key order: a < b < c < d < e.
	keys := map[string]string{idKey(1): "a", idKey(2): "b", idKey(3): "c", idKey(4): "d", idKey(5): "e"}
	docs := func() grouped {
		var b batcher[Member, *Member]
		for id, k := range keys {
			b.add(pack(id, packs), &Member{Key: id, Doc: Doc{Key: k}})
		}
		gs := grouped{}
		b.flush(gs.add)
		return gs
	}
	labels := func(pairs [][2]uint64) grouped {
		var b batcher[Member, *Member]
		for _, p := range pairs {
			b.add(pack(idKey(p[0]), packs), &Member{Key: idKey(p[0]), Root: idKey(p[1]), Label: true})
		}
		gs := grouped{}
		b.flush(gs.add)
		return gs
	}
	newGroups := func(labels grouped) (map[string]string, error) {
		in := docs()
		for g, bs := range labels {
			in[g] = append(in[g], bs...)
		}
		members := grouped{}
		for g := range packs {
			if err := (&memberFn{Packs: packs}).ProcessElement(g, in.values(g), members.add); err != nil {
				t.Fatal(err)
			}
		}
		out := grouped{}
		for g := range packs {
			if err := (&newGroupFn{Packs: packs}).ProcessElement(g, members.values(g), out.add); err != nil {
				return nil, err
			}
		}
		got := map[string]string{}
		for g, ms := range out.members(t) {
			for _, m := range ms {
				if !m.Label || pack(m.Key, packs) != g {
					t.Errorf("label %+v in group %d", m, g)
				}
				got[m.Key] = m.Root
			}
		}
		return got, nil
	}
	// {b, d, e} rooted at b; {a, c} at a.
	got, err := newGroups(labels([][2]uint64{{2, 2}, {4, 2}, {5, 2}, {1, 1}, {3, 1}}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "a", "b": "b", "c": "a", "d": "b", "e": "b"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("labels %v, want %v", got, want)
	}
	// Only d and e labelled, with a root (b) that has no label.
	if _, err := newGroups(labels([][2]uint64{{4, 2}, {5, 2}})); err == nil {
		t.Error("a component without its root: no error")
	}
}
