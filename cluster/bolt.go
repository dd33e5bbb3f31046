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
	bucketTombs     = []byte("tombstones")
	keyNextGroup    = []byte("next_group")
	keyPartitioner  = []byte("partitioner")
	keyFormat       = []byte("format")
	keySigner       = []byte("signer")
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
		// A store written before versions gets the tombstones' bucket.
		for _, b := range [][]byte{bucketPages, bucketGroups, bucketRedirects, bucketMeta, bucketTombs} {
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
func (s *BoltStore) Page(url string) (PageRecord, bool, error) {
	return boltGet(s.db, bucketPages, url, decodePage)
}

// Group implements [Store].
func (s *BoltStore) Group(id string) (GroupRecord, bool, error) {
	return boltGet(s.db, bucketGroups, id, decodeGroup)
}

// boltGet decodes the record of key in bucket, if there is one.
func boltGet[T any](db *bolt.DB, bucket []byte, key string, decode func([]byte) (T, error)) (rec T, ok bool, err error) {
	err = db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucket).Get([]byte(key))
		if v == nil {
			return nil
		}
		ok = true
		rec, err = decode(v)
		return err
	})
	return rec, ok, err
}

// boltEach calls fn with every key of bucket and its decoded record, in
// one read transaction, until fn fails.
func boltEach[T any](db *bolt.DB, bucket []byte, decode func([]byte) (T, error), fn func(string, T) error) error {
	return db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucket).ForEach(func(k, v []byte) error {
			rec, err := decode(v)
			if err != nil {
				return err
			}
			return fn(string(k), rec)
		})
	})
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
		m.SignerFingerprint = string(b.Get(keySigner))
		return nil
	})
	return m, err
}

// Groups implements [Store].
func (s *BoltStore) Groups(fn func(id string, g GroupRecord) error) error {
	return boltEach(s.db, bucketGroups, decodeGroup, fn)
}

// Tombstone implements [Store].
func (s *BoltStore) Tombstone(url string) (Tombstone, bool, error) {
	return boltGet(s.db, bucketTombs, url, decodeTombstone)
}

// Tombstones implements [Store].
func (s *BoltStore) Tombstones(fn func(url string, t Tombstone) error) error {
	return boltEach(s.db, bucketTombs, decodeTombstone, fn)
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
		tombs := tx.Bucket(bucketTombs)
		for u, t := range b.Tombstones {
			var err error
			if t == nil {
				err = tombs.Delete([]byte(u))
			} else {
				err = tombs.Put([]byte(u), encodeTombstone(t))
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
			if b.Meta.SignerFingerprint != "" {
				if err := m.Put(keySigner, []byte(b.Meta.SignerFingerprint)); err != nil {
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
