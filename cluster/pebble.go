package cluster

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// Defaults of PebbleOptions.
const (
	DefaultPebbleCache    = 64 << 20
	DefaultPebbleMemTable = 16 << 20
)

// Key prefixes of the Pebble store: one key space, one byte a kind.
const (
	pebblePage     = 'p' // p<url>: encodePage
	pebbleGroup    = 'g' // g<id>: encodeGroup
	pebbleRedirect = 'r' // r<target>\x00<source>: empty
	pebbleMeta     = 'm' // m<name>: next_group, partitioner, format, signer
	pebbleTomb     = 't' // t<url>: encodeTombstone
)

// PebbleOptions configures a [PebbleStore]. The zero value uses the
// defaults.
type PebbleOptions struct {
	// CacheSize bounds the block cache in bytes. Zero means
	// DefaultPebbleCache (64 MiB).
	CacheSize int64
	// MemTableSize is the size of one memtable in bytes; Pebble holds up
	// to two while one is flushed. Zero means DefaultPebbleMemTable
	// (16 MiB).
	MemTableSize uint64
	// Logger receives Pebble's events (at Debug) and errors; nil means
	// slog.Default().
	Logger *slog.Logger
}

// PebbleStore is the embedded [Store] on a Pebble LSM tree in a
// directory. Each Apply is one Pebble batch committed with a synced
// write-ahead log, so an applied batch survives kill -9 and a failed one
// leaves nothing behind. Its memory is bounded by the block cache and the
// memtables; the files are read, not mapped, so the operating system's
// page cache holds them outside the process. After a failed write (a
// full disk) it refuses every Apply with [ErrStoreFailed] and serves
// reads. Safe for concurrent use as [Store] says.
type PebbleStore struct {
	mu     sync.RWMutex // guards closed; held for reading by every call into db
	db     *pebble.DB
	closed bool
	// failed is the commit failure after which Pebble takes no more
	// writes (its commit pipeline is left locked); nil while it takes
	// them.
	failed atomic.Pointer[error]
}

// OpenPebble opens or creates the store in directory dir. It fails if
// another process holds the directory, with [ErrFormat] if the directory
// holds another format, and with the disk's error when the write-ahead
// log it replays cannot be flushed (a full disk).
func OpenPebble(dir string, o PebbleOptions) (*PebbleStore, error) {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	po := &pebble.Options{
		CacheSize:          cmp.Or(o.CacheSize, DefaultPebbleCache),
		MemTableSize:       cmp.Or(o.MemTableSize, DefaultPebbleMemTable),
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             pebbleLogger{log},
	}
	// Bloom filters in every level: the lookup of a URL the store does
	// not hold (each new page) reads no data block.
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	// Pebble flushes the write-ahead log it replays before Open returns,
	// and retries a failed flush for ever (a full disk): the first
	// failure of a flush or compaction fails the open instead. Pebble's
	// goroutines go on retrying; the process is expected to exit.
	background := make(chan error, 1)
	po.EventListener = &pebble.EventListener{BackgroundError: func(err error) {
		log.Error("pebble_error", "detail", "background error: "+err.Error())
		select {
		case background <- err:
		default:
		}
	}}
	type opened struct {
		db  *pebble.DB
		err error
	}
	done := make(chan opened, 1)
	go func() {
		db, err := pebble.Open(dir, po)
		done <- opened{db, err}
	}()
	var db *pebble.DB
	select {
	case o := <-done:
		if o.err != nil {
			return nil, fmt.Errorf("cluster: open store: %w", o.err)
		}
		db = o.db
	case err := <-background:
		select {
		case o := <-done: // it opened after all
			if o.err == nil {
				db = o.db
				break
			}
			return nil, fmt.Errorf("cluster: open store: %w", o.err)
		default:
			return nil, fmt.Errorf("cluster: open store: %w", err)
		}
	}
	if err := pebbleFormat(db); err != nil {
		db.Close()
		return nil, err
	}
	return &PebbleStore{db: db}, nil
}

// pebbleFormat checks the format key of db, writing it into a new store.
func pebbleFormat(db *pebble.DB) error {
	key := []byte{pebbleMeta, 'f', 'o', 'r', 'm', 'a', 't'}
	v, c, err := db.Get(key)
	switch {
	case err == nil:
		defer c.Close()
		if string(v) != storeFormat {
			return fmt.Errorf("%w: %q, want %q", ErrFormat, v, storeFormat)
		}
		return nil
	case !errors.Is(err, pebble.ErrNotFound):
		return fmt.Errorf("cluster: open store: %w", err)
	}
	it, err := db.NewIter(nil)
	if err != nil {
		return fmt.Errorf("cluster: open store: %w", err)
	}
	empty := !it.First()
	if err := it.Close(); err != nil {
		return fmt.Errorf("cluster: open store: %w", err)
	}
	if !empty {
		return fmt.Errorf("%w: no format key", ErrFormat)
	}
	if err := db.Set(key, []byte(storeFormat), pebble.Sync); err != nil {
		return fmt.Errorf("cluster: open store: %w", err)
	}
	return nil
}

func pebbleKey(kind byte, s string) []byte {
	k := make([]byte, 0, 1+len(s))
	return append(append(k, kind), s...)
}

func pebbleRedirectKey(r Redirect) []byte {
	k := make([]byte, 0, len(r.Target)+2+len(r.Source))
	k = append(k, pebbleRedirect)
	k = append(k, r.Target...)
	k = append(k, 0)
	return append(k, r.Source...)
}

// get calls fn with the value of key, if there is one, while the store is
// open; the value is valid during the call only.
func (s *PebbleStore) get(key []byte, fn func(v []byte) error) (bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return false, ErrClosed
	}
	v, c, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cluster: store: %w", err)
	}
	defer c.Close()
	return true, fn(v)
}

// Page implements [Store].
func (s *PebbleStore) Page(url string) (p PageRecord, ok bool, err error) {
	ok, err = s.get(pebbleKey(pebblePage, url), func(v []byte) (err error) {
		p, err = decodePage(v)
		return err
	})
	return p, ok, err
}

// Group implements [Store].
func (s *PebbleStore) Group(id string) (g GroupRecord, ok bool, err error) {
	ok, err = s.get(pebbleKey(pebbleGroup, id), func(v []byte) (err error) {
		g, err = decodeGroup(v)
		return err
	})
	return g, ok, err
}

// GroupSize implements [Store].
func (s *PebbleStore) GroupSize(id string) (winner string, size int, ok bool, err error) {
	ok, err = s.get(pebbleKey(pebbleGroup, id), func(v []byte) (err error) {
		winner, size, _, err = decodeGroupHead(v)
		return err
	})
	return winner, size, ok, err
}

// scan calls fn with every key and value whose key starts with prefix, in
// key order, until fn fails; they are valid during the call only.
func (s *PebbleStore) scan(prefix []byte, fn func(k, v []byte) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	upper := bytes.Clone(prefix)
	upper[len(upper)-1]++ // every prefix used ends below 0xff
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("cluster: store: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err == nil {
			err = fn(it.Key(), v)
		}
		if err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("cluster: store: %w", err)
	}
	return nil
}

// Redirectors implements [Store].
func (s *PebbleStore) Redirectors(target string) (out []string, err error) {
	prefix := pebbleRedirectKey(Redirect{Target: target})
	err = s.scan(prefix, func(k, _ []byte) error {
		out = append(out, string(k[len(prefix):]))
		return nil
	})
	return out, err
}

// Meta implements [Store].
func (s *PebbleStore) Meta() (m Meta, err error) {
	_, err = s.get(pebbleKey(pebbleMeta, "next_group"), func(v []byte) error {
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return errRecord
		}
		m.NextGroup = n
		return nil
	})
	if err != nil {
		return Meta{}, err
	}
	_, err = s.get(pebbleKey(pebbleMeta, "partitioner"), func(v []byte) error {
		m.Partitioner = bytes.Clone(v)
		return nil
	})
	if err != nil {
		return Meta{}, err
	}
	_, err = s.get(pebbleKey(pebbleMeta, "signer"), func(v []byte) error {
		m.SignerFingerprint = string(v)
		return nil
	})
	return m, err
}

// Groups implements [Store]. It sees the groups as they were when it
// started.
func (s *PebbleStore) Groups(fn func(id string, g GroupRecord) error) error {
	return pebbleEach(s, pebbleGroup, decodeGroup, fn)
}

// Tombstone implements [Store].
func (s *PebbleStore) Tombstone(url string) (t Tombstone, ok bool, err error) {
	ok, err = s.get(pebbleKey(pebbleTomb, url), func(v []byte) (err error) {
		t, err = decodeTombstone(v)
		return err
	})
	return t, ok, err
}

// Tombstones implements [Store]. It sees the tombstones as they were
// when it started.
func (s *PebbleStore) Tombstones(fn func(url string, t Tombstone) error) error {
	return pebbleEach(s, pebbleTomb, decodeTombstone, fn)
}

// pebbleEach calls fn with the name (the key after its kind byte) and
// the decoded record of every key of kind, in key order, until fn fails.
func pebbleEach[T any](s *PebbleStore, kind byte, decode func([]byte) (T, error), fn func(string, T) error) error {
	return s.scan([]byte{kind}, func(k, v []byte) error {
		rec, err := decode(v)
		if err != nil {
			return err
		}
		return fn(string(k[1:]), rec)
	})
}

// scanPages implements pageScanner: one iterator over the pages.
func (s *PebbleStore) scanPages(fn func(url, rec []byte) error) error {
	return s.scan([]byte{pebblePage}, func(k, v []byte) error { return fn(k[1:], v) })
}

// Apply implements [Store]: one batch, committed with a synced WAL.
func (s *PebbleStore) Apply(b *Batch) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	wb := s.db.NewBatch()
	defer wb.Close()
	var err error
	for u, p := range b.Pages {
		if p == nil {
			err = wb.Delete(pebbleKey(pebblePage, u), nil)
		} else {
			err = wb.Set(pebbleKey(pebblePage, u), encodePage(p), nil)
		}
		if err != nil {
			return fmt.Errorf("cluster: store: %w", err)
		}
	}
	for id, g := range b.Groups {
		if g == nil {
			err = wb.Delete(pebbleKey(pebbleGroup, id), nil)
		} else {
			err = wb.Set(pebbleKey(pebbleGroup, id), encodeGroup(g), nil)
		}
		if err != nil {
			return fmt.Errorf("cluster: store: %w", err)
		}
	}
	for r, add := range b.Redirects {
		if add {
			err = wb.Set(pebbleRedirectKey(r), nil, nil)
		} else {
			err = wb.Delete(pebbleRedirectKey(r), nil)
		}
		if err != nil {
			return fmt.Errorf("cluster: store: %w", err)
		}
	}
	for u, t := range b.Tombstones {
		if t == nil {
			err = wb.Delete(pebbleKey(pebbleTomb, u), nil)
		} else {
			err = wb.Set(pebbleKey(pebbleTomb, u), encodeTombstone(t), nil)
		}
		if err != nil {
			return fmt.Errorf("cluster: store: %w", err)
		}
	}
	if b.Meta != nil {
		err = wb.Set(pebbleKey(pebbleMeta, "next_group"), strconv.AppendUint(nil, b.Meta.NextGroup, 10), nil)
		if err == nil && b.Meta.Partitioner != nil {
			err = wb.Set(pebbleKey(pebbleMeta, "partitioner"), b.Meta.Partitioner, nil)
		}
		if err == nil && b.Meta.SignerFingerprint != "" {
			err = wb.Set(pebbleKey(pebbleMeta, "signer"), []byte(b.Meta.SignerFingerprint), nil)
		}
		if err != nil {
			return fmt.Errorf("cluster: store: %w", err)
		}
	}
	return s.commit(wb)
}

// commit commits wb with a synced write-ahead log. Pebble does not return
// from a failed write (a full disk): it panics, or calls Fatalf, with its
// commit pipeline locked, so that every later commit would wait forever.
// The panic becomes the error of this and of every later Apply, and the
// reads go on (the batch is not acknowledged; it may be visible until the
// restart, which drops it unless its log record reached the disk).
func (s *PebbleStore) commit(wb *pebble.Batch) (err error) {
	if f := s.failed.Load(); f != nil {
		return *f
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrStoreFailed, r)
			s.failed.Store(&err)
		}
	}()
	if err := wb.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("cluster: store: %w", err)
	}
	return nil
}

// writeFailure implements storeFailer.
func (s *PebbleStore) writeFailure() error {
	if f := s.failed.Load(); f != nil {
		return *f
	}
	return nil
}

// Size returns the bytes the store takes on disk: tables, write-ahead
// log and files awaiting deletion.
func (s *PebbleStore) Size() (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	return int64(s.db.Metrics().DiskSpaceUsage()), nil
}

// Close implements [Store]. It waits for the calls in progress; closing
// a closed store does nothing.
func (s *PebbleStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("cluster: close store: %w", err)
	}
	return nil
}

// pebbleLogger passes Pebble's messages to a slog.Logger.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug("pebble_event", "detail", fmt.Sprintf(format, args...))
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error("pebble_error", "detail", fmt.Sprintf(format, args...))
}

// Fatalf reports an error Pebble cannot recover from; Pebble expects it
// not to return. The panic of a commit is PebbleStore.commit's error.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error("pebble_fatal", "detail", msg)
	panic("cluster: pebble: " + msg)
}
