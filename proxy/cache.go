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
	sig *similarity.Signature
	id  uint64 // sigID(sig), computed once
	// canonical is the canonical URL the page declares
	// (<link rel="canonical">, canon form), "" when it declares none or
	// itself; the entry keeps that string, never the page's document.
	canonical string
	val       fetch.Validators
	fetchedAt time.Time
	// expires is when the cache stops serving the entry (set by
	// sigCache.set), and gone turns true once the cache has dropped or
	// replaced it: together they tell a hotList whether the entry is
	// still what a look-up would return, without the look-up.
	expires time.Time
	gone    atomic.Bool
}

// sigCache holds page signatures by canonical URL in ristretto, with the
// cost of an entry in bytes so MaxBytes bounds the memory it holds.
type sigCache struct {
	c          *ristretto.Cache[string, *entry]
	ttl        time.Duration
	hits, miss atomic.Uint64
	// exits counts the entries the cache has let go (replaced, deleted,
	// evicted or rejected): while it stays put, an entry seen current is
	// current until its deadline (hotList.current's fast path).
	exits atomic.Uint64
}

func newSigCache(maxBytes int64, ttl time.Duration) (*sigCache, error) {
	// About 2 KB per entry with a word sequence: ten counters per
	// expected entry, as ristretto advises.
	counters := max(maxBytes/2048*10, 1000)
	sc := &sigCache{ttl: ttl}
	c, err := ristretto.NewCache(&ristretto.Config[string, *entry]{
		NumCounters: counters,
		MaxCost:     maxBytes,
		BufferItems: 64,
		// Called for a value replaced, deleted, evicted or rejected.
		OnExit: func(e *entry) {
			if e != nil {
				e.gone.Store(true)
				sc.exits.Add(1)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("proxy: signature cache: %w", err)
	}
	sc.c = c
	return sc, nil
}

// cost estimates the memory an entry takes in a full cache: the
// signature's slices and Bloom filter plus the structs, the key and the
// cache's own maps (about 750 bytes an entry, measured), doubled because a
// cache that admits and evicts all day leaves as much again in freed slots
// of partly used heap spans, which the runtime can neither compact nor
// return (BenchmarkCacheFull: the heap in use then stays near the
// configured size).
func cost(s *similarity.Signature) int64 {
	n := int64(768)
	if s.Bloom != nil {
		n += int64(s.Bloom.Cap() / 8)
	}
	n += int64(2*len(s.MinHash) + 8*len(s.Supershingles) + 4*len(s.Fingerprints) + 4*len(s.Lengths) + 4*len(s.Seq))
	return 2 * n
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
	if e.id == 0 {
		e.id = sigID(e.sig)
	}
	// Kept twice as long as it is fresh: a stale entry still serves while
	// it is revalidated in the background. expires is taken before the
	// cache's own expiry, so it is never later.
	e.expires = time.Now().Add(2 * c.ttl)
	c.c.SetWithTTL(key, e, cost(e.sig)+2*int64(len(e.canonical)), 2*c.ttl)
}

// current reports whether e is still the entry the cache serves for its
// key and fresh at now, so a look-up can be skipped.
func (c *sigCache) current(e *entry, now time.Time) bool {
	return !e.gone.Load() && now.Before(c.deadline(e))
}

// deadline is when e stops being current, unless the cache lets it go
// before.
func (c *sigCache) deadline(e *entry) time.Time {
	if d := e.fetchedAt.Add(c.ttl); d.Before(e.expires) {
		return d
	}
	return e.expires
}

func (c *sigCache) close() { c.c.Close() }

// fresh reports whether an entry is young enough to use without
// revalidation.
func (c *sigCache) fresh(e *entry, now time.Time) bool { return now.Sub(e.fetchedAt) < c.ttl }
