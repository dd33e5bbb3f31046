package proxy

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/ristretto/v2"

	"github.com/winnow-search/winnow/fetch"
	"github.com/winnow-search/winnow/similarity"
)

// entry is one cached page signature with what is needed to revalidate it.
type entry struct {
	sig       *similarity.Signature
	val       fetch.Validators
	fetchedAt time.Time
}

// sigCache holds page signatures by canonical URL in ristretto, with the
// cost of an entry in bytes so MaxBytes bounds the memory it holds.
type sigCache struct {
	c          *ristretto.Cache[string, *entry]
	ttl        time.Duration
	hits, miss atomic.Uint64
}

func newSigCache(maxBytes int64, ttl time.Duration) (*sigCache, error) {
	// About 2 KB per entry with a word sequence: ten counters per
	// expected entry, as ristretto advises.
	counters := max(maxBytes/2048*10, 1000)
	c, err := ristretto.NewCache(&ristretto.Config[string, *entry]{
		NumCounters: counters,
		MaxCost:     maxBytes,
		BufferItems: 64,
	})
	if err != nil {
		return nil, fmt.Errorf("proxy: signature cache: %w", err)
	}
	return &sigCache{c: c, ttl: ttl}, nil
}

// cost estimates the bytes an entry holds: the signature's slices and
// Bloom filter, plus the struct and map overhead.
func cost(s *similarity.Signature) int64 {
	n := int64(256)
	if s.Bloom != nil {
		n += int64(s.Bloom.Cap() / 8)
	}
	n += int64(2*len(s.MinHash) + 8*len(s.Supershingles) + 4*len(s.Fingerprints) + 4*len(s.Lengths) + 4*len(s.Seq))
	return n
}

func (c *sigCache) get(key string) (*entry, bool) {
	e, ok := c.c.Get(key)
	if ok {
		c.hits.Add(1)
	} else {
		c.miss.Add(1)
	}
	return e, ok
}

func (c *sigCache) set(key string, e *entry) {
	// Kept twice as long as it is fresh: a stale entry still serves while
	// it is revalidated in the background.
	c.c.SetWithTTL(key, e, cost(e.sig), 2*c.ttl)
}

func (c *sigCache) close() { c.c.Close() }

// fresh reports whether an entry is young enough to use without
// revalidation.
func (c *sigCache) fresh(e *entry, now time.Time) bool { return now.Sub(e.fetchedAt) < c.ttl }
