package pipeline

import (
	"cmp"
	"encoding/binary"
	"slices"

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
//
// The splitters reach the documents through a grouping, not a side
// input: each group of documents receives a copy of them (Packs copies
// of up to Packs-1 keys). Flink's batch runner deadlocked on the side
// input at a million documents: the step that reads it waits for it
// before it takes any document, the documents' producer then blocks on
// that full pipe, and the sample that makes the splitters needs the
// producer to finish. A grouping takes in (and spills) all its input
// before it emits any.

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

// rankIDs gives every ranked document (a Member keyed by its rank key,
// in batches spread over packs groups) its compact ID, and returns the
// usable ones keyed by their IDs, grouped by their signatures' hash: for
// joinedEdges, without their signatures (they travel apart), or with
// keepSig with them (or their references), for candidateEdges. The assign
// pipeline ranks its pages by their document keys: its order.
func rankIDs(s beam.Scope, ranked beam.PCollection, packs int, keepSig bool) beam.PCollection {
	s = s.Scope("ids")
	sample := beam.ParDo(s, sampleFn, ranked)
	splitters := beam.ParDo(s, &splittersFn{Ranges: packs, Groups: packs}, beam.GroupByKey(s, beam.AddFixedKey(s, sample)))
	byRange := beam.ParDo(s, &rangeFn{}, beam.GroupByKey(s, beam.Flatten(s, ranked, splitters)))
	return beam.ParDo(s, &idFn{Packs: packs, KeepSig: keepSig}, beam.GroupByKey(s, byRange))
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
// distinct splitters to each of Groups groups, as a batch of Members
// (Label set, the splitter as Key).
type splittersFn struct {
	Ranges, Groups int
}

func (f *splittersFn) ProcessElement(_ int, values func(*string) bool, emit func(int, []byte)) {
	var keys []string
	var k string
	for values(&k) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out batcher[Member, *Member] // the one batch of each group
	last := ""
	for j := 1; j < f.Ranges; j++ {
		i := j * len(keys) / f.Ranges
		if i == 0 || keys[i] == last {
			continue
		}
		last = keys[i]
		for g := range f.Groups {
			out.add(g, &Member{Key: last, Label: true})
		}
	}
	// No sample (no batch): every document goes to range 0.
	out.flush(emit)
}

// rangeFn sends each document of its group to its range: range r holds
// the rank keys from splitter r-1 (included) to splitter r (excluded).
// The group's Members with Label set are the splitters.
type rangeFn struct {
	out batcher[Member, *Member]
}

func (f *rangeFn) ProcessElement(_ int, values func(*[]byte) bool, emit func(int, []byte)) error {
	ms, err := readBatches[Member](nil, values)
	if err != nil {
		return err
	}
	var splitters []string
	for i := range ms {
		if ms[i].Label {
			splitters = append(splitters, ms[i].Key)
		}
	}
	slices.Sort(splitters)
	splitters = slices.Compact(splitters)
	for i := range ms {
		if m := &ms[i]; !m.Label {
			r, _ := slices.BinarySearch(splitters, m.Key)
			if r < len(splitters) && splitters[r] == m.Key {
				r++ // a splitter starts its range
			}
			f.out.add(r, m)
		}
	}
	f.out.flush(emit)
	return nil
}

// idFn numbers the documents of a range in rank-key order and emits the
// usable ones under their compact IDs, to their signature's group; with
// KeepSig, with their signatures.
type idFn struct {
	Packs   int
	KeepSig bool

	docs batcher[Member, *Member]
}

func (f *idFn) ProcessElement(r int, values func(*[]byte) bool, emitDocs func(int, []byte)) error {
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
		// The input position stays: it meets the signature record.
		d := m.Doc
		d.BaseKey = ""
		if !f.KeepSig {
			d.Sig = nil
		}
		f.docs.add(int(d.SigHash%uint64(f.Packs)), &Member{Key: k, Doc: d})
	}
	f.docs.flush(emitDocs)
	return nil
}
