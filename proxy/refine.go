package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/fetch"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/proxy/engine"
	"github.com/winnow-search/winnow/similarity"
)

// clusterLookup is what the proxy needs of the cluster service
// (cluster/client.Client).
type clusterLookup interface {
	Lookup(ctx context.Context, urls []string) ([]client.LookupResult, error)
}

// sigSource tells where a result's signature came from.
type sigSource uint8

const (
	srcNone    sigSource = iota // no signature in the budget: passed through unmarked
	srcCache                    // the signature cache
	srcText                     // the page text carried by the hit
	srcFetched                  // fetched and signed within the budget
	srcService                  // a verified duplicate according to the cluster service
)

// refiner signs the top results of a list (from the cache, from the text
// a hit carries, or by fetching the page within the request budget) and
// clusters them. It is safe for concurrent use.
type refiner struct {
	signer  page.Signer
	fetcher *fetch.Client
	// cluster is the cluster service asked first; nil: none.
	cluster        clusterLookup
	clusterTimeout time.Duration
	cache          *sigCache
	// verdicts keeps pair verdicts across queries; it serves the
	// server's own decision only, not per-request overrides.
	verdicts *verdictCache
	keys     *keyCache
	lists    *listCache
	hot      *hotLists
	// feed, when not nil, sends computed signatures to the cluster
	// service.
	feed *feeder
	log  *slog.Logger
	m    *metrics

	// life stops background fetches when the server closes; fetches
	// started by a request outlive it (up to the fetch timeout) so a page
	// that missed the budget is cached for the next query.
	life context.Context
	bg   sync.WaitGroup
	// running counts background fetches; past maxBackground a result is
	// left unrefined rather than queue yet another fetch, so a flood of
	// cold queries cannot pile up goroutines.
	running atomic.Int64
}

// maxBackground bounds the background fetches of all requests together.
const maxBackground = 4096

// refineOptions are the per-request settings.
type refineOptions struct {
	topK     int
	budget   time.Duration
	decision similarity.Decision
	// defaultDecision reports that decision is the server's own, so the
	// verdict cache applies.
	defaultDecision bool
}

// refined is the outcome for one result list.
type refined struct {
	marks    []engine.Mark
	clusters []similarity.Cluster
	sigs     []*similarity.Signature
	keys     []string // canonical URLs
	// declared are the canonical URLs the results' pages declare
	// (<link rel="canonical">, entry.canonical), "" for none; nil for a
	// remembered list, whose hotList holds what they give.
	declared []string
	sources  []sigSource
	// serviceDups are the (duplicate, winner) pairs the cluster service
	// decided.
	serviceDups [][2]int
	// counts by source, and the results left unmarked
	cached, text, fetched, service, unrefined int
	// hot is the remembered list whose cache entries signed every
	// refined result, nil when some signature came from elsewhere: the
	// outcome stays valid for as long as hot does (hotList.valid).
	hot *hotList
}

// signed is a signature delivered by a background fetch, with the
// canonical URL its page declares (entry.canonical).
type signed struct {
	i         int
	sig       *similarity.Signature
	canonical string
}

// refine signs and clusters results[:topK]. Results past topK and results
// whose signature is not ready when the budget ends pass through
// unmarked (Winner -1). It never fails: what cannot be had only lowers
// what is refined.
func (r *refiner) refine(ctx context.Context, results []engine.Result, o refineOptions) *refined {
	n := min(len(results), o.topK)
	out := &refined{
		marks:   make([]engine.Mark, len(results)),
		sigs:    make([]*similarity.Signature, n),
		keys:    make([]string, n),
		sources: make([]sigSource, n),
	}
	for i := range out.marks {
		out.marks[i].Winner = -1
	}
	now := time.Now()
	entries := make([]*entry, n) // the cache entries the signatures came from
	var (
		known   map[int]knownDup
		winners []bool
		by      []int // by[i]: the result that declares result i canonical
		hot     *hotList
	)
	if r.cluster == nil && n > 0 {
		hot, _ = r.hot.get(results[:n], r.cache, now, entries)
	}
	if hot != nil {
		// A warm list seen before: every entry is still the cache's.
		copy(out.keys, hot.keys)
		for i, e := range entries {
			out.sigs[i], out.sources[i] = e.sig, srcCache
		}
		winners, by = hot.winners, hot.by // as declaredWinners found them
	} else {
		clear(entries) // a list that failed the check may have filled some
		out.declared = make([]string, n)
		known, winners = r.gather(ctx, results[:n], out, entries, o.budget, now)
		winners, by = declaredWinners(out.keys, out.declared, winners)
	}
	for _, src := range out.sources {
		switch src {
		case srcCache:
			out.cached++
		case srcText:
			out.text++
		case srcFetched:
			out.fetched++
		case srcService:
			out.service++
		default:
			out.unrefined++
		}
	}
	out.unrefined += len(results) - n
	r.m.refined(out)

	ro := similarity.RankedOptions{Keys: out.keys, Winners: winners}
	var listKey [2]uint64
	if o.defaultDecision {
		ro.Cache = r.verdicts
		// A popular query shows the same signed list again and again:
		// its clustering is deterministic, so it is kept whole.
		if hot != nil {
			listKey = hot.listKey
		} else {
			ids := make([]uint64, n)
			for i, sg := range out.sigs {
				switch {
				case entries[i] != nil:
					ids[i] = entries[i].id
				case sg != nil:
					ids[i] = sigID(sg)
				}
			}
			listKey = r.lists.key(out.keys, ids, winners, by)
			if r.cluster == nil && n > 0 && out.cached == n {
				hot = r.hot.put(results[:n], slices.Clone(out.keys), entries, listKey)
			}
		}
		if l, ok := r.lists.get(listKey); ok {
			out.clusters = l.clusters
			copy(out.marks, l.marks)
		}
	}
	if o.defaultDecision {
		out.hot = hot
	}
	if out.clusters == nil {
		out.clusters = similarity.ClusterRanked(out.sigs, o.decision, ro)
		markClusters(out, by)
		if o.defaultDecision {
			r.lists.put(listKey, &clusteredList{clusters: out.clusters, marks: slices.Clone(out.marks[:n])})
		}
	}
	// Duplicates known to the cluster service join their winner's mark.
	for i, k := range known {
		w := k.winner
		if wm := out.marks[w]; wm.Winner >= 0 {
			w = wm.Winner // the winner is itself grouped online
		}
		cluster := out.marks[w].Cluster
		if cluster == "" {
			cluster = k.group
		}
		if out.marks[w].Winner < 0 {
			out.marks[w] = engine.Mark{Cluster: cluster, Winner: w}
		}
		out.marks[i] = engine.Mark{Cluster: cluster, Winner: w, Relation: "duplicate",
			Explain: "duplicate: the cluster service groups it under " + results[k.winner].URL + " (group " + k.group + ", verified against its winner)"}
		out.serviceDups = append(out.serviceDups, [2]int{i, w})
	}
	return out
}

// gather finds the signatures of results (the top n of a list): asks the
// cluster service first, then takes each from the cache, from the text
// its hit carries, or fetches it, waiting for the fetches until the
// budget ends; the ones still running go on in the background and fill
// the cache. It fills out's keys, sigs and sources and entries, and
// returns what the cluster service knows.
func (r *refiner) gather(ctx context.Context, results []engine.Result, out *refined, entries []*entry, budget time.Duration, now time.Time) (map[int]knownDup, []bool) {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	n := len(results)
	keyErr := make([]error, n)
	for i := range n {
		out.keys[i], keyErr[i] = r.keys.key(results[i].URL)
	}
	// The cluster service first: results it knows as verified
	// duplicates of another result in the list need no online work, and
	// the winners it knows win online clusters too.
	known, winners := r.askCluster(ctx, out.keys)
	pending := 0
	var done chan signed
	for i := range n {
		res := &results[i]
		key, err := out.keys[i], keyErr[i]
		if _, ok := known[i]; ok {
			out.sources[i] = srcService
			continue
		}
		e, hit := r.cache.get(key)
		switch {
		case hit:
			out.sigs[i], out.sources[i], out.declared[i], entries[i] = e.sig, srcCache, e.canonical, e
			if !r.cache.fresh(e, now) {
				r.revalidate(key, res.URL, e)
			}
		case res.Text != "":
			sig, canonical := r.signText(key, res.URL, res.Text)
			if sig != nil {
				out.sigs[i], out.sources[i], out.declared[i] = sig, srcText, canonical
				r.cache.set(key, &entry{sig: sig, canonical: canonical, fetchedAt: now})
				r.feedBack(key, sig)
			}
		case err == nil && r.running.Load() < maxBackground:
			if done == nil {
				done = make(chan signed, n) // buffered: a late fetch never blocks
			}
			pending++
			r.startFetch(i, key, res.URL, fetch.Validators{}, done)
		}
	}
	for pending > 0 {
		select {
		case s := <-done:
			pending--
			if s.sig != nil {
				out.sigs[s.i], out.sources[s.i], out.declared[s.i] = s.sig, srcFetched, s.canonical
			}
		case <-ctx.Done():
			pending = 0
		}
	}
	return known, winners
}

// markClusters sets the marks of the refined results from their clusters.
// by (nil: none) tells which result declares each result canonical
// (declaredWinners): a cluster's winner so declared says so, and so do its
// members.
func markClusters(out *refined, by []int) {
	for _, c := range out.clusters {
		w := c.Winner
		if out.sigs[w] == nil {
			continue // unrefined: stays unmarked
		}
		id := strconv.FormatUint(c.ID, 16)
		var declared string
		if by != nil && by[w] >= 0 && len(c.Members) > 1 {
			declared = "winner: " + out.keys[by[w]] + " declares it canonical"
		}
		for mi, m := range c.Members {
			mk := engine.Mark{Cluster: id, Winner: w}
			if mi > 0 {
				mk.Relation = m.Verdict.Relation.String()
				if !m.Verdict.Duplicate {
					// Joined through another member (single link).
					mk.Relation = "duplicate"
				}
				mk.Explain = m.Verdict.Explain()
				if declared != "" {
					mk.Explain += "; " + declared
				}
			} else {
				mk.Explain = declared
			}
			out.marks[m.Index] = mk
		}
	}
}

// declaredWinners adds to the winners the cluster service knows (nil:
// none) the results that another result of the list declares canonical:
// declared[j] (a canonical URL, "" for none) is the key of result i, so
// result i wins the online cluster it is in, whatever its rank
// (similarity.RankedOptions.Winners; the best ranked of several such
// winners wins). Declarations never join two results: sites misdeclare
// canonical URLs, so clustering stays the similarity decision's. It
// returns the winners and, for each result, the best ranked result that
// declares it canonical (-1 for none); both nil (the service's winners
// as given) when no result declares another.
func declaredWinners(keys, declared []string, service []bool) ([]bool, []int) {
	var by []int
	var index map[string]int
	for j, c := range declared {
		if c == "" {
			continue
		}
		if index == nil {
			index = make(map[string]int, len(keys))
			for i, k := range keys {
				if _, dup := index[k]; !dup {
					index[k] = i
				}
			}
		}
		i, ok := index[c]
		if !ok || i == j {
			continue
		}
		if by == nil {
			by = make([]int, len(keys))
			for k := range by {
				by[k] = -1
			}
		}
		if by[i] < 0 {
			by[i] = j
		}
	}
	if by == nil {
		return service, nil
	}
	winners := make([]bool, len(keys))
	for i := range winners {
		winners[i] = by[i] >= 0 || i < len(service) && service[i]
	}
	return winners, by
}

// knownDup is a result the cluster service reports as a verified
// duplicate of another result of the list.
type knownDup struct {
	winner int // index of the winner in the list
	group  string
}

// askCluster looks the keys up in the cluster service within its
// timeout. It returns the results that are verified duplicates of another
// result in the list, and which results are group winners. A service that
// is down, slow or failing only means no help: nil, nil.
func (r *refiner) askCluster(ctx context.Context, keys []string) (map[int]knownDup, []bool) {
	if r.cluster == nil || len(keys) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.clusterTimeout)
	defer cancel()
	start := time.Now()
	res, err := r.cluster.Lookup(ctx, keys)
	if err != nil || len(res) != len(keys) {
		r.m.cluster("error", time.Since(start))
		r.log.Debug("cluster_lookup_failed", "err", err)
		return nil, nil
	}
	r.m.cluster("ok", time.Since(start))
	index := make(map[string]int, len(keys))
	for i, k := range keys {
		if _, dup := index[k]; !dup {
			index[k] = i
		}
	}
	nKnown := 0
	for _, lr := range res {
		if lr.Known {
			nKnown++
		}
	}
	r.m.clusterURLs(nKnown, len(res)-nKnown)
	known := map[int]knownDup{}
	winners := make([]bool, len(keys))
	for i, lr := range res {
		if !lr.Known || lr.Winner == "" {
			continue
		}
		if lr.IsWinner {
			winners[i] = true
			continue
		}
		if w, ok := index[lr.Winner]; ok && w != i {
			known[i] = knownDup{winner: w, group: lr.Group}
		}
	}
	return known, winners
}

// signText signs a page text (or HTML) that a hit carries for the
// result whose URL is rawURL and whose key is key, and returns the
// canonical URL an HTML text declares (see sign).
func (r *refiner) signText(key, rawURL, text string) (*similarity.Signature, string) {
	res, canonical, err := r.sign(key, rawURL, []byte(text), "")
	if err != nil {
		return nil, ""
	}
	return detach(&res), canonical
}

// sign signs the page body fetched from pageURL (whose key is key) and
// returns, besides, the canonical URL its head declares: "" for none and
// for the page's own key (most pages declare themselves), which the
// cache entry need not hold.
func (r *refiner) sign(key, pageURL string, body []byte, contentType string) (page.Result, string, error) {
	s := r.signer
	s.Head = true
	res, err := s.SignURL(body, contentType, pageURL)
	if err != nil {
		return page.Result{}, "", err
	}
	canonical := res.Head.Canonical
	if canonical == key {
		canonical = ""
	}
	return res, canonical, nil
}

// detach returns the signature of res in an allocation of its own: a
// pointer to res.Sig would keep the whole page.Result alive, the canonical
// document with its text, tokens and sentences (tens of KB a page), for as
// long as the cache holds the signature, which its cost does not count.
func detach(res *page.Result) *similarity.Signature {
	sig := new(similarity.Signature)
	*sig = res.Sig
	return sig
}

// startFetch fetches, signs and caches one page in the background and
// delivers the signature on done (buffered, never blocking).
func (r *refiner) startFetch(i int, key, rawURL string, val fetch.Validators, done chan<- signed) {
	var e *entry
	r.background(func() { e = r.fetchSign(key, rawURL, val, nil) },
		func() {
			if e == nil {
				done <- signed{i: i}
				return
			}
			done <- signed{i: i, sig: e.sig, canonical: e.canonical}
		})
}

// revalidate refreshes a stale cache entry in the background with a
// conditional request; the stale signature serves meanwhile.
func (r *refiner) revalidate(key, rawURL string, old *entry) {
	if r.running.Load() >= maxBackground {
		return // the stale signature serves; a later query revalidates
	}
	r.background(func() { r.fetchSign(key, rawURL, old.val, old) }, nil)
}

// background runs work in a goroutine counted for Shutdown and for
// maxBackground, then finish (if not nil) even when work panics. The
// goroutine exits when work ends: a fetch ends at the latest at the fetch
// client's timeout, or when the server closes.
func (r *refiner) background(work, finish func()) {
	r.bg.Add(1)
	r.running.Add(1)
	go func() {
		defer r.bg.Done()
		defer r.running.Add(-1)
		if finish != nil {
			defer finish()
		}
		defer func() {
			if p := recover(); p != nil {
				r.log.Error("background_panic", "panic", fmt.Sprint(p))
			}
		}()
		work()
	}()
}

// fetchSign fetches rawURL, signs and caches it, and returns the cache
// entry (nil when the fetch or the signing failed). A 304 keeps the old
// signature with a new date.
func (r *refiner) fetchSign(key, rawURL string, val fetch.Validators, old *entry) *entry {
	pg, err := r.fetcher.Get(r.life, rawURL, val)
	if err != nil {
		r.m.fetchOutcome(err)
		if !errors.Is(err, context.Canceled) {
			r.log.Debug("fetch_failed", "err", err)
		}
		return nil
	}
	r.m.fetchOutcome(nil)
	if pg.NotModified && old != nil {
		e := &entry{sig: old.sig, canonical: old.canonical, val: old.val, fetchedAt: time.Now()}
		r.cache.set(key, e)
		return e
	}
	res, canonical, err := r.sign(key, cmp.Or(pg.URL, rawURL), pg.Body, pg.ContentType)
	if err != nil {
		r.log.Debug("sign_failed", "err", err)
		return nil
	}
	e := &entry{sig: detach(&res), canonical: canonical, val: fetch.Validators{ETag: pg.ETag, LastModified: pg.LastModified}, fetchedAt: time.Now()}
	r.cache.set(key, e)
	r.feedBack(key, e.sig)
	return e
}

// feedBack hands a computed signature to the feeder, if there is one.
func (r *refiner) feedBack(key string, sig *similarity.Signature) {
	if r.feed != nil {
		r.feed.add(key, sig)
	}
}

// wait blocks until every background fetch has ended.
func (r *refiner) wait() { r.bg.Wait() }
