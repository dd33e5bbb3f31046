package proxy

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/winnow-search/winnow/proxy/engine"
	"github.com/winnow-search/winnow/similarity"
)

// TestHotListFollowsTheCache checks that a remembered warm list serves only
// while its entries are still the cache's: a replaced, deleted or stale
// entry sends the next query down the full path, which sees the change.
func TestHotListFollowsTheCache(t *testing.T) {
	s, body, _ := warmRefine(t)
	p, err := s.transp.light.Parse(body, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	o := s.refineOptions()
	ctx := context.Background()
	r := s.ref
	n := min(len(p.Results), o.topK)
	top := p.Results[:n]

	first := r.refine(ctx, p.Results, o)
	if first.cached != n {
		t.Fatalf("first refine: %d of %d cached, want all", first.cached, n)
	}
	if h, _ := r.hot.get(top, r.cache, time.Now()); h == nil {
		t.Fatal("a list all in the cache is not remembered")
	}
	again := r.refine(ctx, p.Results, o)
	for i := range n {
		if again.sigs[i] != first.sigs[i] || again.keys[i] != first.keys[i] {
			t.Fatalf("remembered list: result %d differs from the full path", i)
		}
	}
	hits := r.cache.hits.Load()
	r.refine(ctx, p.Results, o)
	if got := r.cache.hits.Load() - hits; got != uint64(n) {
		t.Errorf("a remembered list counts %d cache hits, want %d", got, n)
	}

	// Replaced: a new signature for result 3 must show at once.
	key := first.keys[3]
	other := &similarity.Signature{Simhash: ^first.sigs[3].Simhash, Tokens: 7, MinHash: make([]uint16, 84)}
	r.cache.set(key, &entry{sig: other, fetchedAt: time.Now()})
	if h, _ := r.hot.get(top, r.cache, time.Now()); h != nil {
		t.Error("the list is still served after one entry was replaced")
	}
	if got := r.refine(ctx, p.Results, o); got.sigs[3] != other {
		t.Error("refine after a replacement does not use the new signature")
	}

	// Stale: an entry past its freshness is revalidated, so the full path
	// runs.
	r.cache.set(key, &entry{sig: other, fetchedAt: time.Now().Add(-2 * s.o.CacheTTL)})
	r.refine(ctx, p.Results, o) // remembers nothing: one entry is stale
	if h, _ := r.hot.get(top, r.cache, time.Now()); h != nil {
		t.Error("a list with a stale entry is served without revalidation")
	}

	// Deleted: the next query must not take the signature from the list.
	r.cache.c.Del(key)
	if h, _ := r.hot.get(top, r.cache, time.Now()); h != nil {
		t.Error("the list is still served after one entry left the cache")
	}
	r.wait()
}

// TestHotListHoldsNoEvicted checks that a remembered list does not keep
// alive an entry the cache let go: its signature must be freed, since the
// cache's cost no longer counts it.
func TestHotListHoldsNoEvicted(t *testing.T) {
	c, err := newSigCache(1<<20, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	results := []engine.Result{{URL: "https://a.example/"}, {URL: "https://b.example/"}}
	keys := []string{"https://a.example/", "https://b.example/"}
	entries := make([]*entry, 2)
	for i, k := range keys {
		entries[i] = &entry{sig: &similarity.Signature{Simhash: uint64(i + 1), MinHash: make([]uint16, 84)}, fetchedAt: time.Now()}
		c.set(k, entries[i])
	}
	c.c.Wait()
	h := newHotLists(16)
	h.put(results, keys, entries, [2]uint64{1, 2})
	if l, _ := h.get(results, c, time.Now()); l == nil {
		t.Fatal("the list is not served while both entries are cached")
	}
	c.c.Del(keys[0])
	entries = nil
	runtime.GC()
	runtime.GC()
	l, ok := h.m.get(hotKey(results))
	if !ok {
		t.Fatal("the list is gone from the map")
	}
	if l.entries[0].Value() != nil {
		t.Error("the remembered list keeps alive an entry the cache deleted")
	}
	if l.entries[1].Value() == nil {
		t.Error("an entry still cached was collected")
	}
	if l, _ := h.get(results, c, time.Now()); l != nil {
		t.Error("the list is served after one entry was deleted")
	}
}

// TestHotListFastPath checks the check that skips visiting the entries:
// it holds only while the cache lets nothing go and no entry reaches its
// deadline, so a replaced, deleted or stale entry is still seen.
func TestHotListFastPath(t *testing.T) {
	_, p, r, o := warmParsed(t)
	ctx := context.Background()
	ref := r.refine(ctx, p.Results, o)
	if ref.hot == nil {
		ref = r.refine(ctx, p.Results, o)
	}
	h := ref.hot
	if h == nil {
		t.Fatal("a list all in the cache has no remembered list")
	}
	now := time.Now()
	seen := h.current(r.cache, now)
	if seen == nil {
		t.Fatal("a list just remembered is not current")
	}
	if h.current(r.cache, now) != seen {
		t.Error("a second check with nothing changed visited the entries again")
	}
	if h.current(r.cache, seen.deadline) != nil {
		t.Error("current at the earliest entry's deadline")
	}

	key := h.keys[5]
	other := &similarity.Signature{Simhash: 1, Tokens: 7, MinHash: make([]uint16, 84)}
	r.cache.set(key, &entry{sig: other, fetchedAt: time.Now()})
	r.cache.c.Wait()
	if h.current(r.cache, time.Now()) != nil {
		t.Error("current after an entry was replaced")
	}
	r.wait()
}

// TestKnownListNotServedStale checks the refinement of a known list (the
// remembered list's shared keys and signatures): it serves only while
// every signature is still the cache's, so a replaced signature, and any
// signature past its freshness or expiry, sends the query down the full
// path, whose outcome shows the change.
func TestKnownListNotServedStale(t *testing.T) {
	s, p, r, o := warmParsed(t)
	ctx := context.Background()
	n := min(len(p.Results), o.topK)
	known := func(ref *refined, h *hotList) bool { return ref.hot == h && ref.declared == nil }

	first := r.refine(ctx, p.Results, o)
	second := r.refine(ctx, p.Results, o)
	h := second.hot
	if h == nil || !known(r.refine(ctx, p.Results, o), h) {
		t.Fatal("a list all in the cache is not refined as a known list")
	}

	// Past the earliest entry's freshness, and past its expiry.
	seen := h.current(r.cache, time.Now())
	if seen == nil {
		t.Fatal("the known list is not current")
	}
	for _, at := range []time.Time{seen.deadline, seen.deadline.Add(2 * s.o.CacheTTL)} {
		if ref := r.refineAt(ctx, p.Results, o, at); known(ref, h) {
			t.Errorf("the known list is served at %v, its earliest deadline %v", at, seen.deadline)
		}
	}
	r.wait() // the revalidations the stale entries started

	// Replaced: result 3 gets result 0's signature, so it joins 0's cluster.
	ref := r.refine(ctx, p.Results, o)
	if ref.hot == nil || ref.marks[3].Winner == ref.marks[0].Winner && ref.marks[0].Winner >= 0 {
		t.Fatalf("set-up: remembered %v, results 0 and 3 marks %+v %+v", ref.hot != nil, ref.marks[0], ref.marks[3])
	}
	h = ref.hot
	if !known(r.refine(ctx, p.Results, o), h) { // checked in full: the next check may take that one
		t.Fatal("the list is not refined as a known list again")
	}
	r.cache.set(ref.keys[3], &entry{sig: ref.sigs[0], fetchedAt: time.Now()})
	got := r.refine(ctx, p.Results, o)
	if known(got, h) || got.sigs[3] != ref.sigs[0] {
		t.Fatal("the known list is served after a signature was replaced")
	}
	if got.marks[3].Winner != got.marks[0].Winner || got.marks[3].Winner < 0 {
		t.Errorf("after the replacement result 3 is %+v, want it grouped with result 0 %+v", got.marks[3], got.marks[0])
	}
	for i := range n {
		if first.keys[i] != got.keys[i] {
			t.Errorf("result %d: key %q, want %q", i, got.keys[i], first.keys[i])
		}
	}
	r.wait()
}

// warmParsed is warmRefine's answer parsed as the transparent path parses
// it, with the server's refiner and options.
func warmParsed(t *testing.T) (*Server, *engine.Parsed, *refiner, refineOptions) {
	t.Helper()
	s, body, _ := warmRefine(t)
	p, err := s.transp.light.Parse(body, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	return s, p, s.ref, s.refineOptions()
}
