package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

var (
	bucketPages     = []byte("pages")
	bucketGroups    = []byte("groups")
	bucketRedirects = []byte("redirects")
	bucketMeta      = []byte("meta")
	keyNextGroup    = []byte("next_group")
	keyPartitioner  = []byte("partitioner")
	keyFormat       = []byte("format")
)

// fillPercent is how full bbolt fills the pages it splits.
const fillPercent = 0.9

// BoltStore is the embedded [Store] on a bbolt file, the default. Each
// Apply is one bbolt transaction, synced to disk on commit, so an applied
// batch survives kill -9 and a failed one leaves nothing behind.
type BoltStore struct {
	db *bolt.DB
}

// OpenBolt opens or creates the store at path. It fails after a second if
// another process holds the file, and with [ErrFormat] if the file holds
// another format.
func OpenBolt(path string) (*BoltStore, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return nil, fmt.Errorf("cluster: open store: %w", err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketPages, bucketGroups, bucketRedirects, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		// A file written before the format key existed has this format.
		m := tx.Bucket(bucketMeta)
		if v := m.Get(keyFormat); v != nil {
			if string(v) != storeFormat {
				return fmt.Errorf("%w: %q, want %q", ErrFormat, v, storeFormat)
			}
			return nil
		}
		return m.Put(keyFormat, []byte(storeFormat))
	})
	if err != nil {
		db.Close()
		if errors.Is(err, ErrFormat) {
			return nil, err
		}
		return nil, fmt.Errorf("cluster: open store: %w", err)
	}
	return &BoltStore{db: db}, nil
}

// Page implements [Store].
func (s *BoltStore) Page(url string) (p PageRecord, ok bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketPages).Get([]byte(url))
		if v == nil {
			return nil
		}
		ok = true
		p, err = decodePage(v)
		return err
	})
	return p, ok, err
}

// Group implements [Store].
func (s *BoltStore) Group(id string) (g GroupRecord, ok bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketGroups).Get([]byte(id))
		if v == nil {
			return nil
		}
		ok = true
		g, err = decodeGroup(v)
		return err
	})
	return g, ok, err
}

// GroupSize implements [Store].
func (s *BoltStore) GroupSize(id string) (winner string, size int, ok bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketGroups).Get([]byte(id))
		if v == nil {
			return nil
		}
		ok = true
		winner, size, _, err = decodeGroupHead(v)
		return err
	})
	return winner, size, ok, err
}

func redirectKey(r Redirect) []byte {
	k := make([]byte, 0, len(r.Target)+1+len(r.Source))
	k = append(k, r.Target...)
	k = append(k, 0)
	return append(k, r.Source...)
}

// Redirectors implements [Store].
func (s *BoltStore) Redirectors(target string) (out []string, err error) {
	prefix := append([]byte(target), 0)
	err = s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketRedirects).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			out = append(out, string(k[len(prefix):]))
		}
		return nil
	})
	return out, err
}

// Meta implements [Store].
func (s *BoltStore) Meta() (m Meta, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMeta)
		if v := b.Get(keyNextGroup); v != nil {
			n, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil {
				return errRecord
			}
			m.NextGroup = n
		}
		if v := b.Get(keyPartitioner); v != nil {
			m.Partitioner = bytes.Clone(v)
		}
		return nil
	})
	return m, err
}

// Groups implements [Store].
func (s *BoltStore) Groups(fn func(id string, g GroupRecord) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketGroups).ForEach(func(k, v []byte) error {
			g, err := decodeGroup(v)
			if err != nil {
				return err
			}
			return fn(string(k), g)
		})
	})
}

// scanPages implements pageScanner: one read transaction.
func (s *BoltStore) scanPages(fn func(url, rec []byte) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPages).ForEach(fn)
	})
}

// Apply implements [Store]: one bbolt transaction, fsynced on commit.
func (s *BoltStore) Apply(b *Batch) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		pages, groups, redirects := tx.Bucket(bucketPages), tx.Bucket(bucketGroups), tx.Bucket(bucketRedirects)
		// Group IDs only grow, and crawls add URLs in runs: fuller pages
		// than bbolt's default half keep the file small.
		pages.FillPercent, groups.FillPercent = fillPercent, fillPercent
		for u, p := range b.Pages {
			var err error
			if p == nil {
				err = pages.Delete([]byte(u))
			} else {
				err = pages.Put([]byte(u), encodePage(p))
			}
			if err != nil {
				return err
			}
		}
		for id, g := range b.Groups {
			var err error
			if g == nil {
				err = groups.Delete([]byte(id))
			} else {
				err = groups.Put([]byte(id), encodeGroup(g))
			}
			if err != nil {
				return err
			}
		}
		for r, add := range b.Redirects {
			var err error
			if add {
				err = redirects.Put(redirectKey(r), nil)
			} else {
				err = redirects.Delete(redirectKey(r))
			}
			if err != nil {
				return err
			}
		}
		if b.Meta != nil {
			m := tx.Bucket(bucketMeta)
			if err := m.Put(keyNextGroup, strconv.AppendUint(nil, b.Meta.NextGroup, 10)); err != nil {
				return err
			}
			if b.Meta.Partitioner != nil {
				if err := m.Put(keyPartitioner, b.Meta.Partitioner); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
			return ErrClosed
		}
		return fmt.Errorf("cluster: store: %w", err)
	}
	return nil
}

// Size returns the store file's size in bytes.
func (s *BoltStore) Size() (n int64, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		n = tx.Size()
		return nil
	})
	return n, err
}

// Close implements [Store].
func (s *BoltStore) Close() error {
	return s.db.Close()
}
