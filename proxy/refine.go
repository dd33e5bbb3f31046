package proxy

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/fetch"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/proxy/engine"
	"github.com/winnow-search/winnow/resultlist"
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
	// memo holds the layers shared with the server; its verdicts
	// serve the server's own decision only, not per-request overrides.
	*memo
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
	// internal warns about result pages the SSRF guard refuses.
	internal internalWarner
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
	// taggedDups are the (duplicate, winner) pairs of serviceDups that the
	// hits' tags gave (tags.go).
	taggedDups [][2]int
	// removeVerdicts are remove mode's content-equivalence verdicts, by
	// the duplicate's index (keepUnequal); nil in the other modes.
	removeVerdicts map[int]similarity.Verdict
	// counts by source, and the results left unmarked
	cached, text, fetched, service, unrefined int
	// beyond counts the unmarked results past the top K: not signed
	// at all, whatever the time (unrefined counts them too).
	beyond int
	// internal counts the results left unmarked because the SSRF guard
	// refused their page's address (serve.fetch.allow).
	internal int
	// hot is the remembered list whose cache entries signed every
	// refined result, nil when some signature came from elsewhere: the
	// outcome stays valid for as long as hot does (hotList.valid).
	hot *hotList
	// tagsOnly says every refined result was grouped by the tags its hit
	// carries (winnow index), with no cluster service to ask: the
	// outcome depends on the answer's bytes alone.
	tagsOnly bool
}

// clusterCounts returns the clusters of two or more results and
// the results grouped under another.
func (ref *refined) clusterCounts() (clusters, dups int) {
	for _, c := range ref.clusters {
		if len(c.Members) > 1 {
			clusters++
			dups += len(c.Members) - 1
		}
	}
	return clusters, dups + len(ref.serviceDups)
}

// refine refines a result list with the request's parameters and counts
// what it found: the one seam between the server's two paths (transparent
// and metasearch) and the refiner.
func (s *Server) refine(ctx context.Context, results []engine.Result, p params) *refined {
	ref := s.ref.refine(ctx, results, refineOptions{topK: s.o.TopK, budget: s.o.Budget, decision: p.decision, defaultDecision: !p.custom})
	if p.mode.Purpose() == similarity.PurposeRemove {
		var cache similarity.VerdictCache
		if !p.custom {
			cache = s.ref.removeVerdicts // the server's decision: its verdicts hold across queries
		}
		keepUnequal(ref, results, p.remove, cache)
		removeTagged(ref, results) // tags.go
	}
	clusters, dups := ref.clusterCounts()
	s.m.clustered(clusters, dups, p.mode)
	return ref
}

// signed is a signature delivered by a background fetch, with the
// canonical URL its page declares (entry.canonical).
type signed struct {
	i         int
	sig       *similarity.Signature
	canonical string
	internal  bool // the SSRF guard refused the page's address
}

// refine signs and clusters results[:topK]. Results past topK and results
// whose signature is not ready when the budget ends pass through
// unmarked (Winner -1). It never fails: what cannot be had only lowers
// what is refined. It is a pipeline of four steps, each reading what the
// one before left in out and in the listState.
func (r *refiner) refine(ctx context.Context, results []engine.Result, o refineOptions) *refined {
	return r.refineAt(ctx, results, o, time.Now())
}

// refineAt is refine at the time now, which decides what in the cache
// is fresh.
func (r *refiner) refineAt(ctx context.Context, results []engine.Result, o refineOptions, now time.Time) *refined {
	n := min(len(results), o.topK)
	out := newRefined(len(results))
	var st listState
	r.signList(ctx, results[:n], out, &st, o.budget, now) // 1. signatures
	out.count(len(results) - n)                           // 2. where they came from
	r.m.refined(out)
	if out.service < n { // else no result was signed: tags or the cluster service group them all
		r.clusterList(results[:n], out, &st, o) // 3. clusters and marks
	}
	out.joinKnown(results, st.known) // 4. the cluster service's duplicates
	out.markTagged(results[:n])      // and the tagged pages alone (tags.go)
	out.tagsOnly = r.cluster == nil && allTagged(results[:n])
	return out
}

// listState is what the steps of one refinement hand on besides the
// refined outcome.
type listState struct {
	entries []*entry // the cache entries the signatures came from
	known   map[int]knownDup
	winners []bool
	by      []int    // by[i]: the result that declares result i canonical
	hot     *hotList // the remembered list that signed every result
}

// newRefined returns the outcome for a list of results, every one
// unmarked; signList gives it its keys, signatures and sources.
func newRefined(results int) *refined {
	out := &refined{marks: make([]engine.Mark, results)}
	for i := range out.marks {
		out.marks[i].Winner = -1
	}
	return out
}

// signList signs results (the top n of a list): from a remembered list
// when every entry is still the cache's at now, else by gather. A
// remembered list's keys, signatures and sources are shared, not copied:
// nothing modifies them once signList has set them.
func (r *refiner) signList(ctx context.Context, results []engine.Result, out *refined, st *listState, budget time.Duration, now time.Time) {
	n := len(results)
	if r.cluster == nil && n > 0 {
		var seen *hotSeen
		if st.hot, seen = r.hot.get(results, r.cache, now); st.hot != nil {
			// A warm list seen before: every entry is still the cache's.
			out.keys, out.sigs, out.sources = st.hot.keys, seen.sigs, st.hot.sources
			st.entries = seen.entries
			st.winners, st.by = st.hot.winners, st.hot.by // as declaredWinners found them
			return
		}
	}
	out.keys, out.sigs, out.sources = make([]string, n), make([]*similarity.Signature, n), make([]sigSource, n)
	out.declared = make([]string, n)
	st.entries = make([]*entry, n)
	st.known, st.winners = r.gather(ctx, results, out, st.entries, budget, now)
	st.winners, st.by = declaredWinners(out.keys, out.declared, st.winners)
}

// count counts the results by the source of their signature; beyond are
// the results past the top K, unrefined.
func (out *refined) count(beyond int) {
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
	out.unrefined += beyond
	out.beyond = beyond
}

// clusterList clusters the signed results and marks them. With the
// server's own decision a list's clustering is deterministic, so it is
// taken from, or kept in, the list memo whole (a popular query shows the
// same signed list again and again), and a list signed from the cache
// alone is remembered (hotLists).
func (r *refiner) clusterList(results []engine.Result, out *refined, st *listState, o refineOptions) {
	n := len(results)
	ro := similarity.RankedOptions{Keys: out.keys, Winners: st.winners}
	var listKey [2]uint64
	if o.defaultDecision {
		ro.Cache = r.verdicts
		listKey = r.listKey(results, out, st)
		out.hot = st.hot
		if l, ok := r.lists.get(listKey); ok {
			out.clusters = l.clusters
			copy(out.marks, l.marks)
			return
		}
	}
	out.clusters = similarity.ClusterRanked(out.sigs, o.decision, ro)
	markClusters(out, st.by)
	if o.defaultDecision {
		r.lists.put(listKey, &clusteredList{clusters: out.clusters, marks: slices.Clone(out.marks[:n])})
	}
}

// listKey returns the list memo's key of the signed list, and remembers
// a list signed from the cache alone (setting st.hot).
func (r *refiner) listKey(results []engine.Result, out *refined, st *listState) [2]uint64 {
	if st.hot != nil {
		return st.hot.listKey
	}
	n := len(results)
	ids := make([]uint64, n)
	for i, sg := range out.sigs {
		switch {
		case st.entries[i] != nil:
			ids[i] = st.entries[i].id
		case sg != nil:
			ids[i] = sigID(sg)
		}
	}
	key := r.lists.key(out.keys, ids, st.winners, st.by)
	if r.cluster == nil && n > 0 && out.cached == n {
		st.hot = r.hot.put(results, slices.Clone(out.keys), st.entries, key)
	}
	return key
}

// joinKnown marks the duplicates the cluster service knows (known, by
// index in results) under their winner's mark.
func (out *refined) joinKnown(results []engine.Result, known map[int]knownDup) {
	if len(known) == 0 {
		return
	}
	var explained []string // the tags' explanations by winner (taggedExplain)
	out.serviceDups = slices.Grow(out.serviceDups, len(known))
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
		var explain string
		if k.tagged {
			if explained == nil {
				explained = make([]string, len(results))
				out.taggedDups = slices.Grow(out.taggedDups, len(known))
			}
			explain = taggedExplain(results, k.winner, explained)
		} else {
			explain = "duplicate: the cluster service groups it under " + results[k.winner].URL + " (group " + k.group + ", verified against its winner)"
		}
		out.marks[i] = engine.Mark{Cluster: cluster, Winner: w, Relation: "duplicate", Explain: explain}
		out.serviceDups = append(out.serviceDups, [2]int{i, w})
		if k.tagged {
			out.taggedDups = append(out.taggedDups, [2]int{i, w})
		}
	}
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
	// A list whose every hit is tagged, with no cluster service to ask,
	// is grouped by its tags alone: nothing is looked up by canonical URL.
	if r.cluster != nil || !allTagged(results) {
		for i := range n {
			out.keys[i], keyErr[i] = r.keys.key(results[i].URL)
		}
	}
	// The cluster service first: results it knows as verified
	// duplicates of another result in the list need no online work, and
	// the winners it knows win online clusters too.
	known, winners := r.askCluster(ctx, out.keys)
	known, winners, presigned := taggedGroups(results, known, winners) // tags.go
	pending := 0
	var done chan signed
	for i := range n {
		res := &results[i]
		key, err := out.keys[i], keyErr[i]
		if _, ok := known[i]; ok || (presigned != nil && presigned[i]) {
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
			if s.internal {
				out.internal++
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
				setProbability(&mk, m.Verdict)
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
	// tagged: the group is the hit's winnow_group tag (tags.go), not the
	// cluster service's.
	tagged bool
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

// keepUnequal applies the content-equivalence decision of remove mode to
// the duplicates of a refined list: one the decision accepts against its
// winner stays a loser, dropped, and its explanation says which decision
// removed it; any other (a near-duplicate that is not content-equivalent,
// or one the cluster service grouped without signatures here) is kept,
// annotated, never silently dropped. cache, when not nil, keeps the
// verdicts across queries as the near-duplicate decision's are kept.
func keepUnequal(ref *refined, results []engine.Result, remove similarity.Decision, cache similarity.VerdictCache) {
	for i, mk := range ref.marks {
		w := mk.Winner
		if w < 0 || w == i {
			continue
		}
		if i >= len(ref.sigs) || w >= len(ref.sigs) || ref.sigs[i] == nil || ref.sigs[w] == nil {
			ref.marks[i].Keep = true
			ref.marks[i].Explain = "kept: not checked for content-equivalence (no signature here); near-duplicate decision: " + mk.Explain
			continue
		}
		a, b := ref.sigs[w], ref.sigs[i]
		v, ok := similarity.Verdict{}, false
		if cache != nil {
			v, ok = cache.Verdict(a, b)
		}
		if !ok {
			v = remove.Decide(a, b)
			if cache != nil {
				cache.SetVerdict(a, b, v)
			}
		}
		setProbability(&ref.marks[i], v)
		if ref.removeVerdicts == nil {
			ref.removeVerdicts = map[int]similarity.Verdict{}
		}
		ref.removeVerdicts[i] = v
		if resultlist.Removable(v) {
			ref.marks[i].Explain = "removed by the content-equivalence decision: " + v.Explain()
			continue
		}
		ref.marks[i].Keep = true
		ref.marks[i].Explain = "kept: a near-duplicate of " + results[w].URL + " but not content-equivalent (" + v.Explain() + "); near-duplicate decision: " + mk.Explain
	}
}

// setProbability puts a verdict's decision and calibrated probability
// into a duplicate's mark, for its _winnow annotation; a verdict without
// one (a paper method) clears them.
func setProbability(mk *engine.Mark, v similarity.Verdict) {
	mk.Decision, mk.Probability, mk.ProbabilityAtMost = "", 0, false
	if !math.IsNaN(v.Probability) {
		mk.Decision, mk.Probability, mk.ProbabilityAtMost = v.Purpose.String(), v.Probability, v.Verify.Cut
	}
}
