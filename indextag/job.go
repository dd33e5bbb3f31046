package indextag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/winnow-search/winnow/corpus"
	"github.com/winnow-search/winnow/fetch"
	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// Defaults of [Options].
const (
	DefaultBatch   = 500
	DefaultLargest = 10
	DefaultSample  = 5
)

// ErrRead is wrapped by the error of a run that could not read the index;
// a run that read it returns nil even when some writes failed (they are
// counted by reason in [Writes]).
var ErrRead = errors.New("indextag: could not read the index")

// Options configures [Run]. Target, Signer, Group, Remove and Rank are
// required; cmd/winnow fills them from the configuration as winnow dedup
// does (options.Signer, options.Decisions, options.Winners).
type Options struct {
	Target Target
	Signer page.Signer
	// Group is the near-duplicate decision that clusters; Remove the
	// content-equivalence decision of winnow_removable.
	Group, Remove similarity.Decision
	// Rank elects winners.
	Rank offline.Ranking
	// SingleLink clusters by single link instead of keeping only members
	// that match their winner (dedup.single_link).
	SingleLink bool
	// Workers signs pages in parallel; 0 means GOMAXPROCS.
	Workers int
	// Fields names the stored fields read as a page (dedup.fields.*).
	Fields corpus.JSONLFields
	// Fetch, if not nil, fetches the URL of a document that has no text
	// or HTML field (with its SSRF guard); nil: such a document is
	// skipped.
	Fetch *fetch.Client
	// Apply writes the tags; false is a dry run that writes nothing.
	Apply bool
	// Since, if not nil, makes the run incremental.
	Since *Since
	// Checkpoint is the checkpoint file of an applying run; "" none.
	Checkpoint string
	// Fingerprint identifies the settings that decide the groups: a
	// checkpoint written under another fingerprint is refused.
	Fingerprint string
	// Rate bounds the documents written a second; 0 is unbounded.
	Rate float64
	// Batch is the documents of one write request; 0 means DefaultBatch
	// (at most Rate, so that a slow rate writes steadily).
	Batch int
	// Slices is the parallel read slices of Elasticsearch and OpenSearch;
	// 0 means GOMAXPROCS (one for an index under 1,000 documents).
	Slices int
	// HTTPClient talks to the engine; nil: a client with a 2-minute
	// timeout.
	HTTPClient *http.Client
	// MaxBackoff caps the wait between retries (DefaultMaxBackoff);
	// RetryFor is how long a request is retried before the run gives up
	// (DefaultRetryFor; negative: forever).
	MaxBackoff, RetryFor time.Duration
	// Largest and Sample are how many of the largest groups and sample
	// duplicates the report lists (DefaultLargest, DefaultSample).
	Largest, Sample int
	// Progress, if not nil, is told of progress: stage ("reading",
	// "writing") and documents done since its last call.
	Progress func(stage string, n int)
	// Logger logs skipped documents and failed writes; nil:
	// slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	o.Workers = cmp.Or(o.Workers, runtime.GOMAXPROCS(0))
	o.Batch = cmp.Or(o.Batch, DefaultBatch)
	if o.Rate > 0 && float64(o.Batch) > o.Rate {
		o.Batch = max(1, int(o.Rate))
	}
	o.MaxBackoff = cmp.Or(o.MaxBackoff, DefaultMaxBackoff)
	switch {
	case o.RetryFor == 0:
		o.RetryFor = DefaultRetryFor
	case o.RetryFor < 0:
		o.RetryFor = 0
	}
	o.Largest = cmp.Or(o.Largest, DefaultLargest)
	o.Sample = cmp.Or(o.Sample, DefaultSample)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Progress == nil {
		o.Progress = func(string, int) {}
	}
	d := corpus.DefaultJSONLFields
	f := &o.Fields
	for _, p := range []struct{ f, d *[]string }{{&f.ID, &d.ID}, {&f.URL, &d.URL}, {&f.HTML, &d.HTML}, {&f.Text, &d.Text}, {&f.Popularity, &d.Popularity}} {
		if len(*p.f) == 0 {
			*p.f = *p.d
		}
	}
	return o
}

// readFields are the stored fields a read asks for: those of a page and
// the tags.
func (o Options) readFields() []string {
	f := o.Fields
	var all []string
	for _, l := range [][]string{f.ID, f.URL, f.HTML, f.Text, f.Popularity, tagFields} {
		for _, n := range l {
			if !slices.Contains(all, n) {
				all = append(all, n)
			}
		}
	}
	return all
}

// entry is one document read and signed: all that is kept of it.
type entry struct {
	ref
	url        string
	popularity float64
	ver        version
	sig        similarity.Signature
	cut        bool
	old        Tags // the tags it carried when read
	tagged     bool // it carried a group
	role       role
}

// role is what an incremental run reads a document as.
type role uint8

const (
	roleAll    role = iota // a full run's document
	roleNew                // new or changed since the -since value
	roleWinner             // an existing group's winner
	roleOrphan             // a member of a group whose winner is gone
)

// Report is what a run found and did; its JSON is `winnow index -o`.
type Report struct {
	Engine  string `json:"engine"`
	Kind    string `json:"kind"`
	Index   string `json:"index"`
	Applied bool   `json:"applied"`
	// Read is how the index was read: "point in time", "scroll",
	// "cursorMark", or "checkpoint" (a resumed run).
	Read string `json:"read"`
	// Source is what an Elasticsearch or OpenSearch read asked for:
	// "whole" (the stored _source as it is, when the fields read are
	// most of it) or "fields" (the engine filters it); empty for Solr.
	Source      string `json:"source,omitempty"`
	Incremental bool   `json:"incremental,omitempty"`
	// Docs are the documents signed; Bytes their pages' bytes.
	Docs    int   `json:"docs"`
	Bytes   int64 `json:"bytes"`
	Fetched int   `json:"fetched,omitempty"`
	// Skipped counts documents not compared, by reason.
	Skipped map[string]int `json:"skipped,omitempty"`
	Empty   int            `json:"too_short"`
	Cut     int            `json:"cut"`
	// Clusters counts groups of two or more; Singletons the rest.
	Clusters   int `json:"clusters"`
	Singletons int `json:"singletons"`
	Duplicates int `json:"duplicates"`
	Removable  int `json:"removable"`
	// Assigned counts, in an incremental run, new documents that joined
	// an existing group; Replaced the groups whose winner was gone.
	Assigned int      `json:"assigned,omitempty"`
	Replaced int      `json:"replaced_winners,omitempty"`
	Largest  []Group  `json:"largest"`
	Sample   []Sample `json:"sample"`
	Writes   Writes   `json:"writes"`
	// Elapsed is the run's wall time.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Group is one of the largest groups.
type Group struct {
	ID         string `json:"id"`
	Size       int    `json:"size"`
	Winner     string `json:"winner"`
	WinnerURL  string `json:"winner_url,omitempty"`
	WinnerRule string `json:"winner_rule,omitempty"`
	Removable  int    `json:"removable"`
}

// Sample is one duplicate with the decisions' explanations.
type Sample struct {
	Group         string   `json:"group"`
	Winner        string   `json:"winner"`
	ID            string   `json:"id"`
	URL           string   `json:"url,omitempty"`
	Probability   *float64 `json:"probability,omitempty"`
	Explain       string   `json:"explain"`
	Removable     bool     `json:"removable"`
	RemoveExplain string   `json:"remove_explain,omitempty"`
}

// Writes counts what the write phase did (or would do, in a dry run:
// Planned and Unchanged).
type Writes struct {
	// Planned documents get tags they do not carry yet.
	Planned int `json:"planned"`
	// Unchanged documents already carry their tags.
	Unchanged int `json:"unchanged"`
	// Resumed documents were written by the run this one resumes.
	Resumed int `json:"resumed,omitempty"`
	Written int `json:"written"`
	// Reread documents had changed since read; Changed of them were
	// decided again on their new content.
	Reread  int `json:"reread"`
	Changed int `json:"changed"`
	// Missing documents were deleted since read.
	Missing int `json:"missing"`
	// Failed counts documents not written, by reason.
	Failed map[string]int `json:"failed,omitempty"`
	// Retries counts requests and items retried, by reason (HTTP 429,
	// rejected item, ...).
	Retries map[string]int `json:"retries,omitempty"`
}

// job is one run's state.
type job struct {
	o   Options
	st  store
	rep *Report

	mu      sync.Mutex // guards the tag scan's maps in an incremental run
	entries []entry
	// byID indexes entries by ID; winners maps each planned group to its
	// winner's entry. Both are set by plan.
	byID    map[string]int
	winners map[string]int
}

// Run tags the documents of o.Target (or, in a dry run, reports what it
// would write). The report is returned with any error; the error wraps
// ErrRead when the index could not be read, and is ctx's error when the
// run was stopped.
func Run(ctx context.Context, o Options) (*Report, error) {
	o = o.withDefaults()
	start := time.Now()
	t, err := Detect(ctx, o.Target, o)
	rep := &Report{Engine: t.Base.Redacted(), Kind: t.Kind, Index: t.Index, Applied: o.Apply, Incremental: o.Since != nil, Skipped: map[string]int{}}
	rep.Writes.Failed = map[string]int{}
	defer func() { rep.Elapsed = time.Since(start) }()
	if err != nil {
		return rep, fmt.Errorf("%w: %w", ErrRead, err)
	}
	o.Target = t
	j := &job{o: o, st: open(t, o), rep: rep}
	err = j.run(ctx)
	if c, ok := j.st.(interface{ retryCounts() map[string]int }); ok {
		for k, v := range c.retryCounts() {
			rep.Writes.Retries = cmpMap(rep.Writes.Retries)
			rep.Writes.Retries[k] += v
		}
	}
	return rep, err
}

func cmpMap(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

func (j *job) run(ctx context.Context) error {
	var ck *checkpoint
	var done map[string]bool
	if j.o.Apply && j.o.Checkpoint != "" {
		var err error
		ck, err = openCheckpoint(j.o.Checkpoint, j.header())
		if err != nil {
			return err
		}
		defer ck.close()
		if ck.resumed {
			j.entries, done = ck.entries, ck.written
			j.rep.Read = "checkpoint"
		}
	}
	if j.o.Apply {
		if err := j.st.prepare(ctx); err != nil {
			return err
		}
	}
	if j.rep.Read == "" {
		if err := j.read(ctx, ck); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%w: %w", ErrRead, err)
		}
		if ck != nil {
			if err := ck.readDone(len(j.entries)); err != nil {
				return err
			}
		}
	}
	j.count()
	ups, err := j.plan(ctx)
	if err != nil {
		return err
	}
	if !j.o.Apply {
		return nil
	}
	var todo []update
	for _, u := range ups {
		if done[u.id] {
			j.rep.Writes.Resumed++
			continue
		}
		todo = append(todo, u)
	}
	if err := j.write(ctx, todo, ck); err != nil {
		return err
	}
	if err := j.st.flush(ctx); err != nil {
		j.rep.Writes.Failed["flush: "+err.Error()]++
	}
	if ck != nil {
		return ck.finish()
	}
	return nil
}

func (j *job) header() ckptHeader {
	h := ckptHeader{Engine: j.o.Target.Base.Redacted(), Kind: j.o.Target.Kind, Index: j.o.Target.Index, Fingerprint: j.o.Fingerprint}
	if j.o.Since != nil {
		h.Since = j.o.Since.Field + ":" + j.o.Since.Value
	}
	return h
}

// count fills the report's document counts from the entries.
func (j *job) count() {
	j.rep.Docs = len(j.entries)
	for i := range j.entries {
		if j.entries[i].sig.Empty() {
			j.rep.Empty++
		}
		if j.entries[i].cut {
			j.rep.Cut++
		}
	}
}

// signed is a signing worker's result.
type signed struct {
	e     entry
	bytes int
	fetch bool
	skip  string // the reason it was skipped, "" if signed
}

// sign turns one stored document into an entry: its fields as a JSON
// Lines record gives them (or its URL fetched), signed.
func (j *job) sign(ctx context.Context, h hit, r role) signed {
	doc, err := j.o.Fields.Object(h.source, 0)
	var fetched bool
	if errors.Is(err, corpus.ErrNoBody) && j.o.Fetch != nil && doc.URL != "" {
		p, ferr := j.o.Fetch.Get(ctx, doc.URL, fetch.Validators{})
		if ferr != nil {
			return signed{skip: "fetch: " + fetchReason(ferr)}
		}
		doc.Body, doc.ContentType, err, fetched = p.Body, p.ContentType, nil, true
	}
	if err != nil {
		reason := err.Error()
		if errors.Is(err, corpus.ErrNoBody) {
			reason = "no text or HTML field"
		}
		j.o.Logger.Debug("index_skip", "id", h.id, "err", err)
		return signed{skip: reason}
	}
	res, err := j.o.Signer.Sign(doc.Body, doc.ContentType)
	if err != nil {
		return signed{skip: "unsignable page"}
	}
	e := entry{ref: h.ref, url: doc.URL, popularity: doc.Popularity, ver: h.ver, sig: res.Sig,
		cut: res.Doc.Truncated || res.Sig.Capped, role: r}
	e.old, e.tagged = storedTags(h.source)
	return signed{e: e, bytes: len(doc.Body), fetch: fetched}
}

// fetchReason is the report's reason for a failed fetch.
func fetchReason(err error) string {
	for _, e := range []error{fetch.ErrBlocked, fetch.ErrTooLarge, fetch.ErrContentType, fetch.ErrTooManyRedirects, fetch.ErrStatus, fetch.ErrTimeout} {
		if errors.Is(err, e) {
			return strings.TrimPrefix(e.Error(), "fetch: ")
		}
	}
	return "error"
}

// readInto scans the documents sel selects, signs them on the workers as
// they stream and hands each result to keep, one at a time.
func (j *job) readInto(ctx context.Context, r role, scan func(ctx context.Context, fn func(hit) error) error, keep func(signed) error) error {
	// Two pages in flight: the engine serves the next page while the
	// workers sign this one, and memory stays bounded by the page size.
	hits := make(chan hit, 2*pageSize)
	results := make(chan signed, j.o.Workers*4)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range j.o.Workers {
		wg.Go(func() {
			for h := range hits {
				results <- j.sign(ctx, h, r)
			}
		})
	}
	var scanErr error
	go func() {
		defer close(results)
		defer wg.Wait()
		defer close(hits)
		scanErr = scan(ctx, func(h hit) error {
			select {
			case hits <- h:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	var keepErr error
	for s := range results {
		if keepErr != nil {
			continue
		}
		if s.skip != "" {
			j.rep.Skipped[s.skip]++
		} else {
			j.rep.Bytes += int64(s.bytes)
			if s.fetch {
				j.rep.Fetched++
			}
			if keepErr = keep(s); keepErr != nil {
				cancel()
			}
		}
		j.o.Progress("reading", 1)
	}
	return cmp.Or(keepErr, scanErr, ctx.Err())
}

// read reads and signs what the run compares: every document, or in an
// incremental run the new ones, the winners and the orphaned groups.
func (j *job) read(ctx context.Context, ck *checkpoint) error {
	keep := func(s signed) error {
		j.entries = append(j.entries, s.e)
		if ck != nil {
			return ck.doc(&s.e)
		}
		return nil
	}
	fields := j.o.readFields()
	slicesN := j.o.Slices
	if j.o.Since != nil {
		return j.readIncremental(ctx, fields, keep)
	}
	if slicesN == 0 {
		slicesN = runtime.GOMAXPROCS(0)
		if n, err := j.st.count(ctx, selector{}); err != nil {
			return err
		} else if n < 1000 {
			slicesN = 1
		}
	}
	err := j.readInto(ctx, roleAll, func(ctx context.Context, fn func(hit) error) error {
		return j.st.scan(ctx, selector{}, fields, slicesN, fn)
	}, keep)
	j.rep.Read = j.readMethod()
	if e, ok := j.st.(*elastic); ok {
		j.rep.Source = map[bool]string{true: "whole", false: "fields"}[e.whole]
	}
	return err
}

// readMethod names how the store read.
func (j *job) readMethod() string {
	switch s := j.st.(type) {
	case *elastic:
		if s.scrolled {
			return "scroll"
		}
		return "point in time"
	default:
		return "cursorMark"
	}
}

// plan decides every document's tags and returns the updates of those
// that do not carry them yet; it fills the report's groups.
func (j *job) plan(ctx context.Context) ([]update, error) {
	// A document is keyed by its _id, as winnow dedup keys a record by
	// its id: the indexes of an alias that share IDs are not one set of
	// documents.
	j.byID = make(map[string]int, len(j.entries))
	for i := range j.entries {
		e := &j.entries[i]
		if k, ok := j.byID[e.id]; ok {
			return nil, fmt.Errorf("indextag: %s holds two documents of _id %q (in %s and %s): winnow keys a document by its _id; tag each index on its own", j.o.Target.Index, e.id, j.entries[k].index, e.index)
		}
		j.byID[e.id] = i
	}
	var tags map[string]Tags
	var err error
	if j.o.Since != nil {
		tags, err = j.planIncremental(ctx)
	} else {
		tags, err = j.planAll(ctx, j.entries, true)
	}
	if err != nil {
		return nil, err
	}
	j.winners = map[string]int{}
	var ups []update
	for i := range j.entries {
		e := &j.entries[i]
		t, ok := tags[e.id]
		if !ok {
			continue
		}
		if t.Winner {
			j.winners[t.Group] = i
		}
		if e.tagged && e.old.equal(t) {
			j.rep.Writes.Unchanged++
			continue
		}
		ups = append(ups, update{ref: e.ref, ver: e.ver, tags: t})
	}
	j.rep.Writes.Planned = len(ups)
	return ups, nil
}

// lineDocs returns what offline needs of the entries: documents keyed by
// their _id (as winnow dedup keys a JSON Lines record by its id) and their
// rank keys.
func (j *job) lineDocs(es []entry) ([]*similarity.Signature, []offline.Doc, []string) {
	sigs := make([]*similarity.Signature, len(es))
	docs := make([]offline.Doc, len(es))
	keys := make([]string, len(es))
	for i := range es {
		sigs[i] = &es[i].sig
		docs[i] = offline.Doc{Key: es[i].id, ID: es[i].id, URL: es[i].url, Popularity: es[i].popularity}
		keys[i] = j.o.Rank.Key(docs[i])
	}
	return sigs, docs, keys
}

// planAll clusters es as winnow dedup does and returns each document's
// tags; report adds the groups to the report.
func (j *job) planAll(ctx context.Context, es []entry, report bool) (map[string]Tags, error) {
	sigs, docs, keys := j.lineDocs(es)
	// BatchCluster does not stop on a context: it runs apart, so that a
	// stop is not held up by it.
	ch := make(chan []similarity.Cluster, 1)
	go func() {
		ch <- similarity.BatchCluster(sigs, j.o.Group, similarity.BatchOptions{Keys: keys, WinnerVerified: !j.o.SingleLink, Workers: j.o.Workers})
	}()
	var clusters []similarity.Cluster
	select {
	case clusters = <-ch:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	tags := make(map[string]Tags, len(es))
	one := 1.0
	var lines []offline.Line
	for _, c := range clusters {
		line := offline.NewLine(c, docs, sigs, j.o.Rank, j.o.Remove)
		for i, m := range c.Members {
			t := Tags{Group: line.ID, Winner: i == 0, Probability: &one}
			if i > 0 {
				r := line.Members[i].Removal
				t.Removable, t.Probability = r.Removable, r.Probability
			}
			tags[es[m.Index].id] = t
		}
		if report {
			lines = append(lines, line)
		}
	}
	// Pages that match none are groups of their own, with the ID winnow
	// dedup would give them, so that a collapse on the group keeps them.
	for i := range es {
		if _, ok := tags[es[i].id]; !ok {
			tags[es[i].id] = Tags{Group: fmt.Sprintf("%016x", offline.ClusterID(es[i].id)), Winner: true, Probability: &one}
			if report {
				j.rep.Singletons++
			}
		}
	}
	if report {
		j.reportLines(lines)
	}
	return tags, nil
}

// reportLines adds clusters to the report: counts, the largest groups and
// a sample of duplicates with their explanations.
func (j *job) reportLines(lines []offline.Line) {
	for _, l := range lines {
		if l.Size == 1 {
			j.rep.Singletons++
			continue
		}
		j.rep.Clusters++
		j.rep.Duplicates += l.Size - 1
		for _, m := range l.Members[1:] {
			if m.Removal != nil && m.Removal.Removable {
				j.rep.Removable++
			}
		}
	}
	slices.SortStableFunc(lines, func(a, b offline.Line) int { return cmp.Or(cmp.Compare(b.Size, a.Size), cmp.Compare(a.ID, b.ID)) })
	for _, l := range lines[:min(len(lines), j.o.Largest)] {
		if l.Size < 2 {
			break
		}
		g := Group{ID: l.ID, Size: l.Size, Winner: l.Winner.ID, WinnerURL: l.Winner.URL, WinnerRule: l.WinnerRule}
		for _, m := range l.Members[1:] {
			if m.Removal != nil && m.Removal.Removable {
				g.Removable++
			}
		}
		j.rep.Largest = append(j.rep.Largest, g)
	}
	// The sample: the first duplicate of each of the largest groups, then
	// the second, so that it spans groups.
	for k := 1; len(j.rep.Sample) < j.o.Sample; k++ {
		added := false
		for _, l := range lines {
			if l.Size < 2 || len(j.rep.Sample) >= j.o.Sample {
				break
			}
			if k >= len(l.Members) {
				continue
			}
			m := l.Members[k]
			s := Sample{Group: l.ID, Winner: l.Winner.ID, ID: m.ID, URL: m.URL, Explain: m.Explain}
			if m.Removal != nil {
				s.Probability, s.Removable, s.RemoveExplain = m.Removal.Probability, m.Removal.Removable, m.Removal.RemoveExplain
			}
			j.rep.Sample = append(j.rep.Sample, s)
			added = true
		}
		if !added {
			break
		}
	}
}

// maxAttempts bounds how often one document is re-read after a conflict
// before it is counted as failed.
const maxAttempts = 4

// write applies the updates in batches at the bounded rate; back-pressure
// on single items is retried, changed documents are re-read.
func (j *job) write(ctx context.Context, ups []update, ck *checkpoint) error {
	p := newPacer(j.o.Rate)
	attempts := map[string]int{}
	for start := 0; start < len(ups); {
		end := min(start+j.o.Batch, len(ups))
		batch := ups[start:end]
		if err := p.take(ctx, len(batch)); err != nil {
			return err
		}
		var b backoff
		b.max = j.o.MaxBackoff
		pending := batch
		for len(pending) > 0 {
			res, err := j.st.write(ctx, pending)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				// The request itself failed past its retries (the
				// engine refuses or is gone): the batch and every one
				// after it are counted by the reason, and the run ends;
				// the checkpoint resumes it.
				j.o.Logger.Warn("index_write_failed", "docs", len(pending), "err", err)
				j.rep.Writes.Failed[writeReason(err)] += len(pending) + len(ups) - end
				return nil
			}
			var ok []string
			var retry, reread []update
			for i, r := range res {
				u := pending[i]
				switch r.outcome {
				case outcomeOK:
					ok = append(ok, u.id)
				case outcomeConflict:
					reread = append(reread, u)
				case outcomeRejected:
					retry = append(retry, u)
				case outcomeMissing:
					j.rep.Writes.Missing++
				default:
					j.rep.Writes.Failed[r.outcome]++
				}
			}
			j.rep.Writes.Written += len(ok)
			j.o.Progress("writing", len(ok))
			if ck != nil && len(ok) > 0 {
				if err := ck.wrote(ok); err != nil {
					return err
				}
			}
			if len(reread) > 0 {
				again, err := j.reread(ctx, reread, attempts)
				if err != nil {
					return err
				}
				retry = append(retry, again...)
			}
			if len(retry) > 0 {
				j.rep.Writes.Retries = cmpMap(j.rep.Writes.Retries)
				j.rep.Writes.Retries["rejected or re-read item"] += len(retry)
				if err := b.wait(ctx, j.o.RetryFor, errors.New("items still rejected")); err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					j.rep.Writes.Failed["rejected past the retry time"] += len(retry)
					break
				}
			}
			pending = retry
		}
		start = end
	}
	return nil
}

// writeReason is the report's reason for a failed write request.
func writeReason(err error) string {
	if st := statusOf(err); st != 0 {
		return fmt.Sprintf("HTTP %d", st)
	}
	return "connection"
}

// reread reads documents that changed since they were read, signs them
// again and decides their tags against their group's winner (a winner
// stays one; a member that no longer matches its winner becomes a group
// of its own). It returns the updates still to write; documents that
// already carry their tags (a write of a stopped run) need none.
func (j *job) reread(ctx context.Context, ups []update, attempts map[string]int) ([]update, error) {
	j.rep.Writes.Reread += len(ups)
	refs := make([]ref, len(ups))
	for i, u := range ups {
		refs[i] = u.ref
	}
	hs, err := j.st.get(ctx, refs, j.o.readFields())
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		j.rep.Writes.Failed["re-read: "+writeReason(err)] += len(ups)
		return nil, nil
	}
	byID := map[string]hit{}
	for _, h := range hs {
		byID[h.id] = h
	}
	var out []update
	for _, u := range ups {
		h, ok := byID[u.id]
		if !ok {
			j.rep.Writes.Missing++
			continue
		}
		attempts[u.id]++
		if attempts[u.id] > maxAttempts {
			j.rep.Writes.Failed["changed on every attempt"]++
			continue
		}
		s := j.sign(ctx, h, roleAll)
		if s.skip != "" {
			j.rep.Writes.Failed["re-read: "+s.skip]++
			continue
		}
		t := u.tags
		if i, ok := j.byID[u.id]; ok && !sameSig(&j.entries[i].sig, &s.e.sig) {
			j.rep.Writes.Changed++
			t = j.decideAgain(u.id, t, &s.e.sig)
		}
		if s.e.tagged && s.e.old.equal(t) {
			j.rep.Writes.Unchanged++
			continue
		}
		out = append(out, update{ref: h.ref, ver: h.ver, tags: t})
	}
	return out, nil
}

// decideAgain decides the tags of a document whose page changed: a
// winner stays its group's winner; a member is decided against its
// winner, and becomes a group of its own if it no longer matches.
func (j *job) decideAgain(id string, t Tags, sig *similarity.Signature) Tags {
	one := 1.0
	alone := Tags{Group: fmt.Sprintf("%016x", offline.ClusterID(id)), Winner: true, Probability: &one}
	if t.Winner {
		return t
	}
	wi, ok := j.winners[t.Group]
	if !ok {
		return alone
	}
	w := &j.entries[wi].sig
	g := j.o.Group
	g.Exact = true
	v := g.Decide(w, sig)
	if !v.Duplicate {
		return alone
	}
	r := j.o.Remove
	r.Exact = true
	rv := r.DecideAfter(w, sig, &v) // the group verdict's alignment, not a second one
	return Tags{Group: t.Group, Removable: rv.Duplicate, Probability: offline.Probability(v.Probability)}
}

// sameSig reports whether two signatures are of the same page.
func sameSig(a, b *similarity.Signature) bool {
	if a.Simhash != b.Simhash || len(a.MinHash) != len(b.MinHash) || len(a.Seq) != len(b.Seq) {
		return false
	}
	return slices.Equal(a.MinHash, b.MinHash) && slices.Equal(a.Seq, b.Seq)
}
