package proxy

import (
	"bytes"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/winnow-search/winnow/proxy/engine"
)

// answerCache remembers, for a transparent request, the backend's last
// answer and winnow's rendering of it. A popular query gets the same
// answer from its backend again and again, often byte for byte but for
// the time the engine took ("took" in Elasticsearch, "QTime" in Solr);
// parsing, refining and rendering it anew would give the same bytes. So
// when a new answer differs from the remembered one only in runs of
// digits before the part the adapter reads ([engine.Parsed.Extent]), and
// every signature the refinement used is still the cache's
// (hotList.current), the new answer's own head is sent with the
// remembered rendering of the rest. An answer whose hits winnow index
// tagged, grouped by the tags alone, uses no signature: its bytes
// settle it.
//
// The backend is still asked every time: the cache saves winnow's work,
// never the backend's, so the answer is exactly as fresh as without it.
// What is rendered depends only on the answer's bytes, the client's
// window and mode, and the signatures, all of which are compared, so
// two clients whose requests share a key can share an entry safely.
//
// Entries are held in two generations bounded by bytes (the answer and
// its rendering), each at most half of maxBytes.
type answerCache struct {
	mu        sync.Mutex
	cur, prev map[uint64]*answer
	curBytes  int64
	prevBytes int64 // what cur held when it became prev
	maxBytes  int64 // per generation
	maxEntry  int64
	// seen holds the keys met once.
	seen *twoGen[uint64, struct{}]

	hits, misses atomic.Uint64
}

// answer is one remembered answer and its rendering. Shared and never
// modified once stored.
type answer struct {
	// The request it answered, to tell keys that collide apart.
	method, path string
	reqBody      []byte
	mode         engine.Mode
	explain      bool // winnow_explain: each duplicate's explanation shown
	win          engine.Window

	body   []byte // the backend's answer
	extent int    // engine.Parsed.Extent of body
	out    []byte // its rendering; out[:extent] is body[:extent]
	// hot is the remembered list whose signatures the rendering used;
	// nil for an answer grouped by its hits' tags alone, whose rendering
	// depends on its bytes only.
	hot *hotList

	// what the refinement counted, counted again on each use
	cached, service, unrefined, clusters, dups int
	removed                                    int // remove mode's dropped duplicates
	// signed is the refinement's X-Winnow-Signed, and unsigned whether
	// it marked the answer unrefined for want of signatures (signedValue).
	signed   string
	unsigned bool
}

func (a *answer) size() int64 {
	return int64(len(a.body)+len(a.out)+len(a.path)+len(a.reqBody)) + 256
}

// newAnswerCache returns a cache of at most maxBytes; nil when maxBytes
// is not positive (no cache: every answer is refined).
func newAnswerCache(maxBytes int64) *answerCache {
	if maxBytes <= 0 {
		return nil
	}
	return &answerCache{
		cur:      map[uint64]*answer{},
		maxBytes: maxBytes / 2,
		// An entry larger than an eighth of a generation would push
		// out many popular ones.
		maxEntry: max(maxBytes/16, 1),
		seen:     newTwoGen[uint64, struct{}](seenMax),
	}
}

var answerSeed = maphash.MakeSeed()

func answerKey(method, path string, body []byte, mode engine.Mode, explain bool, win engine.Window) uint64 {
	var h maphash.Hash
	h.SetSeed(answerSeed)
	h.WriteString(method)
	h.WriteByte(0)
	h.WriteString(path)
	h.WriteByte(0)
	h.Write(body)
	h.WriteByte(byte(mode))
	if explain {
		h.WriteByte(1)
	}
	return h.Sum64() ^ uint64(win.From)<<1 ^ uint64(win.Size)<<21 ^ uint64(win.Base)<<41
}

// get returns the entry for a request, if any.
func (c *answerCache) get(key uint64, method, path string, body []byte, mode engine.Mode, explain bool, win engine.Window) *answer {
	c.mu.Lock()
	a, ok := c.cur[key]
	if !ok {
		if a, ok = c.prev[key]; ok {
			c.putLocked(key, a)
		}
	}
	c.mu.Unlock()
	if !ok || a.method != method || a.path != path || !bytes.Equal(a.reqBody, body) || a.mode != mode || a.explain != explain || a.win != win {
		return nil
	}
	return a
}

// put remembers a; an entry too large for the cache is left out.
func (c *answerCache) put(key uint64, a *answer) {
	if a.size() > c.maxEntry {
		return
	}
	c.mu.Lock()
	c.putLocked(key, a)
	c.mu.Unlock()
}

func (c *answerCache) putLocked(key uint64, a *answer) {
	if c.curBytes+a.size() > c.maxBytes {
		c.prev, c.cur, c.prevBytes, c.curBytes = c.cur, make(map[uint64]*answer, len(c.cur)), c.curBytes, 0
	}
	if old, ok := c.cur[key]; ok {
		c.curBytes -= old.size()
	}
	c.cur[key] = a
	c.curBytes += a.size()
}

// usedBytes is what the two generations hold, at most (an entry in both
// counts twice); 0 for no cache.
func (c *answerCache) usedBytes() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.curBytes + c.prevBytes
}

// render returns the rendering of body, a new answer to a's request,
// when a's rendering still holds for it: body differs from a.body only in
// a run of digits before a.extent, and every signature a used is still the
// cache's at now. When body is a.body byte for byte the rendering is a.out
// itself, shared (raw: it must not be modified); otherwise it is body's
// head and a's rendered rest, appended to dst.
func (a *answer) render(dst, body []byte, cache *sigCache, now time.Time) (out []byte, raw, ok bool) {
	rest := len(a.body) - a.extent
	cut := len(body) - rest
	if cut < 0 || !bytes.Equal(body[cut:], a.body[a.extent:]) || !digitsApart(a.body[:a.extent], body[:cut]) {
		return dst, false, false
	}
	if a.hot != nil && a.hot.current(cache, now) == nil {
		return dst, false, false
	}
	cache.hits.Add(uint64(a.cached))
	if cut == a.extent && bytes.Equal(body[:cut], a.body[:cut]) {
		return a.out, true, true
	}
	dst = append(dst, body[:cut]...)
	return append(dst, a.out[a.extent:]...), false, true
}

// digitsApart reports whether a and b are equal but for one run of ASCII
// digits (as when "took":7 became "took":12): a change that cannot move
// or alter the structure of a JSON or XML document.
func digitsApart(a, b []byte) bool {
	if len(a) == len(b) && bytes.Equal(a, b) {
		return true
	}
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	q := 0
	for q < len(a)-p && q < len(b)-p && a[len(a)-1-q] == b[len(b)-1-q] {
		q++
	}
	return allDigits(a[p:len(a)-q]) && allDigits(b[p:len(b)-q])
}

func allDigits(s []byte) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// secondSighting reports whether key was met before (and remembers that
// it now has been): answers are kept from their second sighting on.
func (c *answerCache) secondSighting(key uint64) bool {
	c.mu.Lock()
	_, held := c.cur[key]
	if !held {
		_, held = c.prev[key]
	}
	c.mu.Unlock()
	if held {
		return true
	}
	if _, ok := c.seen.get(key); ok {
		return true
	}
	c.seen.put(key, struct{}{})
	return false
}

// seenMax bounds each generation of the keys met once (8 bytes a key).
const seenMax = 1 << 16

// load returns the hits (or misses) so far; 0 for no cache.
func (c *answerCache) load(hits bool) uint64 {
	switch {
	case c == nil:
		return 0
	case hits:
		return c.hits.Load()
	}
	return c.misses.Load()
}
