package proxy

import (
	"encoding/binary"
	"errors"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
	"weak"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/proxy/engine"
	"github.com/winnow-search/winnow/similarity"
)

// memo owns the proxy's memo layers: what it has computed once and
// reuses across requests (the package doc has their table). Every layer
// follows one invalidation rule: an entry is keyed by everything its value
// is computed from (content identities of signatures, canonical URLs,
// request bytes), so it is never stale, only evicted; and an entry that
// rests on signature-cache entries (hot lists, and the answers built on
// them) also holds those entries and serves only while each is still the
// cache's and fresh ([hotList.current]). Each layer is bounded: two
// generations of a fixed count (twoGen) or of bytes (answerCache). Safe
// for concurrent use.
type memo struct {
	verdicts *verdictCache
	// removeVerdicts are the content-equivalence decision's verdicts
	// (remove mode), kept apart: one pair has one verdict per purpose.
	removeVerdicts *verdictCache
	keys           *keyCache
	lists          *listCache
	hot            *hotLists
	rewrites       *twoGen[string, rewritten]
	routes         *twoGen[string, routed]
	// answers is nil when off: a negative AnswerCacheBytes, or a
	// cluster service, whose verdicts no hot list captures.
	answers *answerCache
}

// Memo layer sizes, in entries per generation.
const (
	memoVerdicts = 8 << 10  // pair verdicts, about 1 KB each
	memoKeys     = 16 << 10 // canonical URLs by raw URL
	memoLists    = 1024     // clustered lists
	memoHot      = 1024     // remembered lists of cached results
	memoRewrites = 4096     // rewritten request paths
	memoRoutes   = 4096     // requests the gate let through
	// memoMaxURI is the longest request URI the rewrites and routes
	// keep: search URIs are short, and a header may be 16 KiB, so
	// unique long URIs would otherwise hold up to 2 × 4096 × 32 KiB
	// in each layer.
	memoMaxURI = 1 << 10
)

// newMemo returns the memo layers; answerBytes bounds the answer cache
// (not positive: off).
func newMemo(answerBytes int64) *memo {
	return &memo{
		verdicts:       newVerdictCache(memoVerdicts),
		removeVerdicts: newVerdictCache(memoVerdicts),
		keys:           newKeyCache(memoKeys),
		lists:          newListCache(memoLists),
		hot:            newHotLists(memoHot),
		rewrites:       newTwoGen[string, rewritten](memoRewrites),
		routes:         newTwoGen[string, routed](memoRoutes),
		answers:        newAnswerCache(answerBytes),
	}
}

// verdictCache keeps the verdicts of pairs across queries, so a pair of
// cached pages is decided (and its LCS run) once, not on every query that
// shows both. Keys are content identities of the two signatures, not
// pointers, so the cache retains no signature. It holds two generations
// of at most max entries each: when the current one is full it becomes
// the previous one, which bounds memory (a verdict is about 1 KB) while
// keeping pairs in use.
type verdictCache struct {
	m *twoGen[[2]uint64, similarity.Verdict]
}

func newVerdictCache(max int) *verdictCache {
	return &verdictCache{m: newTwoGen[[2]uint64, similarity.Verdict](max)}
}

// twoGen is a map bounded to two generations of at most max entries:
// when the current generation is full it becomes the previous one (and
// the previous one is dropped); a hit in the previous generation moves the
// entry back to the current one. It approximates an LRU at the cost of one
// map assignment. Safe for concurrent use.
type twoGen[K comparable, V any] struct {
	mu        sync.Mutex
	cur, prev map[K]V
	max       int
}

func newTwoGen[K comparable, V any](max int) *twoGen[K, V] {
	return &twoGen[K, V]{cur: make(map[K]V, max), max: max}
}

func (g *twoGen[K, V]) get(k K) (V, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if v, ok := g.cur[k]; ok {
		return v, true
	}
	v, ok := g.prev[k]
	if ok {
		g.putLocked(k, v)
	}
	return v, ok
}

// getBytes is g.get for a key of bytes: a key found in the current
// generation is looked up without making it a string (a map index
// expression converts without allocating), so a hit allocates nothing.
func getBytes[V any](g *twoGen[string, V], k []byte) (V, bool) {
	g.mu.Lock()
	v, ok := g.cur[string(k)]
	g.mu.Unlock()
	if ok {
		return v, true
	}
	return g.get(string(k))
}

func (g *twoGen[K, V]) put(k K, v V) {
	g.mu.Lock()
	g.putLocked(k, v)
	g.mu.Unlock()
}

func (g *twoGen[K, V]) putLocked(k K, v V) {
	if len(g.cur) >= g.max {
		g.prev, g.cur = g.cur, make(map[K]V, g.max)
	}
	g.cur[k] = v
}

// sigID identifies a signature by its content: the simhash, the sizes and
// the min-hash values.
func sigID(s *similarity.Signature) uint64 {
	var h maphash.Hash
	h.SetSeed(idSeed)
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], s.Simhash)
	binary.LittleEndian.PutUint64(b[8:], uint64(s.Tokens))
	binary.LittleEndian.PutUint64(b[16:], uint64(s.Bytes))
	h.Write(b[:])
	if len(s.MinHash) > 0 {
		// The values' bytes in memory order: an identity within the
		// process, whatever the byte order.
		h.Write(unsafe.Slice((*byte)(unsafe.Pointer(&s.MinHash[0])), 2*len(s.MinHash)))
	}
	for _, v := range s.Supershingles {
		binary.LittleEndian.PutUint64(b[:8], v)
		h.Write(b[:8])
	}
	return h.Sum64()
}

// idSeed is fixed for the process so identities are stable across calls.
var idSeed = maphash.MakeSeed()

// Verdict implements similarity.VerdictCache.
func (c *verdictCache) Verdict(a, b *similarity.Signature) (similarity.Verdict, bool) {
	return c.m.get([2]uint64{sigID(a), sigID(b)})
}

// SetVerdict implements similarity.VerdictCache.
func (c *verdictCache) SetVerdict(a, b *similarity.Signature, v similarity.Verdict) {
	c.m.put([2]uint64{sigID(a), sigID(b)}, v)
}

// keyCache remembers canonical URLs by raw URL across queries (canon.URL
// costs about a microsecond a URL), in a twoGen map.
type keyCache struct{ m *twoGen[string, string] }

func newKeyCache(max int) *keyCache { return &keyCache{m: newTwoGen[string, string](max)} }

// key returns the canonical URL of raw and the error of canon.URL.
func (c *keyCache) key(raw string) (string, error) {
	if k, ok := c.m.get(raw); ok {
		if k == "" {
			return raw, errBadURL
		}
		return k, nil
	}
	k, err := canon.URL(raw)
	c.m.put(raw, k) // "" for a URL that cannot be canonicalized
	if err != nil {
		return raw, err
	}
	return k, nil
}

// errBadURL stands for a cached canon.URL failure.
var errBadURL = errors.New("proxy: URL cannot be canonicalized")

// listCache keeps the clustering of whole result lists: the list's key
// is a hash of its canonical URLs, the identities of its signatures (nil
// for a result not signed), the winners known and which result declares
// which canonical, so a list whose signatures or declarations changed is
// clustered anew. A twoGen map.
type listCache struct {
	m *twoGen[[2]uint64, *clusteredList]
}

// clusteredList is one list's clustering and the marks (with their
// explanations) it gives; both are shared and must not be modified.
type clusteredList struct {
	clusters []similarity.Cluster
	marks    []engine.Mark
}

func newListCache(max int) *listCache {
	return &listCache{m: newTwoGen[[2]uint64, *clusteredList](max)}
}

// key hashes a list (its canonical URLs, its signatures' identities, 0
// for none, the known winners and, by (nil: none), the result that
// declares each one canonical, which its marks name) with two independent
// seeds: 128 bits, so two lists never share a key in practice.
func (c *listCache) key(keys []string, ids []uint64, winners []bool, by []int) [2]uint64 {
	var out [2]uint64
	for i, seed := range [2]maphash.Seed{listSeedA, listSeedB} {
		var h maphash.Hash
		h.SetSeed(seed)
		var b [8]byte
		for j, k := range keys {
			h.WriteString(k)
			h.WriteByte(0)
			binary.LittleEndian.PutUint64(b[:], ids[j])
			h.Write(b[:])
			if j < len(winners) && winners[j] {
				h.WriteByte(1)
			}
			if by != nil && by[j] >= 0 {
				h.WriteByte(2)
				binary.LittleEndian.PutUint64(b[:], uint64(by[j]))
				h.Write(b[:])
			}
		}
		out[i] = h.Sum64()
	}
	return out
}

var listSeedA, listSeedB = maphash.MakeSeed(), maphash.MakeSeed()

// hotLists remembers, for a list of raw result URLs that was all in the
// signature cache, its canonical URLs, the cache entries and the list's
// key, so the next query that shows the same list skips two map look-ups
// a result (the canonical URL and the signature) and the list hash. A
// remembered list serves only while each of its entries is still the
// cache's and fresh (sigCache.current); one entry in turn is looked up
// for real on each use, which keeps the cache's admission counts alive
// for popular pages. The entries are held by weak pointers: a remembered
// list must not keep alive signatures the cache has let go, which it
// does not count. A twoGen map keyed by a hash of the URLs; the URLs
// themselves are compared on a hit.
type hotLists struct {
	m *twoGen[uint64, *hotList]
}

// hotList is one remembered list; shared, never modified but for touch
// and seen.
type hotList struct {
	urls    []string // raw, as the engine gave them
	keys    []string // canonical
	entries []weak.Pointer[entry]
	// sources are the signatures' sources: srcCache for each.
	sources []sigSource
	// winners and by are the winners the entries' declared canonical URLs
	// give and who declares them (declaredWinners; nil: none), as the
	// full path finds them: the entries are the same on every use, so
	// these are too.
	winners []bool
	by      []int
	listKey [2]uint64 // listCache key of the list with these winners
	touch   atomic.Uint32
	// seen points weakly to the outcome of the last full check that found
	// every entry current; nil before one.
	seen atomic.Pointer[weak.Pointer[hotSeen]]
}

// hotSeen is a full check of a hotList that found every entry current:
// the cache's exit count before it, the earliest entry deadline, and the
// entries with their signatures as the check found them. Shared, never
// modified. The hotList holds it weakly: it lives until the next garbage
// collection unless a request in flight uses it, so it keeps a signature
// the cache has let go no longer than a request would, and a list is
// checked in full again about once a collection cycle.
type hotSeen struct {
	exits    uint64
	deadline time.Time
	entries  []*entry
	sigs     []*similarity.Signature
}

func newHotLists(max int) *hotLists { return &hotLists{m: newTwoGen[uint64, *hotList](max)} }

// hotKey hashes the raw URLs of results in order, each by its length
// and the eight bytes at its middle and at its end (where the URLs of one
// site differ; their beginnings are alike): about a nanosecond a URL,
// against tens for hashing every byte. Lists that share a key are told
// apart by comparing the URLs, so a collision costs the full path of the
// lists concerned, never a wrong answer.
func hotKey(results []engine.Result) uint64 {
	k := uint64(len(results))
	for i := range results {
		u := results[i].URL
		x := uint64(len(u))
		if len(u) >= 8 {
			x ^= le64(u[len(u)-8:])*0xff51afd7ed558ccd ^ le64(u[(len(u)-8)/2:])
		} else {
			for j := range len(u) {
				x = x<<8 | uint64(u[j])
			}
		}
		k = (k ^ x) * 0x9e3779b97f4a7c15
		k ^= k >> 29
	}
	return k
}

// le64 reads the first eight bytes of s (at least eight long) as a
// little-endian number; the compiler makes it one load.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// get returns the remembered list for results and the check that shows
// it still valid at now; nil, nil when there is none or it is not.
func (c *hotLists) get(results []engine.Result, cache *sigCache, now time.Time) (*hotList, *hotSeen) {
	h, ok := c.m.get(hotKey(results))
	if !ok || len(h.urls) != len(results) {
		return nil, nil
	}
	for i := range results {
		if results[i].URL != h.urls[i] {
			return nil, nil
		}
	}
	v := h.current(cache, now)
	if v == nil {
		return nil, nil
	}
	cache.hits.Add(uint64(len(results)))
	return h, v
}

// current returns the check that shows every entry of h still the cache's
// and fresh at now, with the entries; nil when one is not. When the cache
// has let no entry go since the last full check, and no entry has reached
// its deadline, that check still holds and is returned as it is (unless
// the garbage collector has taken it since). One entry in turn is looked
// up for real, which keeps the cache's admission counts alive for popular
// pages.
func (h *hotList) current(cache *sigCache, now time.Time) *hotSeen {
	exits := cache.exits.Load()
	var v *hotSeen
	if w := h.seen.Load(); w != nil {
		v = w.Value()
	}
	if v == nil || v.exits != exits || !now.Before(v.deadline) {
		if v = h.check(cache, now, exits); v == nil {
			return nil
		}
	}
	i := int(h.touch.Add(1)) % len(h.keys)
	if e, ok := cache.c.Get(h.keys[i]); !ok || e != v.entries[i] {
		return nil
	}
	return v
}

// check visits every entry of h: it returns nil when one is gone or not
// current at now, else the check, which h then holds (weakly). exits is
// the cache's exit count read before.
func (h *hotList) check(cache *sigCache, now time.Time, exits uint64) *hotSeen {
	v := &hotSeen{exits: exits, deadline: now.Add(cache.ttl), entries: make([]*entry, len(h.entries)), sigs: make([]*similarity.Signature, len(h.entries))}
	for i := range h.entries {
		e := h.entries[i].Value()
		if e == nil || !cache.current(e, now) {
			return nil
		}
		v.entries[i], v.sigs[i] = e, e.sig
		if d := cache.deadline(e); d.Before(v.deadline) {
			v.deadline = d
		}
	}
	w := weak.Make(v)
	h.seen.Store(&w)
	return v
}

// put remembers the list results whose canonical URLs are keys, whose
// signatures came from entries and whose list key is listKey (computed
// with the winners the entries' declared canonical URLs give), and
// returns the remembered list.
func (c *hotLists) put(results []engine.Result, keys []string, entries []*entry, listKey [2]uint64) *hotList {
	h := &hotList{urls: make([]string, len(results)), keys: keys, entries: make([]weak.Pointer[entry], len(entries)), sources: make([]sigSource, len(entries)), listKey: listKey}
	declared := make([]string, len(entries))
	for i, e := range entries {
		declared[i] = e.canonical
		h.sources[i] = srcCache
	}
	h.winners, h.by = declaredWinners(keys, declared, nil)
	for i := range results {
		h.urls[i] = results[i].URL
		h.entries[i] = weak.Make(entries[i])
	}
	c.m.put(hotKey(results), h)
	return h
}

func (c *listCache) get(k [2]uint64) (*clusteredList, bool) { return c.m.get(k) }

func (c *listCache) put(k [2]uint64, v *clusteredList) { c.m.put(k, v) }
