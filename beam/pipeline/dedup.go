package pipeline

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/zeebo/xxh3"

	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/corpus"
	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/options"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// metricNS is the namespace of the pipeline's counters.
const metricNS = "winnow"

// Defaults of [Options].
const (
	DefaultRounds    = 12
	DefaultHotBucket = 4096
)

// Options configures [Dedup].
type Options struct {
	// Config is winnow's configuration: the signature, canon, decision
	// and dedup settings as `winnow dedup` reads them.
	Config config.Config
	// Shards are the inputs, cut by [Split]; Several says that more than
	// one input was given (keys are then prefixed by the input).
	Shards  []Shard
	Several bool
	// Output is the JSON Lines file written (any Beam filesystem path).
	Output string
	// Rounds bounds the connected-component rounds. Zero means
	// DefaultRounds (12).
	Rounds int
	// SmallEdges is the most bytes of candidate edges (the batches of
	// the matching pairs) whose connected components are found in one
	// grouping on one worker, without the rounds. Zero means
	// DefaultSmallEdges (16 MiB); negative always runs the rounds.
	SmallEdges int64
	// HotBucket is the bucket size above which a bucket's pairs are
	// expanded in blocks by other workers. Zero means DefaultHotBucket.
	HotBucket int
	// Packs is the number of groups of each grouping (see pack.go). Zero
	// means DefaultPacks.
	Packs int
	// Backend, if set, is the base URL of a cluster service that the
	// signed pages are loaded into, as `winnow dedup -cluster` loads them
	// (see loadDocs); the service's backend.max_batch is Config's.
	Backend string
}

// Doc is a signed document. Its body is dropped after signing.
type Doc struct {
	// BaseKey is the key before repeats are numbered, Key the key after
	// (offline.RepeatKey).
	BaseKey, Key string
	ID, URL      string
	// Popularity is the input's score, for the winner rules.
	Popularity float64
	// Input, Shard and Pos place the document in input order.
	Input, Shard int
	Pos          int64
	// Sig is the signature's binary encoding, or its reference with a
	// signature store (sigstore.go); nil in the dedup pipeline's ranking
	// steps, where it travels apart (signShards).
	Sig []byte
	// SigHash is Sig's xxh3 hash: its group (mod packs) is the group of
	// the document's signature when that travels apart.
	SigHash uint64
	// Usable reports a signature the decision may match (not empty, not
	// too short); Cut one cut at a size cap.
	Usable, Cut bool
}

// Dedup adds the dedup pipeline to s (see the package documentation).
func Dedup(s beam.Scope, o Options) error {
	enc, err := o.prepare()
	if err != nil {
		return err
	}
	numbered, _, apart := signShards(s, enc, o.Shards, o.Several, o.Packs, true, o.Backend != "")
	if o.Backend != "" {
		loadDocs(s, numbered, o.Backend, o.Config.Cluster.MaxBatch, options.BatchSigner(o.Config).Fingerprint())
	}
	ided := rankIDs(s, numbered, o.Packs, false)
	docs, edges, verdicts := joinedEdges(s, enc, ided, apart, o)
	labels := components(s, "", edges, o.Rounds, o.Packs, o.SmallEdges)
	writeClusters(s, enc, docs, labels, verdicts, o.Output, o.Packs, o.Several)
	return nil
}

// prepare sets o's defaults, checks it and returns the encoded
// configuration for the workers.
func (o *Options) prepare() ([]byte, error) {
	o.Rounds = cmp.Or(o.Rounds, DefaultRounds)
	o.HotBucket = cmp.Or(o.HotBucket, DefaultHotBucket)
	o.Packs = cmp.Or(o.Packs, DefaultPacks)
	o.SmallEdges = cmp.Or(o.SmallEdges, DefaultSmallEdges)
	if o.Rounds < 1 || o.HotBucket < 2 || o.Packs < 1 || o.Output == "" || len(o.Shards) == 0 {
		return nil, errors.New("pipeline: invalid options")
	}
	enc, err := encodeConfig(o.Config)
	if err != nil {
		return nil, err
	}
	if _, err := decodeSettings(enc); err != nil {
		return nil, err
	}
	return enc, nil
}

// signShards reads and signs the shards and keys each document as
// `winnow dedup` does. It returns the documents as [Member]s grouped by
// key, and the usable ones' [KeySig]s grouped by signature.
//
// With ranked, it returns instead every document keyed by its rank key,
// grouped by it, and no KeySigs: rankIDs gives them compact IDs in
// rank-key order, so that every step orders documents as BatchCluster
// orders them in `winnow dedup`. Their signatures travel apart (apart):
// each usable document's signature record, a [Member] with an empty Key
// whose Doc holds the document's input position (Input, Shard, Pos) and
// signature, grouped by the signature's hash, where joinedEdges meets it
// with the document's ID. A signature is most of a document's bytes, and
// the ranking steps move each document three times; so the ranked
// documents keep theirs only with keepSig (for loadDocs).
func signShards(s beam.Scope, enc []byte, shards []Shard, several bool, packs int, ranked, keepSig bool) (docs, sigs, apart beam.PCollection) {
	s = s.Scope("sign")
	// The shards cross the Reshuffle as bytes (Shard.encode): Flink's job
	// server decodes what a Reshuffle moves, and it misread the Go SDK's
	// row encoding of Shard ("Serializer consumed more bytes than the
	// record had").
	encoded := make([][]byte, len(shards))
	for i, sh := range shards {
		encoded[i] = gobBytes(sh)
	}
	col := beam.Reshuffle(s, beam.CreateList(s, encoded))
	// The WARC paths as bytes too: a DoFn's fields cross as JSON, which
	// makes each byte of a path that is not UTF-8 a U+FFFD.
	var warcs [][]byte
	for _, p := range warcInputs(shards) {
		warcs = append(warcs, []byte(p))
	}
	signed, apart := beam.ParDo2(s, &signFn{Config: enc, Several: several, Packs: packs, WARCs: warcs, Apart: ranked, KeepSig: keepSig || !ranked}, col)
	docs, sigs = beam.ParDo2(s, &numberFn{Config: enc, Packs: packs, Ranked: ranked}, beam.GroupByKey(s, signed))
	return docs, sigs, apart
}

// signFn reads a shard and signs its documents, keyed by their key before
// repeats are numbered. A bad document is logged, counted and skipped.
// With Apart it emits each usable document's signature record too
// (signShards); the documents keep their signatures only with KeepSig.
type signFn struct {
	Config         []byte
	Several        bool
	Packs          int
	Apart, KeepSig bool
	// WARCs are the WARC inputs in input order when more than one shard
	// reads WARC records: each worker indexes them (corpus.Targets) so
	// that a revisit resolves to its target in another shard or file, as
	// `winnow dedup` resolves it reading them in order.
	WARCs [][]byte

	targets *corpus.Targets

	set                                  *settings
	docs, errs, bytes, empty, cut, skips beam.Counter
	out                                  batcher[Doc, *Doc]
	sigs                                 batcher[Member, *Member]
}

// batchLimit is the most bytes of batches a DoFn reading a large input
// holds before it emits them.
const batchLimit = 16 << 20

func (f *signFn) Setup() error {
	set, err := decodeSettings(f.Config)
	f.set = set
	f.docs = beam.NewCounter(metricNS, "docs")
	f.errs = beam.NewCounter(metricNS, "errors")
	f.bytes = beam.NewCounter(metricNS, "bytes")
	f.empty = beam.NewCounter(metricNS, "empty")
	f.cut = beam.NewCounter(metricNS, "cut")
	f.skips = beam.NewCounter(metricNS, "skipped")
	return err
}

func (f *signFn) ProcessElement(ctx context.Context, shardBytes []byte, emit func(int, []byte), emitSigs func(int, []byte)) error {
	sh, err := fromGob[Shard](shardBytes)
	if err != nil {
		return fmt.Errorf("pipeline: shard: %w", err)
	}
	opts := options.CorpusOptions(f.set.cfg)
	var skips atomic.Int64 // OnSkip runs on signed's reader
	opts.OnSkip = func(corpus.Skip) { skips.Add(1) }
	defer func() { f.skips.Inc(ctx, skips.Load()) }()
	if len(f.WARCs) > 0 && sh.readsWARC() {
		if f.targets == nil {
			t := &corpus.Targets{}
			for _, p := range f.WARCs {
				if err := t.Index(string(p)); err != nil {
					return err
				}
			}
			f.targets = t
		}
		opts.Targets = f.targets
	}
	var pos int64
	var store sigWriter // the shard's signatures, with a signature store
	defer store.close()
	stop := make(chan struct{})
	defer close(stop)
	for t := range signed(sh.Docs(f.set.cfg, opts), f.set.signer, stop) {
		d, res, err := t.doc, t.res, t.err
		if t.readErr {
			f.errs.Inc(ctx, 1)
			log.Warnf(ctx, "dedup_skip: %v", err)
			continue
		}
		f.bytes.Inc(ctx, int64(len(d.Body)))
		if err != nil {
			f.errs.Inc(ctx, 1)
			log.Warnf(ctx, "dedup_skip: %s: %s: %v", sh.Name, d.ID, err)
			continue
		}
		f.docs.Inc(ctx, 1)
		sig := res.Sig
		if sig.Empty() {
			f.empty.Inc(ctx, 1)
		}
		cut := res.Doc.Truncated || sig.Capped
		if cut {
			f.cut.Inc(ctx, 1)
		}
		b, err := sig.MarshalBinary()
		if err != nil {
			return err
		}
		base := offline.InputKey(f.Several, sh.Name, d.ID)
		doc := Doc{
			BaseKey: base, ID: d.ID, URL: d.URL, Popularity: d.Popularity, Input: sh.Input, Shard: sh.Index, Pos: pos,
			SigHash: xxh3.Hash(b), Usable: f.set.decision.Matchable(&sig), Cut: cut,
		}
		if f.Apart && doc.Usable {
			rec := b
			if dir := sigStoreDir(); dir != "" {
				if rec, err = store.add(dir, b); err != nil {
					return err
				}
			}
			f.sigs.add(int(doc.SigHash%uint64(f.Packs)), &Member{Doc: Doc{Input: doc.Input, Shard: doc.Shard, Pos: pos, Sig: rec}})
			f.sigs.flushOver(batchLimit, emitSigs)
		}
		if f.KeepSig {
			doc.Sig = b
		}
		f.out.add(pack(base, f.Packs), &doc)
		f.out.flushOver(batchLimit, emit)
		pos++
	}
	// The stored signatures are read only after a grouping that waits
	// for this bundle: closing the file here is soon enough.
	if err := store.close(); err != nil {
		return err
	}
	f.out.flush(emit)
	f.sigs.flush(emitSigs)
	return nil
}

// signTask is one document of signed: read, then signed by a worker.
type signTask struct {
	doc     corpus.Doc
	res     page.Result
	err     error // the read's error (readErr) or the signature's
	readErr bool
	done    chan struct{} // closed once res and err are set
}

// signed signs the documents of docs on GOMAXPROCS goroutines and yields
// them in input order: a runner may hand a worker one bundle at a time
// (prism runs each step as one bundle), and signing is most of a job's
// CPU. The caller closes stop when it stops ranging.
func signed(docs iter.Seq2[corpus.Doc, error], signer page.Signer, stop <-chan struct{}) iter.Seq[*signTask] {
	return func(yield func(*signTask) bool) {
		workers := runtime.GOMAXPROCS(0)
		jobs := make(chan *signTask, 2*workers)
		order := make(chan *signTask, 4*workers)
		for range workers {
			go func() {
				for t := range jobs {
					t.res, t.err = signer.Sign(t.doc.Body, t.doc.ContentType)
					close(t.done)
				}
			}()
		}
		go func() {
			defer close(order)
			defer close(jobs)
			for d, err := range docs {
				t := &signTask{doc: d, err: err, readErr: err != nil, done: make(chan struct{})}
				if t.readErr {
					close(t.done)
				} else {
					select {
					case jobs <- t:
					case <-stop:
						return
					}
				}
				select {
				case order <- t:
				case <-stop:
					return
				}
			}
		}()
		for t := range order {
			<-t.done
			if !yield(t) {
				return
			}
		}
	}
}

// numberFn numbers the repeats of a key in input order: the n-th repeat
// gets "#n" (offline.RepeatKey). It emits each document grouped by its
// key, and the usable ones' signatures grouped by signature; when Ranked,
// only the documents, keyed by their rank keys, for rankIDs.
type numberFn struct {
	Config []byte
	Packs  int
	Ranked bool

	set  *settings
	docs batcher[Member, *Member]
	sigs batcher[KeySig, *KeySig]
}

func (f *numberFn) Setup() error {
	set, err := decodeSettings(f.Config)
	f.set = set
	return err
}

func (f *numberFn) ProcessElement(_ int, values func(*[]byte) bool, emitDocs func(int, []byte), emitSigs func(int, []byte)) error {
	ds, err := readBatches[Doc](nil, values)
	if err != nil {
		return err
	}
	slices.SortFunc(ds, func(a, b Doc) int {
		return cmp.Or(cmp.Compare(a.BaseKey, b.BaseKey), cmp.Compare(a.Input, b.Input), cmp.Compare(a.Shard, b.Shard), cmp.Compare(a.Pos, b.Pos))
	})
	runs(ds, func(d *Doc) string { return d.BaseKey }, func(run []Doc) {
		for i, d := range run {
			d.Key = offline.RepeatKey(d.BaseKey, i)
			if f.Ranked {
				k := f.set.rank.Key(lineDoc(&d))
				f.docs.add(pack(k, f.Packs), &Member{Key: k, Doc: d})
				continue
			}
			k := d.Key
			f.docs.add(pack(k, f.Packs), &Member{Key: k, Doc: d})
			if d.Usable {
				f.sigs.add(int(d.SigHash%uint64(f.Packs)), &KeySig{Key: k, Sig: d.Sig})
			}
		}
	})
	f.docs.flush(emitDocs)
	f.sigs.flush(emitSigs)
	return nil
}

// candidateEdges returns the matching pairs of the candidate tables, and
// the edges between documents of identical signatures, as batches of
// [Edge]s both ways grouped by their first node, for documents with
// compact IDs that carry their signatures (ided: rankIDs with keepSig);
// and each document's key by ID (idSigFn). It decides the pairs in two
// rounds (tworound.go), as joinedEdges does: in one, a family of k
// near-identical pages cost every pair of the family within the window.
func candidateEdges(s beam.Scope, enc []byte, ided beam.PCollection, o Options) (edges, docs beam.PCollection) {
	s = s.Scope("candidates")
	entries, same, sigs, docs := beam.ParDo4(s, &idSigFn{exactFn: *newExactFn(o.Packs)}, beam.GroupByKey(s, ided))
	edges, _ = twoRoundEdges(s, enc, entries, same, sigs, o, false)
	return edges, docs
}

// joinedEdges is candidateEdges for documents whose signatures travel
// apart (signShards): it joins the documents with compact IDs (ided)
// with their signature records (apart), and returns too the documents
// with their signatures, grouped by ID, and the verdicts for the cluster
// step (decideFn). It decides the pairs in two rounds (tworound.go).
func joinedEdges(s beam.Scope, enc []byte, ided, apart beam.PCollection, o Options) (docs, edges, verdicts beam.PCollection) {
	s = s.Scope("candidates")
	entries, same, sigs, docs := beam.ParDo4(s, &sigJoinFn{exactFn: *newExactFn(o.Packs)}, beam.GroupByKey(s, beam.Flatten(s, ided, apart)))
	edges, verdicts = twoRoundEdges(s, enc, entries, same, sigs, o, true)
	return docs, edges, verdicts
}

// bucketPairs expands the candidate entries of exactFn into pairs for
// decidePairs; with split, only the chain pairs, and the rest of the
// window apart (bucketFn).
func bucketPairs(s beam.Scope, entries beam.PCollection, hotBucket, packs int, split bool) (pairs, rest beam.PCollection) {
	k := similarity.DefaultBatchSimhashK
	pairs, rest, blocks := beam.ParDo3(s, &bucketFn{Window: similarity.DefaultBatchMaxBucket, Hot: hotBucket, SimhashK: k, Packs: packs, Split: split},
		beam.GroupByKey(s, entries))
	hot, hotRest := beam.ParDo2(s, &blockFn{Packs: packs}, beam.Reshuffle(s, blocks))
	return beam.Flatten(s, pairs, hot), beam.Flatten(s, rest, hotRest)
}

// decidePairs decides the candidate pairs (addPair) with the signatures
// of exactFn (sigs) and returns the matching ones as edges, and with
// keepVerdicts the verdicts for the cluster step.
func decidePairs(s beam.Scope, enc []byte, sigs, pairs beam.PCollection, packs int, keepVerdicts bool) (matched, verdicts beam.PCollection) {
	halves := beam.ParDo(s, &halfFn{Packs: packs}, beam.GroupByKey(s, beam.Flatten(s, sigs, pairs)))
	return beam.ParDo2(s, &decideFn{Config: enc, Packs: packs, Verdicts: keepVerdicts}, beam.GroupByKey(s, halves))
}

// Line is one output line and the key it is sorted by.
type Line struct {
	Winner, JSON string
}

// writeClusters joins each component's documents and the verdicts of
// their pairs, clusters them as `winnow dedup` does and writes the lines
// in winner rank-key order.
func writeClusters(s beam.Scope, enc []byte, docs, labels, verdicts beam.PCollection, output string, packs int, several bool) {
	s = s.Scope("clusters")
	members := beam.ParDo(s, &memberFn{Packs: packs}, beam.GroupByKey(s, beam.Flatten(s, docs, labels, verdicts)))
	parts := beam.ParDo(s, &clusterFn{Config: enc, Path: output, Several: several}, beam.GroupByKey(s, members))
	mergeParts(s, parts, output)
}

// lineDoc is what package offline needs of d.
func lineDoc(d *Doc) offline.Doc {
	return offline.Doc{Key: d.Key, ID: d.ID, URL: d.URL, Popularity: d.Popularity}
}

// Member is a document with its key, a component's label of a document
// (Label), or a document of component Root. With Pair set it is instead
// the verdict (decideFn) on the pair (Pair, Key) of representatives,
// encoded by appendVerdict, sent to Key's component (verdicts.go).
type Member struct {
	Key, Root string
	Label     bool
	Doc       Doc
	Pair      string
	Verdict   []byte
}

// memberFn sends each labelled document, and the verdicts of its pairs
// as second document, to its component.
type memberFn struct {
	Packs int

	out batcher[Member, *Member]
}

func (f *memberFn) ProcessElement(_ int, values func(*[]byte) bool, emit func(int, []byte)) error {
	ms, err := readBatches[Member](nil, values)
	if err != nil {
		return err
	}
	slices.SortFunc(ms, func(a, b Member) int { return cmp.Compare(a.Key, b.Key) })
	runs(ms, func(m *Member) string { return m.Key }, func(run []Member) {
		root := ""
		for _, m := range run {
			if m.Label {
				root = m.Root
			}
		}
		if root == "" {
			return
		}
		for _, m := range run {
			if !m.Label {
				m.Root = root
				f.out.add(pack(root, f.Packs), &m)
			}
		}
	})
	f.out.flush(emit)
	return nil
}

// clusterFn clusters one component with similarity.BatchCluster, as
// `winnow dedup` clusters the whole corpus: within a component the
// candidate tables find at least the pairs that joined it, so the
// component, its winner and its verdicts are the same. It writes the
// lines of its group's components to a part file (writePart) and emits
// the part's name: a line is never an element, since a large cluster's
// line (3.7 MB for a group of 5,000 pages) outgrows the record a runner
// sorts in one buffer (Flink's GroupByKey).
type clusterFn struct {
	Config []byte
	// Several says the job reads several inputs: a line names each
	// member's input, as winnow dedup's does.
	Several bool
	// Path is the output; the part files go beside it.
	Path string

	set                  *settings
	clusters, duplicates beam.Counter
}

func (f *clusterFn) Setup() error {
	set, err := decodeSettings(f.Config)
	f.set = set
	f.clusters = beam.NewCounter(metricNS, "clusters")
	f.duplicates = beam.NewCounter(metricNS, "duplicates")
	return err
}

func (f *clusterFn) ProcessElement(ctx context.Context, _ int, values func(*[]byte) bool, emit func(string)) error {
	all, err := readBatches[Member](nil, values)
	if err != nil {
		return err
	}
	slices.SortFunc(all, func(a, b Member) int { return cmp.Or(cmp.Compare(a.Root, b.Root), cmp.Compare(a.Key, b.Key)) })
	var lines []Line
	runs(all, func(m *Member) string { return m.Root }, func(ms []Member) {
		if err == nil {
			lines, err = f.component(ctx, ms, lines)
		}
	})
	if err != nil {
		return err
	}
	return writePart(ctx, f.Path, lines, emit)
}

// component appends to lines those of one component's clusters; run
// holds its members and the verdicts of their pairs (Pair set), sorted
// by key.
func (f *clusterFn) component(ctx context.Context, run []Member, lines []Line) ([]Line, error) {
	ms := make([]Member, 0, len(run))
	known := &knownVerdicts{pair: map[[2]string]similarity.Verdict{}}
	for i := range run {
		if run[i].Pair == "" {
			ms = append(ms, run[i])
			continue
		}
		v, err := readVerdict(run[i].Verdict)
		if err != nil {
			return lines, err
		}
		known.pair[[2]string{run[i].Pair, run[i].Key}] = v
	}
	sigs := make([]*similarity.Signature, len(ms))
	known.rep = make(map[*similarity.Signature]string, len(ms))
	reps := map[string]string{} // by signature encoding: the first key, the smallest
	keys := make([]string, len(ms))
	docs := make([]offline.Doc, len(ms))
	var store sigReader
	defer store.close()
	for i := range ms {
		enc, err := store.sig(ms[i].Doc.Sig)
		if err != nil {
			return lines, err
		}
		sigs[i] = new(similarity.Signature)
		if err := sigs[i].UnmarshalBinary(enc); err != nil {
			return lines, err
		}
		rep, ok := reps[string(enc)]
		if !ok {
			rep = ms[i].Key
			reps[string(enc)] = rep
		}
		known.rep[sigs[i]] = rep
		docs[i] = lineDoc(&ms[i].Doc)
		if f.Several {
			// The key is the input's name, ':' and the ID, and "#n" for
			// a repeat (offline.InputKey, RepeatKey): a revisit resolved
			// from another input keeps its own input there.
			if at := strings.LastIndex(ms[i].Doc.Key, ":"+ms[i].Doc.ID); at >= 0 {
				docs[i].Input = ms[i].Doc.Key[:at]
			}
		}
		// Members are keyed by compact IDs (ids.go), in rank-key order;
		// BatchCluster and the lines want the rank keys.
		keys[i] = f.set.rank.Key(docs[i])
	}
	cs := similarity.BatchCluster(sigs, f.set.decision, similarity.BatchOptions{Keys: keys, WinnerVerified: !f.set.cfg.Dedup.SingleLink, Cache: known})
	for _, c := range cs {
		f.clusters.Inc(ctx, 1)
		f.duplicates.Inc(ctx, int64(len(c.Members)-1))
		line := offline.NewLine(c, docs, sigs, f.set.rank, f.set.remove)
		var b strings.Builder
		if err := line.Write(&b); err != nil {
			return lines, err
		}
		lines = append(lines, Line{Winner: keys[c.Winner], JSON: b.String()})
	}
	return lines, nil
}

// mergeParts merges the part files (writePart) named by parts into
// output, on one worker. Only the names cross the grouping: no element
// holds more than one name. An empty name joins them, so that the write
// runs, and writes an empty output, when no part was written (pages none
// of which is near another).
func mergeParts(s beam.Scope, parts beam.PCollection, output string) {
	parts = beam.Flatten(s, parts, beam.Create(s, ""))
	beam.ParDo0(s, &writeFn{Path: output}, beam.GroupByKey(s, beam.AddFixedKey(s, parts)))
}

// writePart sorts lines by winner into a new part file beside output
// (records of winner and line, each length-prefixed) and emits its name;
// it writes and emits nothing for no lines. A retried bundle writes a
// part of its own name.
func writePart(ctx context.Context, output string, ls []Line, emit func(string)) error {
	if len(ls) == 0 {
		return nil
	}
	slices.SortFunc(ls, func(a, b Line) int { return cmp.Compare(a.Winner, b.Winner) })
	fsys, err := filesystem.New(ctx, output)
	if err != nil {
		return err
	}
	defer fsys.Close()
	part := fmt.Sprintf("%s.part-%d-%d", output, os.Getpid(), rand.Uint64())
	w, err := fsys.OpenWrite(ctx, part)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	var rec []byte
	for _, l := range ls {
		rec = binary.AppendUvarint(rec[:0], uint64(len(l.Winner)))
		rec = append(rec, l.Winner...)
		rec = binary.AppendUvarint(rec, uint64(len(l.JSON)))
		rec = append(rec, l.JSON...)
		if _, err = bw.Write(rec); err != nil {
			break
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	emit(part)
	return nil
}

// partReader reads the records of a part file.
type partReader struct {
	r      *bufio.Reader
	winner string
	json   []byte
}

// next reads the next record; false at the end.
func (p *partReader) next() (bool, error) {
	n, err := binary.ReadUvarint(p.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(p.r, b); err != nil {
		return false, err
	}
	p.winner = string(b)
	if n, err = binary.ReadUvarint(p.r); err != nil {
		return false, err
	}
	p.json = slices.Grow(p.json[:0], int(n))[:n]
	_, err = io.ReadFull(p.r, p.json)
	return err == nil, err
}

// writeFn merges the part files into the output, in winner order.
type writeFn struct {
	Path string
}

func (f *writeFn) ProcessElement(ctx context.Context, _ int, values func(*string) bool) error {
	if err := failOnce("write"); err != nil {
		return err
	}
	if err := holdOnce(ctx, "write"); err != nil {
		return err
	}
	var parts []string
	var part string
	for values(&part) {
		if part != "" {
			parts = append(parts, part)
		}
	}
	slices.Sort(parts)
	fsys, err := filesystem.New(ctx, f.Path)
	if err != nil {
		return err
	}
	defer fsys.Close()
	var readers []*partReader
	for _, p := range parts {
		r, err := fsys.OpenRead(ctx, p)
		if err != nil {
			return err
		}
		defer r.Close()
		pr := &partReader{r: bufio.NewReader(r)}
		ok, err := pr.next()
		if err != nil {
			return fmt.Errorf("pipeline: part %s: %w", p, err)
		}
		if ok {
			readers = append(readers, pr)
		}
	}
	// The lines go to a temporary name beside the output, renamed over it
	// once complete: a run stopped midway (Ctrl-C, a failed worker) never
	// leaves a partial file under the output's name, and a retried bundle
	// writes its own temporary file.
	tmp := fmt.Sprintf("%s.tmp-%d-%d", f.Path, os.Getpid(), rand.Uint64())
	w, err := fsys.OpenWrite(ctx, tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	// A merge of the sorted parts (winners are unique: one per cluster).
	for len(readers) > 0 && err == nil {
		min := 0
		for i, r := range readers {
			if r.winner < readers[min].winner {
				min = i
			}
		}
		if _, err = bw.Write(readers[min].json); err != nil {
			break
		}
		var ok bool
		if ok, err = readers[min].next(); err == nil && !ok {
			readers = slices.Delete(readers, min, min+1)
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = filesystem.Rename(ctx, fsys, tmp, f.Path)
	}
	rm, _ := fsys.(filesystem.Remover)
	if err != nil {
		if rm != nil {
			rm.Remove(ctx, tmp)
		}
		return err
	}
	if rm != nil {
		for _, p := range parts {
			rm.Remove(ctx, p)
		}
	}
	return nil
}

// FailOnceEnv names the environment variable, for tests only, that makes
// the first attempt of a step fail: its value is a directory shared by the
// workers, where the first attempt leaves a marker that the retries find.
// It shows that a runner's retry of a failed task still writes the same
// output.
const FailOnceEnv = "WINNOW_BEAM_FAIL_ONCE"

// failOnce returns an error the first time step runs under FailOnceEnv.
func failOnce(step string) error {
	dir := os.Getenv(FailOnceEnv)
	if dir == "" {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, step), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil // marked: a retry
	}
	f.Close()
	return fmt.Errorf("pipeline: injected failure of the %s step's first attempt (%s)", step, FailOnceEnv)
}

// HoldOnceEnv names the environment variable, for tests only, that holds
// the first attempt of a step in the middle of its task: its value is a
// directory shared by the workers, where the first attempt writes its
// process ID to a file named after the step (step + ".pid"), then waits
// until that file is removed, its worker is killed or holdMax has passed
// (then it fails). A test so has a worker die mid-task whatever the
// runner's task lengths, or a job that is surely running; the retries
// find the marker and run.
const HoldOnceEnv = "WINNOW_BEAM_HOLD_ONCE"

// holdMax bounds a hold no one ends.
const holdMax = 5 * time.Minute

// holdOnce holds the first attempt of step under HoldOnceEnv.
func holdOnce(ctx context.Context, step string) error {
	dir := os.Getenv(HoldOnceEnv)
	if dir == "" {
		return nil
	}
	name := filepath.Join(dir, step)
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil // held before: a retry
	}
	f.Close()
	// Written under another name and renamed, so the test never reads a
	// partial ID.
	pid := name + ".pid"
	if err := os.WriteFile(name+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	if err := os.Rename(name+".tmp", pid); err != nil {
		return err
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(holdMax)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-limit:
			return fmt.Errorf("pipeline: the %s step's first attempt was held %v, neither released nor killed (%s)", step, holdMax, HoldOnceEnv)
		case <-tick.C:
			if _, err := os.Stat(pid); errors.Is(err, fs.ErrNotExist) {
				return nil // released
			}
		}
	}
}
