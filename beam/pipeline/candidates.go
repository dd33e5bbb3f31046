package pipeline

import (
	"cmp"
	"context"
	"encoding/binary"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/winnow-search/winnow/similarity"
)

// Entry is one document under one candidate key.
type Entry struct {
	Key     string
	Simhash uint64
}

// Pair is a candidate pair, A the smaller key (the better ranked, as
// BatchCluster decides it).
type Pair struct {
	A, B string
}

// Block is a slice of a hot bucket in key order: its pairs are those
// ending at an entry from Cur on, starting at most Window entries before.
type Block struct {
	Entries  []Entry
	Cur      int
	Window   int
	SimhashK int // pairs farther apart are skipped; negative: no filter
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

// mix64 is similarity's finalizer (MurmurHash3 fmix64) with which
// BatchCluster hashes a band; the equality test catches a drift.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// keysFn emits the candidate keys of each usable document.
type keysFn struct {
	SimhashK, BandRows int
	mega               []uint64
}

func (f *keysFn) ProcessElement(key string, d Doc, emit func(string, Entry)) error {
	if !d.Usable {
		return nil
	}
	var s similarity.Signature
	if err := s.UnmarshalBinary(d.Sig); err != nil {
		return err
	}
	e := Entry{Key: key, Simhash: s.Simhash}
	f.mega = s.AppendMegashingles(f.mega[:0])
	for _, v := range f.mega {
		emit(bucketKey(tableMega, v), e)
	}
	blocks := f.SimhashK + 1
	for bi := range blocks {
		lo, hi := bi*64/blocks, (bi+1)*64/blocks
		mask := uint64(1)<<(hi-lo) - 1
		emit(bucketKey(1+bi, s.Simhash>>lo&mask), e)
	}
	for band := 0; (band+1)*f.BandRows <= len(s.MinHash); band++ {
		h := mix64(uint64(band) + 1)
		for _, v := range s.MinHash[band*f.BandRows : (band+1)*f.BandRows] {
			h = mix64(h ^ uint64(v))
		}
		emit(bucketKey(1+blocks+band, h), e)
	}
	return nil
}

// bucketFn turns a bucket into candidate pairs: each entry with its
// Window predecessors in key order, as BatchCluster's join. A bucket of
// more than Hot entries goes out as blocks for other workers to expand.
type bucketFn struct {
	Window, Hot, SimhashK int

	size, unit beam.Distribution
	capped     beam.Counter
}

func (f *bucketFn) Setup() {
	f.size = beam.NewDistribution(metricNS, "bucket_size")
	f.unit = beam.NewDistribution(metricNS, "bucket_unit")
	f.capped = beam.NewCounter(metricNS, "bucket_pairs_capped")
}

func (f *bucketFn) ProcessElement(ctx context.Context, key string, values func(*Entry) bool, emitPair func(Pair), emitBlock func(int, Block)) {
	var es []Entry
	var e Entry
	for values(&e) {
		es = append(es, e)
	}
	n := len(es)
	if n < 2 {
		return
	}
	slices.SortFunc(es, func(a, b Entry) int { return cmp.Compare(a.Key, b.Key) })
	f.size.Update(ctx, int64(n))
	if n > f.Window+1 {
		// Pairs farther apart than the window are never compared.
		w := int64(f.Window)
		all := int64(n) * int64(n-1) / 2
		kept := w*int64(n) - w*(w+1)/2
		f.capped.Inc(ctx, all-kept)
	}
	k := f.simhashK(key)
	if n <= f.Hot {
		f.unit.Update(ctx, int64(n))
		windowPairs(es, 1, f.Window, k, emitPair)
		return
	}
	for c := 0; c*f.Window < n; c++ {
		lo := max(0, (c-1)*f.Window)
		hi := min(n, (c+1)*f.Window)
		b := Block{Entries: slices.Clone(es[lo:hi]), Cur: c*f.Window - lo, Window: f.Window, SimhashK: k}
		f.unit.Update(ctx, int64(len(b.Entries)))
		emitBlock(int(mix64(uint64(c)^uint64(len(key))<<32)&0x7fffffff), b)
	}
}

// simhashK returns the simhash filter of the table of key.
func (f *bucketFn) simhashK(key string) int {
	t := int(binary.BigEndian.Uint16([]byte(key[:2])))
	if t >= 1 && t <= f.SimhashK+1 {
		return f.SimhashK
	}
	return -1
}

// blockFn expands a block of a hot bucket into its pairs.
func blockFn(_ int, b Block, emit func(Pair)) {
	windowPairs(b.Entries, max(1, b.Cur), b.Window, b.SimhashK, emit)
}

// windowPairs emits the pairs (p, q), from <= q, q-window <= p < q, of es
// whose keys differ and, with k >= 0, whose simhashes are within k.
func windowPairs(es []Entry, from, window, k int, emit func(Pair)) {
	for q := from; q < len(es); q++ {
		for p := max(0, q-window); p < q; p++ {
			if es[p].Key == es[q].Key {
				continue
			}
			if k >= 0 && similarity.Hamming(es[p].Simhash, es[q].Simhash) > k {
				continue
			}
			emit(Pair{A: es[p].Key, B: es[q].Key})
		}
	}
}

// pairByA keys a pair by its first document.
func pairByA(p Pair) (string, string) { return p.A, p.B }

// Half is a pair keyed by its second document, with the first's signature.
type Half struct {
	A    string
	SigA []byte
}

// halfFn joins the pairs of a document (as A) with its signature.
func halfFn(key string, sigs func(*[]byte) bool, bs func(*string) bool, emit func(string, Half)) {
	var sig []byte
	if !sigs(&sig) {
		return
	}
	var b string
	for bs(&b) {
		emit(b, Half{A: key, SigA: sig})
	}
}

// decideFn decides each pair of a document (as B) with the decision of
// the configuration, emitting an edge per duplicate.
type decideFn struct {
	Config []byte

	set       *settings
	decided   beam.Counter
	confirmed beam.Counter
}

func (f *decideFn) Setup() error {
	s, err := decodeSettings(f.Config)
	f.set = s
	f.decided = beam.NewCounter(metricNS, "pairs_decided")
	f.confirmed = beam.NewCounter(metricNS, "pairs_duplicate")
	return err
}

func (f *decideFn) ProcessElement(ctx context.Context, key string, sigs func(*[]byte) bool, halves func(*Half) bool, emit func(string, string)) error {
	var enc []byte
	if !sigs(&enc) {
		return nil
	}
	var b similarity.Signature
	if err := b.UnmarshalBinary(enc); err != nil {
		return err
	}
	var h Half
	for halves(&h) {
		var a similarity.Signature
		if err := a.UnmarshalBinary(h.SigA); err != nil {
			return err
		}
		f.decided.Inc(ctx, 1)
		if f.set.decision.Decide(&a, &b).Duplicate {
			f.confirmed.Inc(ctx, 1)
			emit(h.A, key)
		}
	}
	return nil
}
