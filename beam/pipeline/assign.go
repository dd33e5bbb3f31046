package pipeline

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/cluster/partition"
	"github.com/winnow-search/winnow/similarity"
)

// The incremental tier 2 of Zhu et al. §5 ([Assign]): a new crawl is
// compared with the winners of the existing groups (as exported by
// cluster.ExportWinners) in the length partitions that the bound of
// package partition allows for each page; a page joins the group whose
// winner it matches best (highest Jaccard, then smallest group ID, as the
// cluster service's tier 2), and the pages that match no group are
// clustered among themselves as [Dedup] clusters them, each component a
// new group. Candidate keys of this job carry the partition: a winner
// stands under its own partition, a page probes every partition its
// bound allows.

// fingerprintTable is the table of sentence fingerprints.
const fingerprintTable = 0xffff

// winnerPrefix starts the keys of existing groups' winners, which page
// keys (document IDs) do not start with.
const winnerPrefix = "\x00"

// AssignOptions configures [Assign].
type AssignOptions struct {
	Options
	// Groups is the JSON Lines file of cluster.WinnerLine.
	Groups string
	// Partitioner is the encoded partition.Partitioner of the winners'
	// length vectors (see [SamplePartitioner]); nil: one partition.
	Partitioner []byte
	// Tau is the similarity bound of the partitions probed. Zero means
	// cluster.DefaultTau.
	Tau float64
}

// SamplePartitioner builds the partitioner of the cluster service's
// defaults from the first cluster.DefaultSampleSize winners of the groups
// file at path; nil when it has fewer than two.
func SamplePartitioner(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var sample [][]uint32
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() && len(sample) < cluster.DefaultSampleSize {
		var l cluster.WinnerLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var s similarity.Signature
		if err := s.UnmarshalBinary(l.Signature); err != nil {
			return nil, fmt.Errorf("%s: group %s: %w", path, l.Group, err)
		}
		sample = append(sample, s.Lengths)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(sample) < 2 {
		return nil, nil
	}
	// The service's 64 partitions (4 splits of each of 3 dimensions), or
	// 8 for a sample too small to split that often.
	parts := cluster.DefaultParts
	if len(sample) < 4*parts {
		parts = 8
	}
	p, err := partition.New(cluster.DefaultDims, parts, sample)
	if err != nil {
		return nil, err
	}
	return p.MarshalBinary()
}

// Assignment is one output line of [Assign]: a page of the new crawl
// with the group it joins. Its url and signature are those of a
// client.Page, so the lines can be ingested by the cluster service.
type Assignment struct {
	URL       string `json:"url,omitempty"`
	ID        string `json:"id"`
	Signature []byte `json:"signature"`
	// Group is the existing group the page joins, "" for a new group.
	Group string `json:"group,omitempty"`
	// Winner is the existing group's winner URL.
	Winner string `json:"winner,omitempty"`
	// NewGroup is, for a page in a new group, the key of the group's
	// first page (its representative); "" for a page alone.
	NewGroup string `json:"new_group,omitempty"`
	// Jaccard is the min-hash Jaccard estimate against the winner joined.
	Jaccard float64 `json:"jaccard,omitempty"`
}

// Assign adds the tier-2 pipeline to s.
func Assign(s beam.Scope, o AssignOptions) error {
	o.Tau = cmp.Or(o.Tau, cluster.DefaultTau)
	if o.Groups == "" {
		return errors.New("pipeline: invalid options: no groups")
	}
	enc, err := o.Options.prepare()
	if err != nil {
		return err
	}
	docs, keySigs, _ := signShards(s, enc, o.Shards, o.Several, o.Packs, false, true)
	s = s.Scope("assign")
	k := similarity.DefaultBatchSimhashK
	keysOf := keysFn{SimhashK: k, BandRows: similarity.DefaultBatchBandRows, Partitioner: o.Partitioner, Tau: o.Tau, Packs: o.Packs}
	wEntries, wSigs := beam.ParDo2(s, &winnersFn{keysFn: keysOf}, beam.Create(s, o.Groups))
	pEntries, pSigs := beam.ParDo2(s, &pageKeysFn{keysFn: keysOf}, keySigs)
	pairs := beam.ParDo(s, &probeFn{Window: similarity.DefaultBatchMaxBucket, Packs: o.Packs},
		beam.GroupByKey(s, beam.Flatten(s, wEntries, pEntries)))
	halves := beam.ParDo(s, &halfFn{Packs: o.Packs}, beam.GroupByKey(s, beam.Flatten(s, wSigs, pairs)))
	assigned, rest := beam.ParDo2(s, &matchFn{Config: enc, Packs: o.Packs}, beam.GroupByKey(s, beam.Flatten(s, pSigs, halves)))
	// The pages that joined no group cluster among themselves.
	edges := candidateEdges(s, enc, rest, o.Options)
	labels := components(s, "", edges, o.Rounds, o.Packs, o.SmallEdges)
	parts := beam.ParDo(s, &assignLineFn{Path: o.Output}, beam.GroupByKey(s, beam.Flatten(s, docs, labels, assigned)))
	mergeParts(s, parts, o.Output)
	return nil
}

// keysFn emits the candidate keys of a signature under partitions.
type keysFn struct {
	SimhashK, BandRows, Packs int
	Partitioner               []byte
	Tau                       float64

	part *partition.Partitioner
	mega []uint64
}

func (f *keysFn) Setup() error {
	if f.Partitioner == nil {
		return nil
	}
	f.part = new(partition.Partitioner)
	return f.part.UnmarshalBinary(f.Partitioner)
}

// emit calls fn with every candidate key of s in the partitions parts
// (nil: the one partition).
func (f *keysFn) emit(s *similarity.Signature, parts []int, fn func(bucket string)) {
	if parts == nil {
		parts = []int{0}
	}
	var keys []string
	keys, f.mega = tableKeys(keys, f.mega, s, f.SimhashK, f.BandRows)
	// The sentence fingerprints (Huang et al.), as the cluster service's
	// tables: they find drifted versions of a page whose min-hash Jaccard
	// fell below the bands' reach.
	for _, fp := range s.Fingerprints {
		keys = append(keys, bucketKey(fingerprintTable, uint64(fp)))
	}
	for _, p := range parts {
		var pb [4]byte
		binary.BigEndian.PutUint32(pb[:], uint32(p))
		for _, k := range keys {
			fn(k + string(pb[:]))
		}
	}
}

// winnersFn reads the groups file and emits each winner's keys under its
// own partition, and its signature.
type winnersFn struct {
	keysFn

	sigs batcher[Join, *Join]
}

func (f *winnersFn) ProcessElement(ctx context.Context, path string, emitEntry func(int, Entry), emitSigs func(int, []byte)) error {
	fsys, err := filesystem.New(ctx, path)
	if err != nil {
		return err
	}
	defer fsys.Close()
	r, err := fsys.OpenRead(ctx, path)
	if err != nil {
		return err
	}
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var l cluster.WinnerLine
			if err := json.Unmarshal(line, &l); err != nil {
				return fmt.Errorf("%s: line %d: %w", path, n, err)
			}
			var s similarity.Signature
			if err := s.UnmarshalBinary(l.Signature); err != nil {
				return fmt.Errorf("%s: line %d: group %s: %w", path, n, l.Group, err)
			}
			key := winnerPrefix + l.Group + "\x00" + l.URL
			var parts []int
			if f.part != nil {
				parts = []int{f.part.Partition(s.Lengths)}
			}
			f.emit(&s, parts, func(b string) {
				emitEntry(pack(b, f.Packs), Entry{Bucket: b, Key: key, Rep: key, Simhash: s.Simhash})
			})
			f.sigs.add(pack(key, f.Packs), &Join{Key: key, Kind: joinSig, Sig: l.Signature})
		}
		if errors.Is(err, io.EOF) {
			f.sigs.flush(emitSigs)
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// pageKeysFn emits each new page's keys under every partition its bound
// allows, and its signature.
type pageKeysFn struct {
	keysFn

	sigs batcher[Join, *Join]
}

func (f *pageKeysFn) ProcessElement(_ int, batch []byte, emitEntry func(int, Entry), emitSigs func(int, []byte)) error {
	var err error
	if e := eachInBatch(batch, func(ks *KeySig) {
		if err == nil {
			err = f.page(ks, emitEntry)
		}
	}); e != nil {
		return e
	}
	f.sigs.flush(emitSigs)
	return err
}

func (f *pageKeysFn) page(ks *KeySig, emitEntry func(int, Entry)) error {
	var s similarity.Signature
	if err := s.UnmarshalBinary(ks.Sig); err != nil {
		return err
	}
	var parts []int
	if f.part != nil {
		parts = f.part.Candidates(s.Lengths, f.Tau)
	}
	f.emit(&s, parts, func(b string) {
		emitEntry(pack(b, f.Packs), Entry{Bucket: b, Key: ks.Key, Rep: ks.Key, Simhash: s.Simhash})
	})
	f.sigs.add(pack(ks.Key, f.Packs), &Join{Key: ks.Key, Kind: joinSig, Sig: ks.Sig})
	return nil
}

// probeFn pairs, in each bucket, every page with the winners (at most
// Window, the smallest group keys; the rest counted as capped).
type probeFn struct {
	Window, Packs int

	capped beam.Counter
	pairs  batcher[Join, *Join]
}

func (f *probeFn) Setup() { f.capped = beam.NewCounter(metricNS, "bucket_pairs_capped") }

func (f *probeFn) ProcessElement(ctx context.Context, _ int, values func(*Entry) bool, emit func(int, []byte)) {
	var es []Entry
	var e Entry
	for values(&e) {
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b Entry) int { return cmp.Or(cmp.Compare(a.Bucket, b.Bucket), cmp.Compare(a.Key, b.Key)) })
	runs(es, func(e *Entry) string { return e.Bucket }, func(run []Entry) {
		w := 0 // winners sort first (winnerPrefix)
		for w < len(run) && strings.HasPrefix(run[w].Key, winnerPrefix) {
			w++
		}
		if w > f.Window {
			f.capped.Inc(ctx, int64((w-f.Window)*(len(run)-w)))
		}
		for _, p := range run[w:] {
			for _, g := range run[:min(w, f.Window)] {
				f.pairs.add(pack(g.Key, f.Packs), &Join{Key: g.Key, Kind: joinPair, Other: p.Key})
			}
		}
	})
	f.pairs.flush(emit)
}

// matchFn decides a page against the winners that reached it and assigns
// it to the best match; a page that matches none goes on as a KeySig to
// be clustered with the others.
type matchFn struct {
	Config []byte
	Packs  int

	set      *settings
	assigned batcher[Member, *Member]
	rest     batcher[KeySig, *KeySig]
}

func (f *matchFn) Setup() error {
	s, err := decodeSettings(f.Config)
	f.set = s
	return err
}

func (f *matchFn) ProcessElement(_ int, values func(*[]byte) bool, emitAssigned func(int, []byte), emitRest func(int, []byte)) error {
	js, err := readBatches[Join](nil, values)
	if err != nil {
		return err
	}
	sortJoin(js)
	runs(js, func(j *Join) string { return j.Key }, func(run []Join) {
		if err != nil || run[0].Kind != joinSig {
			return
		}
		var page similarity.Signature
		if err = page.UnmarshalBinary(run[0].Sig); err != nil {
			return
		}
		// The exported winners carry no word sequence; decide as the
		// cluster service does, without the page's either.
		page.Seq = nil
		best, bestJ := "", 0.0
		for _, h := range run[1:] {
			var w similarity.Signature
			if err = w.UnmarshalBinary(h.Sig); err != nil {
				return
			}
			v := f.set.decision.Decide(&w, &page)
			if !v.Duplicate {
				continue
			}
			if best == "" || v.Scores.Jaccard > bestJ || v.Scores.Jaccard == bestJ && h.Other < best {
				best, bestJ = h.Other, v.Scores.Jaccard
			}
		}
		key := run[0].Key
		if best == "" {
			f.rest.add(pack(string(run[0].Sig), f.Packs), &KeySig{Key: key, Sig: run[0].Sig})
			return
		}
		f.assigned.add(pack(key, f.Packs), &Member{Key: key, Root: best, Label: true, Doc: Doc{Pos: int64(bestJ * 1e9)}})
	})
	f.rest.flush(emitRest)
	f.assigned.flush(emitAssigned)
	return err
}

// assignLineFn writes each page's line: its existing group, its new
// group, or none, to a part file of its group's lines (writePart).
type assignLineFn struct {
	// Path is the output; the part files go beside it.
	Path string
}

func (f *assignLineFn) ProcessElement(ctx context.Context, _ int, values func(*[]byte) bool, emit func(string)) error {
	ms, err := readBatches[Member](nil, values)
	if err != nil {
		return err
	}
	slices.SortFunc(ms, func(a, b Member) int { return cmp.Compare(a.Key, b.Key) })
	var lines []Line
	runs(ms, func(m *Member) string { return m.Key }, func(run []Member) {
		var a Assignment
		var doc *Doc
		for i := range run {
			m := &run[i]
			switch {
			case !m.Label:
				doc = &m.Doc
			case strings.HasPrefix(m.Root, winnerPrefix):
				group, winner, _ := strings.Cut(m.Root[len(winnerPrefix):], "\x00")
				a.Group, a.Winner, a.Jaccard = group, winner, float64(m.Doc.Pos)/1e9
			default:
				a.NewGroup = m.Root
			}
		}
		if doc == nil || err != nil {
			return
		}
		a.URL, a.ID, a.Signature = doc.URL, doc.ID, doc.Sig
		var b []byte
		if b, err = json.Marshal(a); err == nil {
			lines = append(lines, Line{Winner: run[0].Key, JSON: string(b) + "\n"})
		}
	})
	if err != nil {
		return err
	}
	return writePart(ctx, f.Path, lines, emit)
}
