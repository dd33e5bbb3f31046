package pipeline

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/winnow-search/winnow/internal/parallel"
	"github.com/winnow-search/winnow/similarity"
)

// KeySig is a usable document's key and signature encoding.
type KeySig struct {
	Key string
	Sig []byte
	// ref is the signature's reference in the signature store
	// (sigstore.go), which crosses on in its place; nil when it travels
	// inline. It never crosses itself.
	ref []byte
}

// Entry is one document under one candidate key (Bucket), with the
// representative of its signature (the smallest key among the documents
// whose signatures are byte-identical to it).
type Entry struct {
	Bucket, Key, Rep string
	Simhash          uint64
}

// Join is an element of the signature joins, keyed by Key: the document's
// signature (Kind joinSig), a candidate pair (Key, Other) (joinPair), a
// pair (Other, Key) carrying Other's signature (joinHalf), or the mark
// of a candidate pair (Other, Key) (joinSecond).
type Join struct {
	Key   string
	Kind  int8
	Other string
	Sig   []byte
}

const (
	joinSig int8 = iota
	joinPair
	joinHalf
	joinSecond
)

// addPair adds the candidate pair (p, q) of representatives to pairs:
// the pair to p's group, its mark to q's (see halfFn).
func addPair(pairs *batcher[Join, *Join], p, q string, packs int) {
	pairs.add(pack(p, packs), &Join{Key: p, Kind: joinPair, Other: q})
	pairs.add(pack(q, packs), &Join{Key: q, Kind: joinSecond, Other: p})
}

// Block is a slice of a hot bucket in key order: its pairs are those
// ending at an entry from Cur on, starting at most Window entries before.
type Block struct {
	Entries  []Entry
	Cur      int
	Window   int
	SimhashK int  // pairs farther apart are skipped; negative: no filter
	Split    bool // bucketFn's Split
}

// Candidate tables as BatchCluster builds them: table 0 the megashingles,
// 1..K+1 the simhash blocks, then the min-hash bands.
const tableMega = 0

// bucketKey is the grouping key of value v in table t.
func bucketKey(t int, v uint64) string {
	var b [10]byte
	binary.BigEndian.PutUint16(b[:2], uint16(t))
	binary.BigEndian.PutUint64(b[2:], v)
	return string(b[:])
}

// exactFn takes the documents whose signatures are byte-identical: their
// smallest key represents them all. It emits each document's candidate
// keys with the representative, an edge from the representative to every
// other member (identical signatures match), and the representative's
// signature, so that pairs and comparisons involve one document per
// signature and a page copied a thousand times costs its buckets nothing.
type exactFn struct {
	SimhashK, BandRows, Packs int

	mega    []uint64
	entries batcher[Entry, *Entry]
	joins   batcher[Join, *Join]
	edges   edgeBatcher
}

// newExactFn returns the exactFn of BatchCluster's candidate tables.
func newExactFn(packs int) *exactFn {
	return &exactFn{SimhashK: similarity.DefaultBatchSimhashK, BandRows: similarity.DefaultBatchBandRows, Packs: packs}
}

// exact handles the KeySigs of one group.
func (f *exactFn) exact(ks []KeySig, emitEntries func(int, []byte), emitEdges func(int, []byte), emitSigs func(int, []byte)) error {
	var err error
	slices.SortFunc(ks, func(a, b KeySig) int {
		return cmp.Or(slicesCompare(a.Sig, b.Sig), cmp.Compare(a.Key, b.Key))
	})
	runs(ks, func(k *KeySig) string { return string(k.Sig) }, func(run []KeySig) {
		if err == nil {
			err = f.group(run)
		}
	})
	f.entries.flush(emitEntries)
	f.joins.flush(emitSigs)
	f.edges.flush(emitEdges)
	return err
}

func slicesCompare(a, b []byte) int { return slices.Compare(a, b) }

// errSigJoin reports a document without its signature record or the
// reverse: a bug, or a runner that lost elements.
var errSigJoin = errors.New("pipeline: a document and its signature record do not pair up")

// sigJoinFn joins each document of its group (a [Member] keyed by its
// compact ID, from idFn) with its signature record (signShards) by input
// position, emits the document with its signature grouped by ID, and then
// takes the group's KeySigs as exactFn does.
type sigJoinFn struct {
	exactFn

	docs batcher[Member, *Member]
}

func (f *sigJoinFn) ProcessElement(_ int, values func(*[]byte) bool, emitEntries, emitEdges, emitSigs, emitDocs func(int, []byte)) error {
	ms, err := readBatches[Member](nil, values)
	if err != nil {
		return err
	}
	// By position, the signature record (empty Key) before its document.
	slices.SortFunc(ms, func(a, b Member) int {
		return cmp.Or(cmp.Compare(a.Doc.Input, b.Doc.Input), cmp.Compare(a.Doc.Shard, b.Doc.Shard), cmp.Compare(a.Doc.Pos, b.Doc.Pos), cmp.Compare(a.Key, b.Key))
	})
	if len(ms)%2 != 0 {
		return errSigJoin
	}
	ks := make([]KeySig, 0, len(ms)/2)
	var store sigReader
	defer store.close()
	for i := 0; i < len(ms); i += 2 {
		rec, m := &ms[i], &ms[i+1]
		if rec.Key != "" || m.Key == "" || rec.Doc.Input != m.Doc.Input || rec.Doc.Shard != m.Doc.Shard || rec.Doc.Pos != m.Doc.Pos {
			return errSigJoin
		}
		d := m.Doc
		d.Sig = rec.Doc.Sig // the signature, or its reference
		// What placed the document in input order is spent.
		d.Input, d.Shard, d.Pos, d.SigHash = 0, 0, 0, 0
		k, err := keySig(&store, m.Key, d.Sig)
		if err != nil {
			return err
		}
		ks = append(ks, k)
		f.docs.add(pack(m.Key, f.Packs), &Member{Key: m.Key, Doc: d})
	}
	f.docs.flush(emitDocs)
	return f.exact(ks, emitEntries, emitEdges, emitSigs)
}

// keySig returns the KeySig of key and sig, a signature or its reference
// in the signature store (read back with store).
func keySig(store *sigReader, key string, sig []byte) (KeySig, error) {
	if !isSigRef(sig) {
		return KeySig{Key: key, Sig: sig}, nil
	}
	b, err := store.sig(sig)
	return KeySig{Key: key, Sig: b, ref: sig}, err
}

// idSigFn takes as exactFn does the KeySigs of its group: documents
// keyed by their compact IDs that carry their signatures or their
// references (idFn with KeepSig, in the assign pipeline). It emits each
// document's key too, grouped by ID (a [Member] whose Doc holds only the
// key): the components are of IDs, the assign pipeline's lines of keys.
type idSigFn struct {
	exactFn

	docs batcher[Member, *Member]
}

func (f *idSigFn) ProcessElement(_ int, values func(*[]byte) bool, emitEntries, emitEdges, emitSigs, emitDocs func(int, []byte)) error {
	ms, err := readBatches[Member](nil, values)
	if err != nil {
		return err
	}
	ks := make([]KeySig, len(ms))
	var store sigReader
	defer store.close()
	for i := range ms {
		m := &ms[i]
		if ks[i], err = keySig(&store, m.Key, m.Doc.Sig); err != nil {
			return err
		}
		f.docs.add(pack(m.Key, f.Packs), &Member{Key: m.Key, Doc: Doc{Key: m.Doc.Key}})
	}
	f.docs.flush(emitDocs)
	return f.exact(ks, emitEntries, emitEdges, emitSigs)
}

func (f *exactFn) group(run []KeySig) error {
	rep := run[0].Key
	var s similarity.Signature
	if err := s.UnmarshalBinary(run[0].Sig); err != nil {
		return err
	}
	f.joins.add(pack(rep, f.Packs), &Join{Key: rep, Kind: joinSig, Sig: carried(run[0].Sig, run[0].ref)})
	var keys []string
	keys, f.mega = tableKeys(keys, f.mega, &s, f.SimhashK, f.BandRows)
	for _, m := range run {
		if m.Key != rep {
			f.edges.add(rep, m.Key, f.Packs)
		}
		for _, b := range keys {
			f.entries.add(pack(b, f.Packs), &Entry{Bucket: b, Key: m.Key, Rep: rep, Simhash: s.Simhash})
		}
	}
	return nil
}

// tableKeys appends to dst the candidate keys of s in BatchCluster's
// tables: its megashingles, its simhashK+1 simhash blocks and its
// min-hash bands of bandRows values. mega is scratch space, returned for
// reuse.
func tableKeys(dst []string, mega []uint64, s *similarity.Signature, simhashK, bandRows int) ([]string, []uint64) {
	mega = s.AppendMegashingles(mega[:0])
	for _, v := range mega {
		dst = append(dst, bucketKey(tableMega, v))
	}
	blocks := simhashK + 1
	for bi := range blocks {
		lo, hi := bi*64/blocks, (bi+1)*64/blocks
		mask := uint64(1)<<(hi-lo) - 1
		dst = append(dst, bucketKey(1+bi, s.Simhash>>lo&mask))
	}
	for band := 0; (band+1)*bandRows <= len(s.MinHash); band++ {
		dst = append(dst, bucketKey(1+blocks+band, similarity.BandHash(s.MinHash, band, bandRows)))
	}
	return dst, mega
}

// bucketFn turns each bucket of its group into candidate pairs: each entry
// with its Window predecessors in key order, as BatchCluster's join. A
// bucket of more than Hot entries goes out as blocks for other workers to
// expand. With Split, only the chain pairs (each entry with its immediate
// predecessor) go out as pairs; the rest of the window goes out apart
// (addRest), for the dedup pipeline's second decision (tworound.go).
type bucketFn struct {
	Window, Hot, SimhashK, Packs int
	Split                        bool

	size, unit beam.Distribution
	capped     beam.Counter
	pairs      batcher[Join, *Join]
	rest       batcher[Member, *Member]
}

func (f *bucketFn) Setup() {
	f.size = beam.NewDistribution(metricNS, "bucket_size")
	f.unit = beam.NewDistribution(metricNS, "bucket_unit")
	f.capped = beam.NewCounter(metricNS, "bucket_pairs_capped")
}

func (f *bucketFn) ProcessElement(ctx context.Context, _ int, values func(*[]byte) bool, emitPairs, emitRest, emitBlock func(int, []byte)) error {
	es, err := readBatches[Entry](nil, values)
	if err != nil {
		return err
	}
	slices.SortFunc(es, func(a, b Entry) int { return cmp.Or(cmp.Compare(a.Bucket, b.Bucket), cmp.Compare(a.Key, b.Key)) })
	emit := splitPairs(&f.pairs, &f.rest, f.Split, f.Packs)
	runs(es, func(e *Entry) string { return e.Bucket }, func(es []Entry) {
		f.bucket(ctx, es, emit, emitBlock)
	})
	f.pairs.flush(emitPairs)
	f.rest.flush(emitRest)
	return nil
}

// splitPairs returns the emit function of windowPairs that adds a pair to
// pairs (addPair), or, with split and a pair not of the chain, to rest
// (addRest).
func splitPairs(pairs *batcher[Join, *Join], rest *batcher[Member, *Member], split bool, packs int) func(p, q *Entry, chain bool) {
	return func(p, q *Entry, chain bool) {
		if split && !chain {
			addRest(rest, p, q, packs)
			return
		}
		addPair(pairs, p.Rep, q.Rep, packs)
	}
}

func (f *bucketFn) bucket(ctx context.Context, es []Entry, emit func(p, q *Entry, chain bool), emitBlock func(int, []byte)) {
	n := len(es)
	if n < 2 {
		return
	}
	f.size.Update(ctx, int64(n))
	if n > f.Window+1 {
		// Pairs farther apart than the window are never compared.
		w := int64(f.Window)
		all := int64(n) * int64(n-1) / 2
		kept := w*int64(n) - w*(w+1)/2
		f.capped.Inc(ctx, all-kept)
	}
	k := f.simhashK(es[0].Bucket)
	if n <= f.Hot {
		f.unit.Update(ctx, int64(n))
		windowPairs(es, 1, f.Window, k, emit)
		return
	}
	for c := 0; c*f.Window < n; c++ {
		lo := max(0, (c-1)*f.Window)
		hi := min(n, (c+1)*f.Window)
		b := Block{Entries: slices.Clone(es[lo:hi]), Cur: c*f.Window - lo, Window: f.Window, SimhashK: k, Split: f.Split}
		f.unit.Update(ctx, int64(len(b.Entries)))
		emitBlock(pack(es[0].Bucket+string(rune(c)), f.Packs), gobBytes(b))
	}
}

// simhashK returns the simhash filter of the table of bucket key b.
func (f *bucketFn) simhashK(b string) int {
	t := int(binary.BigEndian.Uint16([]byte(b[:2])))
	if t >= 1 && t <= f.SimhashK+1 {
		return f.SimhashK
	}
	return -1
}

// blockFn expands a block of a hot bucket into its pairs, as bucketFn
// does: with the block's Split, the chain pairs apart from the rest.
type blockFn struct {
	Packs int

	pairs batcher[Join, *Join]
	rest  batcher[Member, *Member]
}

func (f *blockFn) ProcessElement(_ int, enc []byte, emitPairs, emitRest func(int, []byte)) error {
	b, err := fromGob[Block](enc)
	if err != nil {
		return fmt.Errorf("pipeline: block: %w", err)
	}
	windowPairs(b.Entries, max(1, b.Cur), b.Window, b.SimhashK, splitPairs(&f.pairs, &f.rest, b.Split, f.Packs))
	f.pairs.flush(emitPairs)
	f.rest.flush(emitRest)
	return nil
}

// windowPairs calls emit with the entries (p, q), from <= q, q-window <=
// p < q, of es whose signatures differ and, with k >= 0, whose simhashes
// are within k; chain says p is q's immediate predecessor (p = q-1).
func windowPairs(es []Entry, from, window, k int, emit func(p, q *Entry, chain bool)) {
	for q := from; q < len(es); q++ {
		for p := max(0, q-window); p < q; p++ {
			if es[p].Rep == es[q].Rep {
				continue // the same signature: joined by exactFn's edge
			}
			if k >= 0 && similarity.Hamming(es[p].Simhash, es[q].Simhash) > k {
				continue
			}
			emit(&es[p], &es[q], p == q-1)
		}
	}
}

// sortJoin orders a join group by key, the signature first.
func sortJoin(js []Join) {
	slices.SortFunc(js, func(a, b Join) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Other, b.Other))
	})
}

// halfFn joins each document's distinct pairs (as the pair's first, the
// better ranked document) with its signature, and sends them to the
// second document; and it sends the signature of a document that is the
// second of a pair (marked joinSecond) to the same group, for decideFn.
// A document in no pair as second sends decideFn nothing: most
// documents of a large crawl are in none.
type halfFn struct {
	Packs int

	halves batcher[Join, *Join]
}

func (f *halfFn) ProcessElement(_ int, values func(*[]byte) bool, emit func(int, []byte)) error {
	js, err := readBatches[Join](nil, values)
	if err != nil {
		return err
	}
	sortJoin(js)
	runs(js, func(j *Join) string { return j.Key }, func(run []Join) {
		if run[0].Kind != joinSig {
			return
		}
		sig := run[0].Sig
		for i, p := range run[1:] {
			if p.Kind == joinPair && (i == 0 || p.Other != run[i].Other) { // run[i] precedes p
				f.halves.add(pack(p.Other, f.Packs), &Join{Key: p.Other, Kind: joinHalf, Other: p.Key, Sig: sig})
			}
		}
		if run[len(run)-1].Kind == joinSecond { // sorted last
			f.halves.add(pack(run[0].Key, f.Packs), &run[0])
		}
	})
	f.halves.flush(emit)
	return nil
}

// decideFn decides each pair that reaches a document (as b) with the
// decision of the configuration, emitting an edge per duplicate and,
// with Verdicts, the verdicts that the cluster step reuses
// (keepVerdict), as Members grouped by b.
type decideFn struct {
	Config   []byte
	Packs    int
	Verdicts bool

	set       *settings
	decided   beam.Counter
	confirmed beam.Counter
	edges     edgeBatcher
	verdicts  batcher[Member, *Member]
}

func (f *decideFn) Setup() error {
	s, err := decodeSettings(f.Config)
	f.set = s
	f.decided = beam.NewCounter(metricNS, "pairs_decided")
	f.confirmed = beam.NewCounter(metricNS, "pairs_duplicate")
	return err
}

func (f *decideFn) ProcessElement(ctx context.Context, _ int, values func(*[]byte) bool, emit, emitVerdicts func(int, []byte)) error {
	js, err := readBatches[Join](nil, values)
	if err != nil {
		return err
	}
	sortJoin(js)
	// The pairs of the group, decided on every core: a runner may run the
	// step as one bundle (prism does), and the LCS is most of its cost.
	type pair struct {
		b    *similarity.Signature
		h    *Join
		aSig []byte // h's signature, read from the store if stored
		v    similarity.Verdict
	}
	var ps []pair
	var store sigReader
	defer store.close()
	runs(js, func(j *Join) string { return j.Key }, func(run []Join) {
		if err != nil || run[0].Kind != joinSig {
			return
		}
		var sig []byte
		if sig, err = store.sig(run[0].Sig); err != nil {
			return
		}
		b := new(similarity.Signature)
		if err = b.UnmarshalBinary(sig); err != nil {
			return
		}
		for i := range run[1:] {
			if h := &run[1+i]; h.Kind == joinHalf {
				if sig, err = store.sig(h.Sig); err != nil {
					return
				}
				ps = append(ps, pair{b: b, h: h, aSig: sig})
			}
		}
	})
	if err != nil {
		return err
	}
	errs := make([]error, len(ps))
	parallel.For(len(ps), runtime.GOMAXPROCS(0), 1, func(k int) {
		var a similarity.Signature
		if errs[k] = a.UnmarshalBinary(ps[k].aSig); errs[k] == nil {
			ps[k].v = f.set.decision.Decide(&a, ps[k].b)
		}
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for k := range ps {
		h, v := ps[k].h, &ps[k].v
		f.decided.Inc(ctx, 1)
		if v.Duplicate {
			f.confirmed.Inc(ctx, 1)
			f.edges.add(h.Other, h.Key, f.Packs)
		}
		if f.Verdicts && keepVerdict(v) {
			f.verdicts.add(pack(h.Key, f.Packs), &Member{Key: h.Key, Pair: h.Other, Verdict: appendVerdict(nil, v)})
		}
	}
	f.edges.flush(emit)
	f.verdicts.flush(emitVerdicts)
	return nil
}
