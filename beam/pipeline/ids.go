package pipeline

import (
	"cmp"
	"encoding/binary"
	"slices"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/zeebo/xxh3"
)

// Compact document IDs. A document's rank key (offline.Ranking.Key: the
// winner rules' sort key, its URL and its key) orders it as BatchCluster
// orders it in `winnow dedup`, but it is about 80 bytes, and the candidate
// entries, pairs and edges carry two keys each: at a million documents,
// forty entries a document, that was most of what the runner held. Every
// document gets instead an 8-byte key in the same order, made by a sort
// spread over the workers (a sample sort): a sample of the rank keys
// (those whose hash is 0 mod sampleEvery) is sorted on one worker and cut
// into up to Packs ranges by evenly spaced splitters; each range is sorted
// on its own worker, and a document's ID is its range and its place in
// the range, big-endian, so that IDs compare as the rank keys do.

// sampleEvery is the sampling rate of the rank keys (one in sampleEvery):
// 31 k keys, 2.5 MB, for a million documents.
const sampleEvery = 32

// idKey is the key of compact ID id: 8 bytes, big-endian, so that keys
// compare as IDs.
func idKey(id uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], id)
	return string(b[:])
}

// rankIDs gives every ranked document (a Member keyed by its rank key)
// its compact ID, and returns the documents keyed by their IDs, grouped
// by ID, and the usable ones' KeySigs grouped by signature.
func rankIDs(s beam.Scope, ranked beam.PCollection, packs int) (docs, sigs beam.PCollection) {
	s = s.Scope("ids")
	sample := beam.ParDo(s, sampleFn, ranked)
	splitters := beam.ParDo(s, &splittersFn{Ranges: packs}, beam.GroupByKey(s, beam.AddFixedKey(s, sample)))
	byRange := beam.ParDo(s, &rangeFn{}, ranked, beam.SideInput{Input: splitters})
	return beam.ParDo2(s, &idFn{Packs: packs}, beam.GroupByKey(s, byRange))
}

// sampleFn emits the rank keys in the sample of a batch of Members.
func sampleFn(_ int, batch []byte, emit func(string)) error {
	return eachInBatch(batch, func(m *Member) {
		if xxh3.HashString(m.Key)%sampleEvery == 0 {
			emit(m.Key)
		}
	})
}

// splittersFn sorts the sample and emits up to Ranges-1 evenly spaced
// distinct splitters.
type splittersFn struct {
	Ranges int
}

func (f *splittersFn) ProcessElement(_ int, values func(*string) bool, emit func(string)) {
	var keys []string
	var k string
	for values(&k) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	last := ""
	for j := 1; j < f.Ranges; j++ {
		i := j * len(keys) / f.Ranges
		if i == 0 || keys[i] == last {
			continue
		}
		last = keys[i]
		emit(last)
	}
}

// rangeFn sends each document to its range: range r holds the rank keys
// from splitter r-1 (included) to splitter r (excluded).
type rangeFn struct {
	splitters []string
	loaded    bool
	out       batcher[Member, *Member]
}

func (f *rangeFn) ProcessElement(_ int, batch []byte, splitters func(*string) bool, emit func(int, []byte)) error {
	if !f.loaded {
		// The side input is one set for the whole (globally windowed)
		// job: read it once per worker.
		var s string
		for splitters(&s) {
			f.splitters = append(f.splitters, s)
		}
		slices.Sort(f.splitters)
		f.loaded = true
	}
	err := eachInBatch(batch, func(m *Member) {
		r := sort.Search(len(f.splitters), func(i int) bool { return f.splitters[i] > m.Key })
		f.out.add(r, m)
	})
	f.out.flush(emit)
	return err
}

// idFn numbers the documents of a range in rank-key order and emits them
// under their compact IDs, as signShards emits them.
type idFn struct {
	Packs int

	docs batcher[Member, *Member]
	sigs batcher[KeySig, *KeySig]
}

func (f *idFn) ProcessElement(r int, values func(*[]byte) bool, emitDocs func(int, []byte), emitSigs func(int, []byte)) error {
	ms, err := readBatches[Member](nil, values)
	if err != nil {
		return err
	}
	slices.SortFunc(ms, func(a, b Member) int { return cmp.Compare(a.Key, b.Key) })
	for i, m := range ms {
		if !m.Doc.Usable {
			// Never in a pair, so never in a cluster: `winnow dedup`
			// writes no line for it.
			continue
		}
		k := idKey(uint64(r)<<32 | uint64(i))
		// What placed the document in input order is spent; the
		// document waits for its component's label from here on.
		d := m.Doc
		d.BaseKey, d.Input, d.Shard, d.Pos = "", 0, 0, 0
		f.docs.add(pack(k, f.Packs), &Member{Key: k, Doc: d})
		f.sigs.add(pack(string(d.Sig), f.Packs), &KeySig{Key: k, Sig: d.Sig})
	}
	f.docs.flush(emitDocs)
	f.sigs.flush(emitSigs)
	return nil
}
