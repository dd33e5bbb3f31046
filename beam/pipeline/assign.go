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
	"github.com/zeebo/xxh3"

	"github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/cluster/partition"
	"github.com/winnow-search/winnow/similarity"
)

// The incremental tier 2 of Zhu et al. §5 ([Assign]): a new crawl is
// compared with the winners of the existing groups (as exported by
// cluster.ExportWinners, the service's GET /v1/winners) in the length
// partitions that the bound of package partition allows for each page; a
// page joins the group whose winner it matches best (highest Jaccard,
// then smallest group ID, as the cluster service's tier 2), and the pages
// that match no group are clustered among themselves as [Dedup] clusters
// them (in its two rounds), each component a new group. A winner stands
// under its candidate keys in its own partition, a page under its keys
// with every partition its bound allows ([probe]).

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
	wProbes, wSigs := beam.ParDo2(s, &winnersFn{keysFn: keysOf}, beam.Create(s, o.Groups))
	pProbes, pSigs := beam.ParDo2(s, &pageKeysFn{keysFn: keysOf}, keySigs)
	pairs := beam.ParDo(s, &probeFn{Window: similarity.DefaultBatchMaxBucket, Packs: o.Packs},
		beam.GroupByKey(s, beam.Flatten(s, wProbes, pProbes)))
	halves := beam.ParDo(s, &halfFn{Packs: o.Packs}, beam.GroupByKey(s, beam.Flatten(s, wSigs, pairs)))
	assigned, rest := beam.ParDo2(s, &matchFn{Config: enc, Packs: o.Packs}, beam.GroupByKey(s, beam.Flatten(s, pSigs, halves)))
	// The pages that joined no group cluster among themselves, under
	// compact IDs in key order (ids.go, the keys as rank keys), as the
	// dedup pipeline's documents: the pairs, edges and labels carry two
	// nodes each, and as the Debian crawl's 58-byte keys they held most
	// of the job's memory (docs/beam.md). The IDs compare as the keys,
	// so every bucket's order, representative and component root is the
	// same; the roots go back to keys for the lines (newGroupFn).
	ided := rankIDs(s, rest, o.Packs, true)
	edges, idDocs := candidateEdges(s, enc, ided, o.Options)
	labels := components(s, "", edges, o.Rounds, o.Packs, o.SmallEdges)
	members := beam.ParDo(s, &memberFn{Packs: o.Packs}, beam.GroupByKey(s, beam.Flatten(s, idDocs, labels)))
	newGroups := beam.ParDo(s, &newGroupFn{Packs: o.Packs}, beam.GroupByKey(s, members))
	parts := beam.ParDo(s, &assignLineFn{Path: o.Output}, beam.GroupByKey(s, beam.Flatten(s, docs, newGroups, assigned)))
	mergeParts(s, parts, o.Output)
	return nil
}

// keysFn emits the candidate keys of a signature.
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

// parts is the number of partitions.
func (f *keysFn) parts() int {
	if f.part == nil {
		return 1
	}
	return f.part.Parts()
}

// emit calls fn with every candidate key of s.
func (f *keysFn) emit(s *similarity.Signature, fn func(bucket string)) {
	var keys []string
	keys, f.mega = tableKeys(keys, f.mega, s, f.SimhashK, f.BandRows)
	// The sentence fingerprints (Huang et al.), as the cluster service's
	// tables: they find drifted versions of a page whose min-hash Jaccard
	// fell below the bands' reach.
	for _, fp := range s.Fingerprints {
		keys = append(keys, bucketKey(fingerprintTable, uint64(fp)))
	}
	for _, k := range keys {
		fn(k)
	}
}

// probe is a winner or a page of the new crawl under one candidate key
// (Bucket). A winner stands in its own partition (Part); a page probes
// every partition its bound allows (Parts, a bitmap by partition
// number). A page and a winner under one key are a candidate pair when
// the page probes the winner's partition. One probe a key, not one a
// key and partition: a page of the Debian crawl's newer releases probed
// 21.7 of the 64 partitions of 2,100 groups on average.
type probe struct {
	Bucket, Key string
	Winner      bool
	Part        int
	Parts       []uint64
}

// has reports whether the page p probes partition q.
func (p *probe) has(q int) bool { return q/64 < len(p.Parts) && p.Parts[q/64]>>(q%64)&1 == 1 }

func (p *probe) appendTo(b []byte) []byte {
	b = appendString(b, p.Bucket)
	b = appendString(b, p.Key)
	if p.Winner {
		b = append(b, 1)
		return binary.AppendUvarint(b, uint64(p.Part))
	}
	b = append(b, 0)
	b = binary.AppendUvarint(b, uint64(len(p.Parts)))
	for _, w := range p.Parts {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

func (p *probe) readFrom(b []byte) ([]byte, error) {
	var err error
	if p.Bucket, b, err = readString(b); err != nil {
		return b, err
	}
	if p.Key, b, err = readString(b); err != nil {
		return b, err
	}
	if len(b) < 1 {
		return b, errBatch
	}
	p.Winner, b = b[0] == 1, b[1:]
	n, w := binary.Uvarint(b)
	if w <= 0 {
		return b, errBatch
	}
	b = b[w:]
	if p.Winner {
		p.Part = int(n)
		return b, nil
	}
	if uint64(len(b)/8) < n {
		return b, errBatch
	}
	p.Parts = make([]uint64, n)
	for i := range p.Parts {
		p.Parts[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return b[8*n:], nil
}

// winnersFn reads the groups file and emits each winner's keys in its own
// partition, and its signature: with a signature store (sigstore.go), its
// reference. A winner's signature goes on to every page it meets in a
// bucket (halfFn, for matchFn): on the Debian crawl's newer releases
// against its older releases' 2,100 groups, those copies (9.7 KB each)
// were most of the job's peak memory (docs/beam.md).
type winnersFn struct {
	keysFn

	probes batcher[probe, *probe]
	sigs   batcher[Join, *Join]
}

func (f *winnersFn) ProcessElement(ctx context.Context, path string, emitProbes, emitSigs func(int, []byte)) error {
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
	var store sigWriter
	defer store.close()
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
			part := 0
			if f.part != nil {
				part = f.part.Partition(s.Lengths)
			}
			f.emit(&s, func(b string) {
				f.probes.add(pack(b, f.Packs), &probe{Bucket: b, Key: key, Winner: true, Part: part})
			})
			sig := l.Signature
			if dir := sigStoreDir(); dir != "" {
				ref, err := store.add(dir, sig)
				if err != nil {
					return err
				}
				sig = ref
			}
			f.sigs.add(pack(key, f.Packs), &Join{Key: key, Kind: joinSig, Sig: sig})
			f.probes.flushOver(batchLimit, emitProbes)
			f.sigs.flushOver(batchLimit, emitSigs)
		}
		if errors.Is(err, io.EOF) {
			// The stored signatures are read only after groupings that
			// wait for this bundle: closing the file here is soon enough.
			if err := store.close(); err != nil {
				return err
			}
			f.probes.flush(emitProbes)
			f.sigs.flush(emitSigs)
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// pageKeysFn emits each new page's keys, with the partitions its bound
// allows, and its signature.
type pageKeysFn struct {
	keysFn

	probes batcher[probe, *probe]
	sigs   batcher[Join, *Join]
}

func (f *pageKeysFn) ProcessElement(_ int, batch []byte, emitProbes, emitSigs func(int, []byte)) error {
	var err error
	if e := eachInBatch(batch, func(ks *KeySig) {
		if err == nil {
			err = f.page(ks)
		}
	}); e != nil {
		return e
	}
	f.probes.flush(emitProbes)
	f.sigs.flush(emitSigs)
	return err
}

func (f *pageKeysFn) page(ks *KeySig) error {
	var s similarity.Signature
	if err := s.UnmarshalBinary(ks.Sig); err != nil {
		return err
	}
	parts := make([]uint64, (f.parts()+63)/64)
	if f.part == nil {
		parts[0] = 1
	} else {
		for _, q := range f.part.Candidates(s.Lengths, f.Tau) {
			parts[q/64] |= 1 << (q % 64)
		}
	}
	f.emit(&s, func(b string) {
		f.probes.add(pack(b, f.Packs), &probe{Bucket: b, Key: ks.Key, Parts: parts})
	})
	f.sigs.add(pack(ks.Key, f.Packs), &Join{Key: ks.Key, Kind: joinSig, Sig: ks.Sig})
	return nil
}

// probeFn pairs, in each bucket, every page with the winners of each
// partition it probes (at most Window of a partition, the smallest group
// keys; the rest counted as capped).
type probeFn struct {
	Window, Packs int

	capped beam.Counter
	pairs  batcher[Join, *Join]
}

func (f *probeFn) Setup() { f.capped = beam.NewCounter(metricNS, "bucket_pairs_capped") }

func (f *probeFn) ProcessElement(ctx context.Context, _ int, values func(*[]byte) bool, emit func(int, []byte)) error {
	ps, err := readBatches[probe](nil, values)
	if err != nil {
		return err
	}
	// By bucket, the winners first, by partition and key, then the pages.
	slices.SortFunc(ps, func(a, b probe) int {
		return cmp.Or(cmp.Compare(a.Bucket, b.Bucket), -cmpBool(a.Winner, b.Winner), cmp.Compare(a.Part, b.Part), cmp.Compare(a.Key, b.Key))
	})
	var capped int64
	runs(ps, func(p *probe) string { return p.Bucket }, func(run []probe) {
		capped += probePairs(run, f.Window, func(g, p string) {
			f.pairs.add(pack(g, f.Packs), &Join{Key: g, Kind: joinPair, Other: p})
		})
	})
	if capped > 0 {
		f.capped.Inc(ctx, capped)
	}
	f.pairs.flush(emit)
	return nil
}

// probePairs calls pair with each winner and page of one bucket's
// probes, sorted as probeFn sorts them, that are a candidate pair: the
// page probes the winner's partition, and the winner is among the first
// window of its partition. It returns the pairs left out by the window.
func probePairs(run []probe, window int, pair func(winner, page string)) (capped int64) {
	w := 0
	for w < len(run) && run[w].Winner {
		w++
	}
	winners, pages := run[:w], run[w:]
	for i := 0; i < len(winners); {
		j := i + 1
		for j < len(winners) && winners[j].Part == winners[i].Part {
			j++
		}
		q, ws := winners[i].Part, winners[i:j]
		i = j
		probing := 0
		for k := range pages {
			if !pages[k].has(q) {
				continue
			}
			probing++
			for _, g := range ws[:min(len(ws), window)] {
				pair(g.Key, pages[k].Key)
			}
		}
		if len(ws) > window {
			capped += int64((len(ws) - window) * probing)
		}
	}
	return capped
}

// matchFn decides a page against the winners that reached it and assigns
// it to the best match; a page that matches none goes on to be clustered
// with the others, as a Member keyed by its key for rankIDs (its Doc
// holding the key and the signature, or with a signature store its
// reference: its copies go on with its pairs, as dedup's do).
type matchFn struct {
	Config []byte
	Packs  int

	set      *settings
	assigned batcher[Member, *Member]
	rest     batcher[Member, *Member]
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
	var store sigReader // the winners' signatures, if stored
	defer store.close()
	var pages sigWriter // the rest's signatures, with a store
	defer pages.close()
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
			var sig []byte
			if sig, err = store.sig(h.Sig); err != nil {
				return
			}
			var w similarity.Signature
			if err = w.UnmarshalBinary(sig); err != nil {
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
			sig := run[0].Sig
			d := Doc{Key: key, Sig: sig, SigHash: xxh3.Hash(sig), Usable: true}
			if dir := sigStoreDir(); dir != "" {
				if d.Sig, err = pages.add(dir, sig); err != nil {
					return
				}
			}
			f.rest.add(pack(key, f.Packs), &Member{Key: key, Doc: d})
			return
		}
		f.assigned.add(pack(key, f.Packs), &Member{Key: key, Root: best, Label: true, Doc: Doc{Pos: int64(bestJ * 1e9)}})
	})
	// The stored signatures are read only after groupings that wait for
	// this bundle: closing the file here is soon enough.
	if cerr := pages.close(); err == nil {
		err = cerr
	}
	f.rest.flush(emitRest)
	f.assigned.flush(emitAssigned)
	return err
}

// errNoRoot reports a component whose root (its smallest ID) is not
// among its members: a bug, or a runner that lost elements.
var errNoRoot = errors.New("pipeline: a new group's first page is not among its members")

// newGroupFn labels each page of a new group with the key of the group's
// first page. Its group holds the components' members from memberFn:
// keyed by compact ID, Root the smallest ID of their component, the Doc
// holding the page's key (idSigFn). The IDs compare as the keys, so the
// member whose ID is the root has the smallest key. It emits the labels
// ([Member]s with Label, keyed by key) grouped by key, for assignLineFn.
type newGroupFn struct {
	Packs int

	labels batcher[Member, *Member]
}

func (f *newGroupFn) ProcessElement(_ int, values func(*[]byte) bool, emit func(int, []byte)) error {
	ms, err := readBatches[Member](nil, values)
	if err != nil {
		return err
	}
	slices.SortFunc(ms, func(a, b Member) int { return cmp.Or(cmp.Compare(a.Root, b.Root), cmp.Compare(a.Key, b.Key)) })
	runs(ms, func(m *Member) string { return m.Root }, func(run []Member) {
		if err == nil && run[0].Key != run[0].Root {
			err = errNoRoot
		}
		if err != nil {
			return
		}
		first := run[0].Doc.Key
		for i := range run {
			k := run[i].Doc.Key
			f.labels.add(pack(k, f.Packs), &Member{Key: k, Root: first, Label: true})
		}
	})
	f.labels.flush(emit)
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
