package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/cluster/partition"
	"github.com/winnow-search/winnow/similarity"
)

// Defaults of Options.
const (
	DefaultRepairRatio = 0.2
	DefaultParts       = 64
	DefaultDims        = 3
	DefaultSampleSize  = 1000
	DefaultTau         = 0.5
	DefaultMaxBatch    = 1000
	DefaultMaxURL      = 4096
	// DefaultTombstoneTTL is how long a versioned delete refuses older
	// writes of its page: long enough for a crawler queue replayed
	// after a few days' outage.
	DefaultTombstoneTTL = 7 * 24 * time.Hour
)

// maxSweep bounds the expired tombstones one ingest batch removes; a
// sweep that finds more goes on in the next batch.
const maxSweep = 10_000

// Options configures a Service. The zero value uses the defaults.
type Options struct {
	// Decision decides whether a page matches a group winner; the zero
	// value is similarity's default decision.
	Decision similarity.Decision
	// DropSeq stores pages without their word sequence
	// (similarity.Signature.Seq, 4 bytes a word, at most 32 KiB): a page
	// then takes under 1 KB of store, but verification against a winner
	// falls back to min-hash Jaccard (similarity.DefaultVerifyJaccard)
	// unless the strong accept passes, and that fallback refuses drifted
	// copies that the LCS accepts: families of such copies split, in
	// every ingest order (docs/reliability.md). Off by default: the
	// service verifies as winnow compare and dedup do.
	DropSeq bool
	// Winner holds the winner rules.
	Winner WinnerRules
	// RepairRatio is the fraction of a group's members that may fail
	// verification against a new winner before the group is repaired
	// (re-clustered). Zero means DefaultRepairRatio (0.2); negative
	// never repairs.
	RepairRatio float64
	// Parts and Dims shape the tier-2 partitioner (Zhu §4). Zero means
	// DefaultParts (64) and DefaultDims (3).
	Parts, Dims int
	// SampleSize is the number of group representatives whose length
	// vectors the partitioner is built from; until then tier 2 searches
	// one unpartitioned table. Zero means DefaultSampleSize (1000).
	SampleSize int
	// Tau is the similarity threshold of the partition bound
	// (partition.Partitioner.Candidates). Zero means DefaultTau (0.5).
	Tau float64
	// MaxBatch is the most pages of one ingest and URLs of one lookup.
	// Zero means DefaultMaxBatch (1000).
	MaxBatch int
	// TombstoneTTL is how long the tombstone of a versioned delete
	// refuses older writes of its page (client.Page.Version): past it,
	// the tombstone is ignored and an ingest batch removes it from the
	// store (one scan of the tombstones every TTL/4), so the tombstones
	// held are the versioned deletes of one TTL. Zero means
	// DefaultTombstoneTTL (7 days); negative keeps tombstones for ever.
	TombstoneTTL time.Duration
	// Logger receives errors of the HTTP handler; nil means
	// slog.Default().
	Logger *slog.Logger
}

// InputError is an invalid item of a request; nothing of the request was
// applied.
type InputError struct {
	// Item is the index of the offending item, or -1 for the request.
	Item int
	// URL is the item's URL.
	URL string
	// Err is the reason.
	Err error
}

// Error names the item and its URL.
func (e *InputError) Error() string {
	if e.Item < 0 {
		return e.Err.Error()
	}
	return fmt.Sprintf("cluster: item %d (%s): %v", e.Item, e.URL, e.Err)
}

// Unwrap returns the reason.
func (e *InputError) Unwrap() error { return e.Err }

// Errors of invalid input, wrapped in an [InputError].
var (
	ErrBatchSize = errors.New("cluster: batch too large")
	ErrURL       = errors.New("cluster: invalid URL")
	ErrSignature = errors.New("cluster: invalid signature")
	ErrPage      = errors.New("cluster: invalid page")
)

// Service is the cluster service of Zhu et al. §5: tier 1 keeps every URL
// in at most one group, each with a winner whose signature represents it;
// tier 2 compares the new or changed pages of a batch with the group
// representatives in the partitions their length vectors allow. It is safe
// for concurrent use: ingests are serialized, lookups run alongside.
type Service struct {
	o  Options
	st Store

	mu     sync.Mutex // serializes Ingest; guards idx, meta, part, sample, seq, swept
	idx    *index
	meta   Meta
	part   *partition.Partitioner
	sample [][]uint32
	seq    uint64    // the shared store's log position the tables reflect
	swept  time.Time // the last sweep of expired tombstones; zero: none yet

	now func() time.Time // the clock of tombstones (tests set it)

	m serviceMetrics

	// stats is Stats as of the last change of the candidate tables, read
	// without mu: an ingest holds mu while it waits for a shared store's
	// lease, and /metrics must answer meanwhile.
	stats atomic.Pointer[Stats]

	reach int // simhash reach of the candidate tables (simhashReach; tests change it)
}

// New returns a service over st, rebuilding the candidate tables from the
// stored groups. The service does not close st.
func New(st Store, o Options) (*Service, error) {
	o.RepairRatio = cmp.Or(o.RepairRatio, DefaultRepairRatio)
	o.Parts = cmp.Or(o.Parts, DefaultParts)
	o.Dims = cmp.Or(o.Dims, DefaultDims)
	o.SampleSize = cmp.Or(o.SampleSize, DefaultSampleSize)
	o.Tau = cmp.Or(o.Tau, DefaultTau)
	o.MaxBatch = cmp.Or(o.MaxBatch, DefaultMaxBatch)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Parts < 1 || o.Dims < 1 || o.SampleSize < 1 || o.MaxBatch < 1 || o.Tau < 0 || o.Tau > 1 {
		return nil, errors.New("cluster: invalid options")
	}
	o.TombstoneTTL = cmp.Or(o.TombstoneTTL, DefaultTombstoneTTL)
	s := &Service{o: o, st: st, reach: simhashReach, now: time.Now}
	if sh, ok := st.(sharedStore); ok {
		// The log position before the load: a batch that another replica
		// writes during the load is replayed at the first ingest.
		seq, err := sh.logSeq(context.Background())
		if err != nil {
			return nil, err
		}
		s.seq = seq
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	s.m = newServiceMetrics(s)
	return s, nil
}

// load reads the service's state and rebuilds the candidate tables from
// the stored groups.
func (s *Service) load() error {
	meta, err := s.st.Meta()
	if err != nil {
		return err
	}
	s.meta, s.part, s.sample = meta, nil, nil
	if meta.Partitioner != nil {
		p := new(partition.Partitioner)
		if err := p.UnmarshalBinary(meta.Partitioner); err != nil {
			return fmt.Errorf("cluster: stored partitioner: %w", err)
		}
		s.part = p
	}
	type gw struct{ id, winner string }
	var groups []gw
	err = s.st.Groups(func(id string, g GroupRecord) error {
		if g.Winner != "" {
			groups = append(groups, gw{id, g.Winner})
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.idx = newIndex(s.part, s.o.Tau, s.gate(), s.reach, len(groups))
	add := func(g gw, p PageRecord) error {
		if p.Sig == nil {
			return nil
		}
		var sig similarity.Signature
		if err := sig.UnmarshalBinary(p.Sig); err != nil {
			return fmt.Errorf("cluster: stored signature of %s: %w", g.winner, err)
		}
		s.idx.addSlot(g.id, &sig)
		if s.part == nil {
			s.sample = append(s.sample, sig.Lengths)
		}
		return nil
	}
	// The winners' records: in one pass over the pages in key order where
	// the store can (far faster than a read per winner), else one by one.
	rest := groups
	if sc, ok := s.st.(pageScanner); ok {
		rest = nil
		winners := make(map[uint64]int32, len(groups)) // xxh3 of the winner's URL
		for i, g := range groups {
			h := xxh3.HashString(g.winner)
			if _, dup := winners[h]; dup {
				rest = append(rest, g) // a collision: read it alone
				continue
			}
			winners[h] = int32(i)
		}
		err := sc.scanPages(func(url, rec []byte) error {
			i, ok := winners[xxh3.Hash(url)]
			if !ok || groups[i].winner != string(url) {
				return nil
			}
			p, err := decodePage(rec)
			if err != nil {
				return err
			}
			return add(groups[i], p)
		})
		if err != nil {
			return err
		}
	}
	for _, g := range rest {
		p, ok, err := s.st.Page(g.winner)
		if err != nil {
			return err
		}
		if ok {
			if err := add(g, p); err != nil {
				return err
			}
		}
	}
	s.idx.postAll()
	s.setStats()
	return nil
}

// setStats publishes Stats after a change of the candidate tables; mu is
// held.
func (s *Service) setStats() {
	s.stats.Store(&Stats{Groups: s.idx.len(), Partitioned: s.part != nil})
}

// catchUpLocked brings the candidate tables and the service's state up to
// the batches that other replicas sharing the store wrote (ch).
func (s *Service) catchUpLocked(ch logChanges) error {
	if ch.all {
		if err := s.load(); err != nil {
			return err
		}
		s.seq = ch.seq
		return nil
	}
	if ch.seq == s.seq {
		return nil
	}
	meta, err := s.st.Meta()
	if err != nil {
		return err
	}
	s.meta = meta
	switch {
	case s.part == nil && meta.Partitioner != nil:
		p := new(partition.Partitioner)
		if err := p.UnmarshalBinary(meta.Partitioner); err != nil {
			return fmt.Errorf("cluster: stored partitioner: %w", err)
		}
		s.part, s.sample = p, nil
		s.idx.repartition(p)
	case s.part == nil:
		s.sample = append(s.sample, ch.founded...)
	}
	done := make(map[string]bool, len(ch.touched))
	for _, id := range ch.touched {
		if done[id] {
			continue
		}
		done[id] = true
		s.idx.remove(id)
		w, _, ok, err := s.st.GroupSize(id)
		if err != nil {
			return err
		}
		if !ok || w == "" {
			continue
		}
		p, ok, err := s.st.Page(w)
		if err != nil {
			return err
		}
		if !ok || p.Sig == nil {
			continue
		}
		sig := new(similarity.Signature)
		if err := sig.UnmarshalBinary(p.Sig); err != nil {
			return fmt.Errorf("cluster: stored signature of %s: %w", w, err)
		}
		s.idx.add(id, sig)
	}
	s.seq = ch.seq
	s.setStats()
	return nil
}

// item is one validated page of an ingest: URL and RedirectTo are keys
// (pageKey).
type item struct {
	client.Page
	sent string                // the URL as sent
	sig  *similarity.Signature // nil for a redirect or delete
	enc  []byte                // sig without Seq
}

// pageKey returns the key of the page at u: its canonical URL
// (canon.URL), the key the proxy asks under, so that the spellings of one
// page that crawlers write (host case, default port, tracking parameters,
// parameter order, fragment) meet in one record.
func pageKey(u string) (string, error) {
	if u == "" || len(u) > DefaultMaxURL {
		return "", fmt.Errorf("%w: empty or over %d bytes", ErrURL, DefaultMaxURL)
	}
	k, err := canon.URL(u)
	if err != nil {
		return "", fmt.Errorf("%w: %q is not an absolute http(s) URL: %v", ErrURL, u, err)
	}
	if len(k) > DefaultMaxURL {
		return "", fmt.Errorf("%w: over %d bytes canonicalized", ErrURL, DefaultMaxURL)
	}
	return k, nil
}

// validate checks every page before anything is applied.
func (s *Service) validate(pages []client.Page) ([]item, error) {
	if len(pages) > s.o.MaxBatch {
		return nil, &InputError{Item: -1, Err: fmt.Errorf("%w: %d pages, limit %d", ErrBatchSize, len(pages), s.o.MaxBatch)}
	}
	items := make([]item, len(pages))
	for i, p := range pages {
		fail := func(err error) ([]item, error) { return nil, &InputError{Item: i, URL: p.URL, Err: err} }
		key, err := pageKey(p.URL)
		if err != nil {
			return fail(err)
		}
		if p.Popularity != p.Popularity || p.Popularity > 1e300 || p.Popularity < -1e300 {
			return fail(fmt.Errorf("%w: popularity is not finite", ErrPage))
		}
		items[i].Page, items[i].sent = p, p.URL
		items[i].URL = key
		switch {
		case p.Deleted && p.RedirectTo != "":
			return fail(fmt.Errorf("%w: deleted page with a redirect", ErrPage))
		case p.Deleted:
		case p.RedirectTo != "":
			to, err := pageKey(p.RedirectTo)
			if err != nil {
				return fail(fmt.Errorf("redirect_to: %w", err))
			}
			if to == key {
				return fail(fmt.Errorf("%w: redirects to itself (%s)", ErrPage, key))
			}
			items[i].RedirectTo = to
		default:
			if len(p.Signature) == 0 {
				return fail(fmt.Errorf("%w: missing", ErrSignature))
			}
			sig := new(similarity.Signature)
			if err := sig.UnmarshalBinary(p.Signature); err != nil {
				return fail(fmt.Errorf("%w: %w", ErrSignature, err))
			}
			if s.o.DropSeq {
				sig.Seq = nil
			}
			enc, err := sig.MarshalBinary()
			if err != nil {
				return fail(fmt.Errorf("%w: %w", ErrSignature, err))
			}
			items[i].sig, items[i].enc = sig, enc
		}
	}
	return items, nil
}

// Ingest applies pages in order, as one all-or-nothing batch, and returns
// one result per page. Invalid input fails with an *InputError before
// anything is applied. It is [Service.IngestSigned] of pages whose
// signing settings are not named.
func (s *Service) Ingest(pages []client.Page) ([]client.IngestResult, error) {
	return s.IngestSigned("", pages)
}

// IngestSigned is Ingest of pages whose signatures were made with the
// signing settings of fingerprint signer (page.Signer.Fingerprint; ""
// when not named, as Ingest). The store records the first fingerprint
// named; a batch naming another fails with a *[SignerError] and nothing
// of it is applied, since signatures of other settings do not compare.
func (s *Service) IngestSigned(signer string, pages []client.Page) ([]client.IngestResult, error) {
	items, err := s.validate(pages)
	if err != nil {
		s.m.rejected.Inc()
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	start := s.m.now()
	if sh, ok := s.st.(sharedStore); ok {
		// Other replicas write the same store: take the writer lease and
		// see their batches before comparing anything.
		ctx := context.Background()
		ch, err := sh.lease(ctx, s.seq)
		if err != nil {
			return nil, err
		}
		defer sh.release(ctx)
		if err := s.catchUpLocked(ch); err != nil {
			return nil, err
		}
	}
	t := s.begin()
	switch {
	case signer == "":
		s.m.signerMissing.Inc()
	case s.meta.SignerFingerprint == "":
		t.meta.SignerFingerprint = signer
		s.m.signerMatched.Inc()
	case s.meta.SignerFingerprint != signer:
		s.m.signerRefused.Inc()
		return nil, &SignerError{Store: s.meta.SignerFingerprint, Batch: signer}
	default:
		s.m.signerMatched.Inc()
	}
	now := s.now()
	if err := s.sweepLocked(t, now); err != nil {
		return nil, err
	}
	res := make([]client.IngestResult, len(items))
	for i := range items {
		it := &items[i]
		if it.Version != 0 {
			cur, tomb, err := t.version(it.URL, now)
			if err != nil {
				return nil, err
			}
			if it.Version <= cur {
				res[i] = client.IngestResult{URL: it.sent, Status: client.StatusStale, Version: cur}
				continue
			}
			switch {
			case it.Deleted:
				t.b.Tombstones[it.URL] = &Tombstone{Version: it.Version, Deleted: now}
			case tomb:
				t.b.Tombstones[it.URL] = nil // the page lives again
			}
		}
		var status string
		switch {
		case it.Deleted:
			status, err = t.remove(it.URL)
		case it.RedirectTo != "":
			status, err = t.redirect(it)
		default:
			status, err = t.content(it)
		}
		if err == nil && it.sent != it.URL {
			// A store written before pages were keyed by canon.URL may
			// hold the page under the spelling sent: that record goes,
			// so a re-load moves an old store to the canonical keys
			// instead of holding each page twice.
			_, err = t.remove(it.sent)
		}
		if err != nil {
			return nil, err
		}
		res[i] = client.IngestResult{URL: it.sent, Status: status, Version: it.Version}
	}
	// Groups and winners as they stand after the whole batch.
	for i := range res {
		p, ok, err := t.page(items[i].URL)
		if err != nil {
			return nil, err
		}
		if ok && p.Group != "" {
			g, _, err := t.group(p.Group)
			if err != nil {
				return nil, err
			}
			res[i].Group, res[i].Winner = p.Group, g.Winner
		}
	}
	if err := s.commit(t); err != nil {
		return nil, err
	}
	for _, r := range res {
		s.m.status(r.Status).Inc()
	}
	s.m.ingestDuration.UpdateDuration(start)
	return res, nil
}

// Lookup returns the duplicate status of each URL, looked up under its
// canonical URL. A member is reported with its winner only when it was
// verified against that winner.
func (s *Service) Lookup(urls []string) ([]client.LookupResult, error) {
	if len(urls) > s.o.MaxBatch {
		return nil, &InputError{Item: -1, Err: fmt.Errorf("%w: %d URLs, limit %d", ErrBatchSize, len(urls), s.o.MaxBatch)}
	}
	out := make([]client.LookupResult, len(urls))
	for i, raw := range urls {
		out[i].URL = raw
		u, err := canon.URL(raw)
		if err != nil {
			continue // no page has it
		}
		p, ok, err := s.st.Page(u)
		if err == nil && !ok && u != raw {
			// A store written before pages were keyed by canon.URL.
			u = raw
			p, ok, err = s.st.Page(u)
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		out[i].Known = true
		if p.Group == "" {
			continue
		}
		w, n, ok, err := s.st.GroupSize(p.Group)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		out[i].Group, out[i].Size, out[i].IsWinner = p.Group, n, w == u
		if w == u || p.Verified {
			out[i].Winner = w
		}
	}
	s.m.lookups.Add(len(urls))
	known := 0
	for _, r := range out {
		if r.Known {
			known++
		}
	}
	s.m.lookupKnown.Add(known)
	s.m.lookupUnknown.Add(len(urls) - known)
	return out, nil
}

// Group returns group id, or nil when there is none.
func (s *Service) Group(id string) (*client.Group, error) {
	g, ok, err := s.st.Group(id)
	if err != nil || !ok {
		return nil, err
	}
	return &client.Group{ID: id, Winner: g.Winner, Members: slices.Clone(g.Members)}, nil
}

// Stats is a snapshot of the service's counters.
type Stats struct {
	// Groups is the number of groups with a representative in the
	// candidate tables.
	Groups int
	// Partitioned reports that the partitioner is built.
	Partitioned bool
}

// Stats returns a snapshot of the service's state, as of the last
// ingest that finished; it does not wait for one in progress.
func (s *Service) Stats() Stats {
	return *s.stats.Load()
}

// gate returns the decision's simhash gate: a pair farther apart never
// matches, so tier 2 drops such candidates before loading them.
func (s *Service) gate() int {
	if s.o.Decision.Gate == 0 {
		return similarity.DefaultGateSimhash
	}
	return s.o.Decision.Gate
}

// sweepLocked removes the tombstones past Options.TombstoneTTL with
// batch t, at most maxSweep of them: one scan of the store's tombstones
// every TTL/4.
func (s *Service) sweepLocked(t *txn, now time.Time) error {
	ttl := s.o.TombstoneTTL
	if ttl < 0 || !s.swept.IsZero() && now.Sub(s.swept) < ttl/4 {
		return nil
	}
	errFull := errors.New("sweep full")
	n := 0
	err := s.st.Tombstones(func(u string, ts Tombstone) error {
		if now.Sub(ts.Deleted) < ttl {
			return nil
		}
		t.b.Tombstones[u] = nil
		if n++; n >= maxSweep {
			return errFull
		}
		return nil
	})
	switch {
	case errors.Is(err, errFull):
		return nil // the next batch goes on
	case err != nil:
		return err
	}
	t.swept = now // once the batch is applied
	return nil
}

// SignerError is the refusal of an ingest batch whose signatures were
// made with other signing settings than the store's: such signatures do
// not compare. Nothing of the batch was applied.
type SignerError struct {
	// Store is the fingerprint the store recorded, Batch the batch's.
	Store, Batch string
}

// Error names both fingerprints and what to do.
func (e *SignerError) Error() string {
	return fmt.Sprintf("cluster: batch signed with settings %s, the store's signatures with %s: sign the pages with the store's settings, or ingest them into a new store", e.Batch, e.Store)
}

func (s *Service) begin() *txn {
	return &txn{
		s:       s,
		b:       Batch{Pages: map[string]*PageRecord{}, Groups: map[string]*GroupRecord{}, Redirects: map[Redirect]bool{}, Tombstones: map[string]*Tombstone{}},
		sigs:    map[string]*similarity.Signature{},
		ovl:     newIndex(s.part, s.o.Tau, s.gate(), s.reach, 0),
		touched: map[string]struct{}{},
		meta:    s.meta,
	}
}

func (s *Service) commit(t *txn) error {
	var newPart *partition.Partitioner
	if s.part == nil && len(s.sample)+len(t.lengths) >= s.o.SampleSize {
		sample := append(slices.Clip(s.sample), t.lengths...)
		p, err := partition.New(s.o.Dims, s.o.Parts, sample)
		if err != nil {
			return fmt.Errorf("cluster: partitioner: %w", err)
		}
		enc, err := p.MarshalBinary()
		if err != nil {
			return fmt.Errorf("cluster: partitioner: %w", err)
		}
		t.meta.Partitioner, newPart = enc, p
	}
	t.b.Meta = &t.meta
	t.b.Touched = slices.Sorted(maps.Keys(t.touched))
	t.b.Founded = t.lengths
	if err := s.st.Apply(&t.b); err != nil {
		return err
	}
	if sh, ok := s.st.(sharedStore); ok {
		s.seq = sh.applied()
	}
	s.meta = t.meta
	if !t.swept.IsZero() {
		s.swept = t.swept
	}
	for id := range t.touched {
		s.idx.remove(id)
		if rep, err := t.rep(id); err == nil && rep != nil {
			s.idx.add(id, rep)
		}
	}
	switch {
	case newPart != nil:
		s.part, s.sample = newPart, nil
		s.idx.repartition(newPart)
	case s.part == nil:
		s.sample = append(s.sample, t.lengths...)
	}
	s.setStats()
	return nil
}

func groupID(n uint64) string { return "g" + strconv.FormatUint(n, 36) }
