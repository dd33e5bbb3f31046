package cluster

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"sync"
	"time"
)

// PageRecord is what a [Store] keeps of one page.
type PageRecord struct {
	// Group is the page's group; "" for a redirect whose target is not
	// known yet (pending).
	Group string
	// Sig is the page's similarity.Signature encoding without its word
	// sequence (Seq); nil for a redirect.
	Sig []byte
	// Popularity is the page's popularity score.
	Popularity float64
	// RedirectTo is the URL the page redirects to, "" for a content page.
	RedirectTo string
	// Verified reports that the page matched its group's current winner
	// (always true for a redirect duplicate and for the winner itself).
	Verified bool
	// Version is the version of the write that made the record
	// (client.Page.Version); 0 for an unversioned write and for every
	// record of a store written before versions.
	Version uint64
}

// Tombstone is what a [Store] keeps of a page removed by a versioned
// delete, so that an older write arriving later does not bring the page
// back: the delete's version and when it was applied. The service
// ignores it past Options.TombstoneTTL and sweeps it from the store.
type Tombstone struct {
	Version uint64
	Deleted time.Time
}

// GroupRecord is what a [Store] keeps of one group.
type GroupRecord struct {
	// Winner is the member that represents the group; its signature is
	// the group's representative signature (Zhu §5.1).
	Winner string
	// Members lists every member, sorted, the winner included.
	Members []string
}

// Redirect is one edge of the redirect index: Source redirects to Target.
type Redirect struct {
	Target, Source string
}

// Meta is the service's own state in a [Store].
type Meta struct {
	// NextGroup numbers the next group founded.
	NextGroup uint64
	// Partitioner is the encoded partition.Partitioner, nil until built.
	Partitioner []byte
	// SignerFingerprint is the fingerprint of the signing settings
	// (page.Signer.Fingerprint) of the store's signatures, recorded
	// from the first ingest batch that names one; "" until then.
	SignerFingerprint string
}

// Batch is one all-or-nothing write to a [Store]. A nil record deletes.
type Batch struct {
	Pages     map[string]*PageRecord
	Groups    map[string]*GroupRecord
	Redirects map[Redirect]bool // true adds the edge, false removes it
	// Tombstones sets (non-nil) or removes (nil) the tombstones of URLs.
	Tombstones map[string]*Tombstone
	Meta       *Meta
	// Touched lists the groups whose representative the batch changed,
	// sorted, and Founded the length vectors of the representatives it
	// founded, in order (the partitioner's sample). A store that several
	// replicas share logs them so that the others update their candidate
	// tables; the other stores ignore them.
	Touched []string
	Founded [][]uint32
}

// Store keeps the groups, the URL index and the signatures. Reads are safe
// for concurrent use with each other and with one Apply; Apply calls must
// not overlap. Records returned must not be modified.
type Store interface {
	// Page returns the record of url.
	Page(url string) (PageRecord, bool, error)
	// Group returns the record of group id.
	Group(id string) (GroupRecord, bool, error)
	// GroupSize returns the winner and the member count of group id,
	// cheaper than Group for a large group.
	GroupSize(id string) (winner string, size int, ok bool, err error)
	// Redirectors returns the pages that redirect to target directly.
	Redirectors(target string) ([]string, error)
	// Meta returns the service's state (zero in a new store).
	Meta() (Meta, error)
	// Groups calls fn with every group until fn fails.
	Groups(fn func(id string, g GroupRecord) error) error
	// Tombstone returns the tombstone of url.
	Tombstone(url string) (Tombstone, bool, error)
	// Tombstones calls fn with every tombstone until fn fails.
	Tombstones(fn func(url string, t Tombstone) error) error
	// Apply writes b atomically and durably: after it returns nil the
	// batch survives a crash; on error none of it is applied.
	Apply(b *Batch) error
	// Close releases the store.
	Close() error
}

// pageScanner is a [Store] that reads every page in one pass, faster than
// a Page call a page; url and rec (the page's record encoding) are valid
// during the call to fn only. The service rebuilds its candidate tables
// with it at start.
type pageScanner interface {
	scanPages(fn func(url, rec []byte) error) error
}

// ErrClosed is returned by a closed store.
var ErrClosed = errors.New("cluster: store closed")

// ErrStoreFailed is returned by Apply once a store can take no more
// writes until the service restarts (Pebble after a failed write to its
// log, e.g. a full disk); it still serves reads.
var ErrStoreFailed = errors.New("cluster: store failed, writes refused until restart")

// storeFailer is a [Store] that can fail for writes for good
// ([ErrStoreFailed]); /healthz reports it.
type storeFailer interface {
	// writeFailure returns the failure, nil while the store takes writes.
	writeFailure() error
}

// MemStore is a [Store] in memory, for tests and for a service that
// rebuilds its state on start. The zero value is not usable; use
// [NewMemStore].
type MemStore struct {
	mu        sync.RWMutex // guards every field below
	pages     map[string]PageRecord
	groups    map[string]GroupRecord
	redirects map[string]map[string]struct{}
	tombs     map[string]Tombstone
	meta      Meta
	closed    bool
}

// NewMemStore returns an empty memory store.
func NewMemStore() *MemStore {
	return &MemStore{pages: map[string]PageRecord{}, groups: map[string]GroupRecord{}, redirects: map[string]map[string]struct{}{}, tombs: map[string]Tombstone{}}
}

// Page implements [Store].
func (m *MemStore) Page(url string) (PageRecord, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return PageRecord{}, false, ErrClosed
	}
	p, ok := m.pages[url]
	return p, ok, nil
}

// Group implements [Store].
func (m *MemStore) Group(id string) (GroupRecord, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return GroupRecord{}, false, ErrClosed
	}
	g, ok := m.groups[id]
	return g, ok, nil
}

// GroupSize implements [Store].
func (m *MemStore) GroupSize(id string) (string, int, bool, error) {
	g, ok, err := m.Group(id)
	return g.Winner, len(g.Members), ok, err
}

// Redirectors implements [Store].
func (m *MemStore) Redirectors(target string) ([]string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	var out []string
	for s := range m.redirects[target] {
		out = append(out, s)
	}
	slices.Sort(out)
	return out, nil
}

// Meta implements [Store].
func (m *MemStore) Meta() (Meta, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return Meta{}, ErrClosed
	}
	return m.meta, nil
}

// Groups implements [Store]. fn must not call the store's Apply.
func (m *MemStore) Groups(fn func(id string, g GroupRecord) error) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return ErrClosed
	}
	for id, g := range m.groups {
		if err := fn(id, g); err != nil {
			return err
		}
	}
	return nil
}

// Tombstone implements [Store].
func (m *MemStore) Tombstone(url string) (Tombstone, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return Tombstone{}, false, ErrClosed
	}
	ts, ok := m.tombs[url]
	return ts, ok, nil
}

// Tombstones implements [Store]. fn must not call the store's Apply.
func (m *MemStore) Tombstones(fn func(url string, t Tombstone) error) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return ErrClosed
	}
	for u, ts := range m.tombs {
		if err := fn(u, ts); err != nil {
			return err
		}
	}
	return nil
}

// Apply implements [Store].
func (m *MemStore) Apply(b *Batch) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	for u, p := range b.Pages {
		if p == nil {
			delete(m.pages, u)
		} else {
			m.pages[u] = *p
		}
	}
	for id, g := range b.Groups {
		if g == nil {
			delete(m.groups, id)
		} else {
			m.groups[id] = *g
		}
	}
	for r, add := range b.Redirects {
		set := m.redirects[r.Target]
		if add {
			if set == nil {
				set = map[string]struct{}{}
				m.redirects[r.Target] = set
			}
			set[r.Source] = struct{}{}
		} else if set != nil {
			delete(set, r.Source)
			if len(set) == 0 {
				delete(m.redirects, r.Target)
			}
		}
	}
	for u, ts := range b.Tombstones {
		if ts == nil {
			delete(m.tombs, u)
		} else {
			m.tombs[u] = *ts
		}
	}
	if b.Meta != nil {
		m.meta = *b.Meta
	}
	return nil
}

// Close implements [Store].
func (m *MemStore) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

// Record encodings of the persistent stores: uvarint lengths and values,
// led by a version byte.

const recordVersion = 1

// storeFormat names the layout of the embedded stores (keys and record
// encodings); a store keeps it under its meta key "format", and a store
// of another format is refused at open with [ErrFormat].
const storeFormat = "winnow-store/1"

// ErrFormat is returned when a store was written in a format this version
// does not read.
var ErrFormat = errors.New("cluster: unsupported store format")

var errRecord = errors.New("cluster: corrupt store record")

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func readString(b []byte) (string, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return "", nil, errRecord
	}
	return string(b[k : k+int(n)]), b[k+int(n):], nil
}

func encodePage(p *PageRecord) []byte {
	b := make([]byte, 0, 16+len(p.Group)+len(p.Sig)+len(p.RedirectTo))
	flags := byte(0)
	if p.Verified {
		flags = 1
	}
	b = append(b, recordVersion, flags)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.Popularity))
	b = appendString(b, p.Group)
	b = appendString(b, p.RedirectTo)
	b = appendString(b, string(p.Sig))
	if p.Version != 0 {
		// After the fields an earlier version reads: it ignores the
		// rest, and an unversioned record keeps its earlier bytes.
		b = binary.AppendUvarint(b, p.Version)
	}
	return b
}

func decodePage(b []byte) (PageRecord, error) {
	var p PageRecord
	if len(b) < 10 || b[0] != recordVersion {
		return p, errRecord
	}
	p.Verified = b[1]&1 != 0
	p.Popularity = math.Float64frombits(binary.LittleEndian.Uint64(b[2:]))
	var err error
	b = b[10:]
	if p.Group, b, err = readString(b); err != nil {
		return p, err
	}
	if p.RedirectTo, b, err = readString(b); err != nil {
		return p, err
	}
	var sig string
	if sig, b, err = readString(b); err != nil {
		return p, err
	}
	if sig != "" {
		p.Sig = []byte(sig)
	}
	if len(b) > 0 {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return p, errRecord
		}
		p.Version = v
	}
	return p, nil
}

func encodeTombstone(t *Tombstone) []byte {
	b := append(make([]byte, 0, 20), recordVersion)
	b = binary.AppendUvarint(b, t.Version)
	return binary.AppendVarint(b, t.Deleted.UnixNano())
}

func decodeTombstone(b []byte) (Tombstone, error) {
	if len(b) < 1 || b[0] != recordVersion {
		return Tombstone{}, errRecord
	}
	v, k := binary.Uvarint(b[1:])
	if k <= 0 {
		return Tombstone{}, errRecord
	}
	ns, j := binary.Varint(b[1+k:])
	if j <= 0 {
		return Tombstone{}, errRecord
	}
	return Tombstone{Version: v, Deleted: time.Unix(0, ns).UTC()}, nil
}

func encodeGroup(g *GroupRecord) []byte {
	n := 8 + len(g.Winner)
	for _, m := range g.Members {
		n += len(m) + 2
	}
	b := make([]byte, 0, n)
	b = append(b, recordVersion)
	b = appendString(b, g.Winner)
	b = binary.AppendUvarint(b, uint64(len(g.Members)))
	for _, m := range g.Members {
		b = appendString(b, m)
	}
	return b
}

// decodeGroupHead decodes the winner and member count only.
func decodeGroupHead(b []byte) (winner string, size int, rest []byte, err error) {
	if len(b) < 1 || b[0] != recordVersion {
		return "", 0, nil, errRecord
	}
	if winner, b, err = readString(b[1:]); err != nil {
		return "", 0, nil, err
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return "", 0, nil, errRecord
	}
	return winner, int(n), b[k:], nil
}

func decodeGroup(b []byte) (GroupRecord, error) {
	w, n, b, err := decodeGroupHead(b)
	if err != nil {
		return GroupRecord{}, err
	}
	g := GroupRecord{Winner: w, Members: make([]string, n)}
	for i := range n {
		if g.Members[i], b, err = readString(b); err != nil {
			return GroupRecord{}, err
		}
	}
	return g, nil
}
