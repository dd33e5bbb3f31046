package indextag

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/winnow-search/winnow/corpus"
)

// pageSize is the documents a read request asks for.
const pageSize = 100

// keepAlive is how long a point in time or scroll lives between requests.
const keepAlive = "5m"

// elastic is an Elasticsearch or OpenSearch index.
type elastic struct {
	c          *conn
	index      string
	opensearch bool
	// scrolled reports that the last scan fell back to a scroll (no
	// point in time, or no _shard_doc sort).
	scrolled bool
	// whole reports that the last scan asked for the whole _source (see
	// sourceOf).
	whole bool

	mu     sync.Mutex
	first  string // the first concrete index a read saw; guarded by mu
	spread bool   // the target spans several indexes; guarded by mu
}

// saw records the concrete index of a document read.
func (e *elastic) saw(index string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.first == "":
		e.first = index
	case index != e.first:
		e.spread = true
	}
}

// where is the index that a write or a re-read of r names: the target
// itself when it is one index (an alias over one index included: the
// operator's privileges may name only the alias), else the concrete
// index that holds r (an alias over several, where a write by the
// alias's name goes to its write index or is refused), and always a data
// stream's backing index (a data stream takes only new documents).
func (e *elastic) where(r ref) string {
	e.mu.Lock()
	spread := e.spread
	e.mu.Unlock()
	if r.index == "" || (!spread && !strings.HasPrefix(r.index, ".ds-")) {
		return e.index
	}
	return r.index
}

func (e *elastic) path(p string) string { return "/" + url.PathEscape(e.index) + p }

func (e *elastic) query(sel selector) any {
	switch {
	case sel.winners:
		return map[string]any{"term": map[string]any{FieldWinner: true}}
	case sel.since != nil:
		return map[string]any{"range": map[string]any{sel.since.Field: map[string]any{"gt": sel.since.Value}}}
	}
	return map[string]any{"match_all": map[string]any{}}
}

func (e *elastic) count(ctx context.Context, sel selector) (int64, error) {
	body, _ := json.Marshal(map[string]any{"query": e.query(sel)})
	var out struct {
		Count int64 `json:"count"`
	}
	err := e.c.do(ctx, "POST", e.path("/_count"), nil, body, "", &out)
	return out.Count, err
}

// searchAnswer is the part of a search answer read here (pit_id,
// _scroll_id, hits.hits), decoded as it streams (decode.go).
type searchAnswer struct {
	PitID    string
	ScrollID string
	Hits     []esHit
	// Failed counts the shards that did not answer, Failure is the first
	// one's reason, and TimedOut reports a search cut short: the engine
	// still answers 200 with the hits of the others.
	Failed   int64
	Failure  string
	TimedOut bool

	want []string // the _source fields decoded, nil for all (set before decoding)
}

// partial returns an error when the answer holds only part of the hits
// asked for (a shard failed, or the search timed out): taken as the
// whole, the documents of the failed shards would be missing from the
// groups, and an incremental run would elect second winners in the
// groups whose winners it did not see.
func (a *searchAnswer) partial() error {
	switch {
	case a.Failed > 0:
		return fmt.Errorf("indextag: %d shards failed to answer (%s): the answer is not the whole index", a.Failed, a.Failure)
	case a.TimedOut:
		return errors.New("indextag: the search timed out (search.default_search_timeout?): the answer is not the whole index")
	}
	return nil
}

// esHit is one hit of a search answer.
type esHit struct {
	ID          string
	Index       string // the concrete index (an alias's or data stream's member)
	Routing     string
	Source      map[string]corpus.Field
	SeqNo       int64
	PrimaryTerm int64
	Sort        json.RawMessage // the sort values, the next page's search_after
}

// hit is the stored document h.
func (h *esHit) hit() hit {
	return hit{ref: ref{id: h.ID, index: h.Index, routing: h.Routing}, source: h.Source, ver: version{SeqNo: h.SeqNo, PrimaryTerm: h.PrimaryTerm}}
}

// errNoPIT marks a point-in-time read the engine refused before any
// document was read: the scan falls back to a scroll.
var errNoPIT = errors.New("indextag: no point in time")

func (e *elastic) scan(ctx context.Context, sel selector, fields []string, slices int, fn func(hit) error) error {
	slices = max(slices, 1)
	src := e.sourceOf(ctx, sel, fields)
	e.whole = src.filter == true
	err := e.scanPIT(ctx, sel, src, slices, fn)
	if !errors.Is(err, errNoPIT) {
		return err
	}
	e.scrolled = true
	return e.scanScroll(ctx, sel, src, slices, fn)
}

// source is what a read asks for as _source, and what it decodes of it.
type source struct {
	filter any      // the request's _source: true, or the fields
	want   []string // the fields decoded, nil for all
}

// wholeSourceShare is the share of a sample's _source bytes the fields
// read must hold for a read to ask for the whole _source; sourceSample is
// the sample's documents: few, since it carries every field, large unread
// ones included.
const (
	wholeSourceShare = 0.75
	sourceSample     = 5
)

// sourceOf chooses the _source of a read. A list of fields makes the
// engine parse each stored document and write the fields again, where
// the whole _source is sent as it is stored: on 2,704 LLVM pages that
// filter cost OpenSearch 2.19 4.9–5.3 s of CPU against 1.4 s, and
// Elasticsearch 8.19 7.2 s against 1.5–3.3 s, as much as winnow's own
// reading and signing. So when a sample of the documents shows the fields
// read to be most of their bytes (the page's HTML or text), the read asks
// for the whole _source and skips the other fields as it decodes;
// otherwise (large fields winnow does not read) it filters.
func (e *elastic) sourceOf(ctx context.Context, sel selector, fields []string) source {
	filtered := source{filter: sourceFilter(fields), want: fields}
	if fields == nil {
		return filtered
	}
	body, _ := json.Marshal(map[string]any{"size": sourceSample, "query": e.query(sel), "_source": true, "track_total_hits": false})
	var ans struct {
		Hits struct {
			Hits []struct {
				Source map[string]json.RawMessage `json:"_source"`
			} `json:"hits"`
		} `json:"hits"`
	}
	// Back-pressure is retried as for every read; any other failure
	// leaves the filter.
	if err := e.c.do(ctx, "POST", e.path("/_search"), nil, body, "", &ans); err != nil {
		return filtered
	}
	var read, all int
	for _, h := range ans.Hits.Hits {
		for name, v := range h.Source {
			all += len(name) + len(v)
			if slices.Contains(fields, name) {
				read += len(name) + len(v)
			}
		}
	}
	if all == 0 || float64(read) < wholeSourceShare*float64(all) {
		return filtered
	}
	return source{filter: true, want: fields}
}

// openPIT opens a point in time: POST /{index}/_pit on Elasticsearch,
// POST /{index}/_search/point_in_time on OpenSearch 2.x.
func (e *elastic) openPIT(ctx context.Context) (string, error) {
	q := url.Values{"keep_alive": {keepAlive}}
	var out struct {
		ID    string `json:"id"`
		PitID string `json:"pit_id"`
	}
	p := "/_pit"
	if e.opensearch {
		p = "/_search/point_in_time"
	}
	err := e.c.do(ctx, "POST", e.path(p), q, nil, "", &out)
	switch st := statusOf(err); {
	case err == nil:
	case st == 400 || st == 404 || st == 405:
		return "", fmt.Errorf("%w: %v", errNoPIT, err)
	default:
		return "", err
	}
	if id := cmp.Or(out.ID, out.PitID); id != "" {
		return id, nil
	}
	return "", fmt.Errorf("%w: the answer has no id", errNoPIT)
}

func (e *elastic) closePIT(id string) {
	ctx := context.WithoutCancel(context.Background())
	if e.opensearch {
		body, _ := json.Marshal(map[string]any{"pit_id": []string{id}})
		e.c.once(ctx, "DELETE", "/_search/point_in_time", nil, body, "", nil)
		return
	}
	body, _ := json.Marshal(map[string]any{"id": id})
	e.c.once(ctx, "DELETE", "/_pit", nil, body, "", nil)
}

// scanPIT reads through a point in time with search_after on
// _shard_doc, one goroutine a slice.
func (e *elastic) scanPIT(ctx context.Context, sel selector, src source, slices int, fn func(hit) error) error {
	pit, err := e.openPIT(ctx)
	if err != nil {
		return err
	}
	defer e.closePIT(pit)
	// A probe for the _shard_doc sort, which OpenSearch 2.x lacks ("No
	// mapping found for [_shard_doc]"): refused, the scan scrolls instead.
	probe, _ := json.Marshal(map[string]any{"size": 0, "pit": map[string]any{"id": pit, "keep_alive": keepAlive},
		"sort": []any{map[string]any{"_shard_doc": "asc"}}, "track_total_hits": false})
	if err := e.c.do(ctx, "POST", "/_search", nil, probe, "", nil); err != nil {
		if statusOf(err) == 400 {
			return fmt.Errorf("%w: %v", errNoPIT, err)
		}
		return err
	}
	return runSlices(ctx, slices, func(ctx context.Context, slice int) error {
		var after json.RawMessage
		id := pit
		for {
			req := map[string]any{
				"size":                pageSize,
				"pit":                 map[string]any{"id": id, "keep_alive": keepAlive},
				"sort":                []any{map[string]any{"_shard_doc": "asc"}},
				"seq_no_primary_term": true,
				"query":               e.query(sel),
				"track_total_hits":    false,
				"_source":             src.filter,
			}
			if slices > 1 {
				req["slice"] = map[string]any{"id": slice, "max": slices}
			}
			if after != nil {
				req["search_after"] = after
			}
			body, _ := json.Marshal(req)
			ans := searchAnswer{want: src.want}
			if err := cmp.Or(e.c.do(ctx, "POST", "/_search", nil, body, "", &ans), ans.partial()); err != nil {
				return err
			}
			id = cmp.Or(ans.PitID, id)
			hs := ans.Hits
			for _, h := range hs {
				e.saw(h.Index)
				if err := fn(h.hit()); err != nil {
					return err
				}
			}
			if len(hs) < pageSize {
				return nil
			}
			after = hs[len(hs)-1].Sort
		}
	})
}

// scanScroll reads through a scroll sorted on _doc, one goroutine a
// slice: the engines without a point in time.
func (e *elastic) scanScroll(ctx context.Context, sel selector, src source, slices int, fn func(hit) error) error {
	return runSlices(ctx, slices, func(ctx context.Context, slice int) error {
		req := map[string]any{
			"size":                pageSize,
			"sort":                []string{"_doc"},
			"seq_no_primary_term": true,
			"query":               e.query(sel),
			"_source":             src.filter,
		}
		if slices > 1 {
			req["slice"] = map[string]any{"id": slice, "max": slices}
		}
		body, _ := json.Marshal(req)
		ans := searchAnswer{want: src.want}
		if err := cmp.Or(e.c.do(ctx, "POST", e.path("/_search"), url.Values{"scroll": {keepAlive}}, body, "", &ans), ans.partial()); err != nil {
			return err
		}
		scrollID := ans.ScrollID
		defer func() {
			body, _ := json.Marshal(map[string]any{"scroll_id": []string{scrollID}})
			e.c.once(context.WithoutCancel(ctx), "DELETE", "/_search/scroll", nil, body, "", nil)
		}()
		for {
			hs := ans.Hits
			for _, h := range hs {
				e.saw(h.Index)
				if err := fn(h.hit()); err != nil {
					return err
				}
			}
			if len(hs) == 0 {
				return nil
			}
			body, _ := json.Marshal(map[string]any{"scroll": keepAlive, "scroll_id": scrollID})
			ans = searchAnswer{want: src.want}
			if err := cmp.Or(e.c.doAdvancing(ctx, "POST", "/_search/scroll", nil, body, "", &ans), ans.partial()); err != nil {
				return err
			}
			scrollID = cmp.Or(ans.ScrollID, scrollID)
		}
	})
}

// sourceFilter is the _source of a request: the fields, or all.
func sourceFilter(fields []string) any {
	if fields == nil {
		return true
	}
	return fields
}

// runSlices runs fn for slices 0..n-1 on n goroutines and returns the
// first error; the others are stopped through their context.
func runSlices(ctx context.Context, n int, fn func(ctx context.Context, slice int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := range n {
		wg.Go(func() {
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel(err) })
			}
		})
	}
	wg.Wait()
	return first
}

func (e *elastic) get(ctx context.Context, refs []ref, fields []string) ([]hit, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	// Each document is asked for in its own index with its routing: an
	// _mget on an alias over several indexes is refused.
	docs := make([]map[string]any, len(refs))
	for i, r := range refs {
		d := map[string]any{"_index": e.where(r), "_id": r.id}
		if r.routing != "" {
			d["routing"] = r.routing
		}
		docs[i] = d
	}
	var q url.Values
	if fields != nil {
		q = url.Values{"_source_includes": {strings.Join(fields, ",")}}
	}
	body, _ := json.Marshal(map[string]any{"docs": docs})
	var out struct {
		Docs []struct {
			ID          string                     `json:"_id"`
			Index       string                     `json:"_index"`
			Routing     string                     `json:"_routing"`
			Found       bool                       `json:"found"`
			Source      map[string]json.RawMessage `json:"_source"` // few documents: decoded whole
			SeqNo       int64                      `json:"_seq_no"`
			PrimaryTerm int64                      `json:"_primary_term"`
		} `json:"docs"`
	}
	if err := e.c.do(ctx, "POST", "/_mget", q, body, "", &out); err != nil {
		return nil, err
	}
	var hs []hit
	for _, d := range out.Docs {
		if d.Found {
			hs = append(hs, hit{ref: ref{id: d.ID, index: d.Index, routing: d.Routing}, source: rawFields(d.Source), ver: version{SeqNo: d.SeqNo, PrimaryTerm: d.PrimaryTerm}})
		}
	}
	return hs, nil
}

// esTypes are the mapping types of the tag fields.
var esTypes = map[string]string{FieldGroup: "keyword", FieldWinner: "boolean", FieldRemovable: "boolean", FieldProbability: "float"}

func (e *elastic) prepare(ctx context.Context) error {
	var m map[string]struct {
		Mappings struct {
			Source struct {
				Enabled  *bool    `json:"enabled"`
				Includes []string `json:"includes"`
				Excludes []string `json:"excludes"`
			} `json:"_source"`
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
		} `json:"mappings"`
	}
	if err := e.c.do(ctx, "GET", e.path("/_mapping"), nil, nil, "", &m); err != nil {
		return fmt.Errorf("indextag: reading the mapping of %s: %w", e.index, err)
	}
	// A partial update indexes the document again from its _source: the
	// fields a mapping leaves out of it would no longer be searchable.
	for idx, im := range m {
		src := im.Mappings.Source
		switch {
		case src.Enabled != nil && !*src.Enabled:
			return fmt.Errorf("indextag: index %s has _source disabled: its documents cannot be updated", idx)
		case len(src.Includes) > 0 || len(src.Excludes) > 0:
			return fmt.Errorf("indextag: index %s keeps only part of each document in _source (includes %q, excludes %q): an update indexes the document again from its _source, so the fields left out would be lost from the index; winnow does not write to it", idx, src.Includes, src.Excludes)
		}
	}
	// Each index of the target (an alias's, a data stream's backing
	// indexes) gets the fields it lacks: one that a rollover added after
	// the others were tagged would otherwise map winnow_group dynamically
	// as text on the first write, which a collapse cannot use.
	missing := map[string]map[string]any{} // by index
	for _, idx := range slices.Sorted(maps.Keys(m)) {
		for _, f := range tagFields {
			want := esTypes[f]
			p, ok := m[idx].Mappings.Properties[f]
			switch {
			case !ok:
				if missing[idx] == nil {
					missing[idx] = map[string]any{}
				}
				missing[idx][f] = map[string]string{"type": want}
			case p.Type != want && !(f == FieldProbability && (p.Type == "double" || p.Type == "half_float")):
				return fmt.Errorf("indextag: index %s maps %s as %q, not %q: it is not winnow's field (rename it or use another index)", idx, f, p.Type, want)
			}
		}
	}
	if len(m) > 1 {
		e.mu.Lock()
		e.spread = true
		e.mu.Unlock()
	}
	for _, idx := range slices.Sorted(maps.Keys(missing)) {
		body, _ := json.Marshal(map[string]any{"properties": missing[idx]})
		p := "/" + url.PathEscape(idx) + "/_mapping"
		if len(m) == 1 {
			p = e.path("/_mapping") // the target's name, as for the writes
		}
		if err := e.c.do(ctx, "PUT", p, nil, body, "", nil); err != nil {
			return fmt.Errorf("indextag: adding the winnow fields to the mapping of %s: %w", idx, err)
		}
	}
	return nil
}

func (e *elastic) write(ctx context.Context, ups []update) ([]result, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, u := range ups {
		meta := map[string]any{"_index": e.where(u.ref), "_id": u.id}
		if u.routing != "" {
			meta["routing"] = u.routing
		}
		if u.ver.PrimaryTerm > 0 {
			meta["if_seq_no"], meta["if_primary_term"] = u.ver.SeqNo, u.ver.PrimaryTerm
		}
		enc.Encode(map[string]any{"update": meta})
		enc.Encode(map[string]any{"doc": u.tags})
	}
	var out struct {
		Items []map[string]struct {
			ID          string `json:"_id"`
			Status      int    `json:"status"`
			SeqNo       int64  `json:"_seq_no"`
			PrimaryTerm int64  `json:"_primary_term"`
			Error       *struct {
				Type   string `json:"type"`
				Reason string `json:"reason"`
			} `json:"error"`
		} `json:"items"`
	}
	if err := e.c.do(ctx, "POST", "/_bulk", nil, buf.Bytes(), "application/x-ndjson", &out); err != nil {
		return nil, err
	}
	if len(out.Items) != len(ups) {
		return nil, fmt.Errorf("indextag: _bulk answered %d items for %d updates", len(out.Items), len(ups))
	}
	res := make([]result, len(ups))
	for i, it := range out.Items {
		item := it["update"]
		r := result{ver: version{SeqNo: item.SeqNo, PrimaryTerm: item.PrimaryTerm}}
		typ := ""
		if item.Error != nil {
			typ = item.Error.Type
		}
		switch {
		case item.Status/100 == 2:
			r.outcome = outcomeOK
		case item.Status == 409 || typ == "version_conflict_engine_exception":
			r.outcome = outcomeConflict
		case item.Status == 404 || typ == "document_missing_exception":
			r.outcome = outcomeMissing
		case item.Status == 429 || typ == "es_rejected_execution_exception" || typ == "rejected_execution_exception":
			r.outcome = outcomeRejected
		default:
			r.outcome = cmp.Or(typ, fmt.Sprintf("HTTP %d", item.Status))
		}
		res[i] = r
	}
	return res, nil
}

func (e *elastic) flush(ctx context.Context) error {
	return e.c.do(ctx, "POST", e.path("/_refresh"), nil, nil, "", nil)
}
