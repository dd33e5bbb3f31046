package indextag

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/winnow-search/winnow/corpus"
)

// solr is a Solr core or collection.
type solr struct {
	c    *conn
	core string

	mu  sync.Mutex
	key string // the uniqueKey field; guarded by mu
	// cloud is what SolrCloud says of core, read once (cloudInfo); nil
	// until then. Guarded by mu.
	cloud *solrCloud
}

// solrCloud is what the Collections API says of a core's name in a
// SolrCloud: the collections it names (more than one for an alias of
// several) and the field that places a document on its shard (router.field,
// "" when the document's ID does). A standalone Solr has none.
type solrCloud struct {
	collections []string
	routeField  string
	// unroutable names a collection of several shards that places a
	// document on the shard it was sent to (the implicit router without
	// router.field): an update sent anywhere but that shard misses it.
	unroutable string
	// shardCores are the URLs of one active core of each shard (its
	// leader's when active) of a collection of several shards: the Luke
	// handler describes the index of the core that answers, not the
	// collection's.
	shardCores []*url.URL
}

// cloudInfo reads, once, the collections s.core names and their router
// field. A standalone Solr, or one that does not let winnow read the
// cluster's state, gives an empty solrCloud: documents are then placed by
// their IDs, as on one core.
func (s *solr) cloudInfo(ctx context.Context) (*solrCloud, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cloud != nil {
		return s.cloud, nil
	}
	var out struct {
		Cluster struct {
			Collections map[string]struct {
				Router struct {
					Name  string `json:"name"`
					Field string `json:"field"`
				} `json:"router"`
				Shards map[string]struct {
					Replicas map[string]struct {
						Core    string `json:"core"`
						BaseURL string `json:"base_url"`
						State   string `json:"state"`
						Leader  string `json:"leader"`
					} `json:"replicas"`
				} `json:"shards"`
			} `json:"collections"`
			Aliases map[string]string `json:"aliases"`
		} `json:"cluster"`
	}
	q := url.Values{"action": {"CLUSTERSTATUS"}, "collection": {s.core}, "wt": {"json"}}
	err := s.c.do(ctx, "GET", "/admin/collections", q, nil, "", &out)
	if err != nil && statusOf(err) == 0 {
		return nil, fmt.Errorf("indextag: reading the SolrCloud state of %s: %w", s.core, err)
	}
	c := &solrCloud{}
	if err == nil {
		if a, ok := out.Cluster.Aliases[s.core]; ok {
			c.collections = strings.Split(a, ",")
		} else if _, ok := out.Cluster.Collections[s.core]; ok {
			c.collections = []string{s.core}
		}
		for _, name := range c.collections {
			coll := out.Cluster.Collections[name]
			if f := coll.Router.Field; f != "" {
				c.routeField = f
			} else if coll.Router.Name == "implicit" && len(coll.Shards) > 1 {
				c.unroutable = name
			}
		}
		if len(c.collections) == 1 && len(out.Cluster.Collections[c.collections[0]].Shards) > 1 {
			for shard, sh := range out.Cluster.Collections[c.collections[0]].Shards {
				var core *url.URL
				for _, r := range sh.Replicas {
					u, err := url.Parse(r.BaseURL)
					if r.State != "active" || err != nil || r.Core == "" {
						continue
					}
					u = u.JoinPath(r.Core)
					if core == nil || r.Leader == "true" {
						core = u
					}
				}
				if core == nil {
					return nil, fmt.Errorf("indextag: shard %s of SolrCloud collection %s has no active replica", shard, c.collections[0])
				}
				c.shardCores = append(c.shardCores, core)
			}
		}
	}
	s.cloud = c
	return c, nil
}

func (s *solr) path(p string) string { return "/" + url.PathEscape(s.core) + p }

// uniqueKey returns the schema's unique key field, read once.
func (s *solr) uniqueKey(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key != "" {
		return s.key, nil
	}
	var out struct {
		UniqueKey string `json:"uniqueKey"`
	}
	if err := s.c.do(ctx, "GET", s.path("/schema/uniquekey"), nil, nil, "", &out); err != nil {
		return "", fmt.Errorf("indextag: reading the unique key of %s: %w", s.core, err)
	}
	if out.UniqueKey == "" {
		return "", fmt.Errorf("indextag: core %s has no uniqueKey: its documents cannot be updated", s.core)
	}
	s.key = out.UniqueKey
	return s.key, nil
}

func (s *solr) filter(sel selector) url.Values {
	// In a SolrCloud the leaders hold every acknowledged update; another
	// replica may lag (a TLOG or PULL replica copies the leader's index
	// every few seconds): a read from one just after a commit missed the
	// documents it had not copied, and a cursor's pages may come from
	// different replicas. A standalone Solr ignores the parameter.
	q := url.Values{"q": {"*:*"}, "wt": {"json"}, "shards.preference": {"replica.leader:true"}}
	switch {
	case sel.winners:
		q.Set("fq", FieldWinner+":true")
	case sel.since != nil:
		q.Set("fq", fmt.Sprintf("%s:{%s TO *]", sel.since.Field, solrEscape(sel.since.Value)))
	}
	return q
}

// solrEscape escapes the query syntax characters of a range bound.
func solrEscape(v string) string {
	var b strings.Builder
	for _, r := range v {
		if strings.ContainsRune(`\+-!():^[]"{}~*?|&;/ `, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// solrAnswer is the part of a select or get answer read here
// (response.numFound, response.docs, nextCursorMark), decoded as it
// streams (decode.go).
type solrAnswer struct {
	NumFound       int64
	Docs           []map[string]corpus.Field
	NextCursorMark string
	// Partial is responseHeader.partialResults: a shard did not answer
	// (shards.tolerant) or a limit (timeAllowed) cut the search.
	Partial bool
}

// partial is the error of a read whose answer holds part of the index.
func (s *solr) partial() error {
	return fmt.Errorf("indextag: Solr answered a read of %s with partial results (a shard did not answer and the handler tolerates it, or a time limit cut the search): the documents read would not be the whole index", s.core)
}

func (s *solr) count(ctx context.Context, sel selector) (int64, error) {
	q := s.filter(sel)
	q.Set("rows", "0")
	var ans solrAnswer
	err := s.c.do(ctx, "GET", s.path("/select"), q, nil, "", &ans)
	if err == nil && ans.Partial {
		err = s.partial()
	}
	return ans.NumFound, err
}

// fl is the field list of a read: the fields, the unique key, the
// router field (route, "" for none) and _version_.
func fl(key, route string, fields []string) string {
	if fields == nil {
		return "*,_version_"
	}
	head := []string{key, "_version_"}
	if route != "" {
		head = append(head, route)
	}
	return strings.Join(append(head, fields...), ",")
}

// solrHit turns a returned document into a hit: its unique key, its
// _version_, the value of the collection's router field (route) as its
// routing, and its fields (a multi-valued field holding one value reads
// as that value: decode.go unwraps it).
func solrHit(key, route string, doc map[string]corpus.Field) (hit, error) {
	h := hit{source: doc}
	id, ok := solrValue(doc, key)
	if !ok {
		return hit{}, fmt.Errorf("indextag: Solr document without its unique key %s", key)
	}
	h.id = id
	if route != "" {
		if h.routing, ok = solrValue(doc, route); !ok {
			return hit{}, fmt.Errorf("indextag: Solr document %s without a value of the collection's router field %s", id, route)
		}
	}
	var v json.Number
	if err := json.Unmarshal(doc["_version_"].Raw, &v); err == nil {
		h.ver.Version, _ = v.Int64()
	}
	return h, nil
}

// solrValue is the single value of field name of a returned document
// as text, false when the field is absent or null.
func solrValue(doc map[string]corpus.Field, name string) (string, bool) {
	f, ok := doc[name]
	switch {
	case !ok || string(f.Raw) == "null":
		return "", false
	case f.Raw == nil:
		return f.Str, true
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(f.Raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil || v == nil {
		return "", false
	}
	return fmt.Sprint(v), true
}

// scan reads with cursorMark, sorted on the unique key; Solr's cursor is
// one stream, so slices is not used.
func (s *solr) scan(ctx context.Context, sel selector, fields []string, _ int, fn func(hit) error) error {
	key, err := s.uniqueKey(ctx)
	if err != nil {
		return err
	}
	cloud, err := s.cloudInfo(ctx)
	if err != nil {
		return err
	}
	q := s.filter(sel)
	q.Set("rows", fmt.Sprint(pageSize))
	q.Set("sort", key+" asc")
	q.Set("fl", fl(key, cloud.routeField, fields))
	mark := "*"
	for {
		q.Set("cursorMark", mark)
		var ans solrAnswer
		if err := s.c.do(ctx, "GET", s.path("/select"), q, nil, "", &ans); err != nil {
			return err
		}
		if ans.Partial {
			return s.partial()
		}
		for _, doc := range ans.Docs {
			h, err := solrHit(key, cloud.routeField, doc)
			if err != nil {
				return err
			}
			if err := fn(h); err != nil {
				return err
			}
		}
		if ans.NextCursorMark == "" || ans.NextCursorMark == mark {
			return nil
		}
		mark = ans.NextCursorMark
	}
}

func (s *solr) get(ctx context.Context, refs []ref, fields []string) ([]hit, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	key, err := s.uniqueKey(ctx)
	if err != nil {
		return nil, err
	}
	cloud, err := s.cloudInfo(ctx)
	if err != nil {
		return nil, err
	}
	// A collection routed by a field finds a document only on the shard
	// its _route_ (the field's value) names: the IDs are asked for by
	// routing, each group with its own.
	var routes []string
	byRoute := map[string][]string{}
	for _, r := range refs {
		if _, ok := byRoute[r.routing]; !ok {
			routes = append(routes, r.routing)
		}
		byRoute[r.routing] = append(byRoute[r.routing], r.id)
	}
	var hs []hit
	for _, route := range routes {
		ids := byRoute[route]
		for start := 0; start < len(ids); start += pageSize {
			// One id parameter a document (ids splits on commas, which IDs
			// may hold), sent as a form: a hundred URLs as IDs overflow the
			// 8 KB request line Jetty takes (414).
			q := url.Values{"id": ids[start:min(start+pageSize, len(ids))], "fl": {fl(key, cloud.routeField, fields)}, "wt": {"json"}}
			if route != "" {
				q.Set("_route_", route)
			}
			var ans solrAnswer
			if err := s.c.do(ctx, "POST", s.path("/get"), nil, []byte(q.Encode()), "application/x-www-form-urlencoded", &ans); err != nil {
				return nil, err
			}
			for _, doc := range ans.Docs {
				h, err := solrHit(key, cloud.routeField, doc)
				if err != nil {
					return nil, err
				}
				hs = append(hs, h)
			}
		}
	}
	return hs, nil
}

// solrTypes are the schema types of the tag fields, and the types an
// existing field may have.
var solrTypes = map[string][]string{
	FieldGroup:       {"string"},
	FieldWinner:      {"boolean"},
	FieldRemovable:   {"boolean"},
	FieldProbability: {"pfloat", "pdouble", "float", "double"},
}

func (s *solr) prepare(ctx context.Context) error {
	cloud, err := s.cloudInfo(ctx)
	if err != nil {
		return err
	}
	if len(cloud.collections) > 1 {
		// Solr sends every update through an alias to its first
		// collection: the documents of the others would be taken for
		// deleted (a conditional update of a document the collection
		// does not hold) and never tagged.
		return fmt.Errorf("indextag: %s is a SolrCloud alias of %d collections (%s), and Solr sends an update through an alias to its first collection only: tag each collection by its own name (a dry run reads the alias); winnow does not write to it", s.core, len(cloud.collections), strings.Join(cloud.collections, ", "))
	}
	if cloud.unroutable != "" {
		// Solr places an update of such a collection on a shard of the
		// core that receives it: the documents of the other shards
		// were counted deleted and left untagged.
		return fmt.Errorf("indextag: SolrCloud collection %s has several shards and the implicit router without router.field: Solr puts an update on the shard of the node that receives it, not the shard that holds the document; winnow does not write to it", cloud.unroutable)
	}
	flags, err := s.fieldFlags(ctx, cloud)
	if err != nil {
		return fmt.Errorf("indextag: reading the fields of %s: %w", s.core, err)
	}
	if lost, err := s.lostFields(ctx, flags); err != nil {
		return fmt.Errorf("indextag: reading the fields of %s: %w", s.core, err)
	} else if len(lost) > 0 {
		return fmt.Errorf("indextag: core %s has indexed fields neither stored nor with docValues (%s): an atomic update rebuilds a document from its stored fields and docValues, so writing the tags would drop those fields from the index; winnow does not write to it", s.core, strings.Join(lost, ", "))
	}
	// An atomic update of a parent indexes its block again; without
	// _nest_path_ Solr cannot rebuild the children, and drops them.
	_, nested := flags["_root_"]
	if _, paths := flags["_nest_path_"]; nested && !paths {
		q := url.Values{"q": {"*:*"}, "fq": {"-{!join from=_root_ to=id}*:*"}, "rows": {"0"}, "wt": {"json"}}
		var ans solrAnswer
		if err := s.c.do(ctx, "GET", s.path("/select"), q, nil, "", &ans); err != nil {
			return fmt.Errorf("indextag: looking for nested documents in %s: %w", s.core, err)
		}
		if ans.NumFound > 0 {
			return fmt.Errorf("indextag: core %s holds %d nested (child) documents and its schema has no _nest_path_: an atomic update of a parent would drop its children; winnow does not write to it", s.core, ans.NumFound)
		}
	}
	var add []map[string]any
	for _, f := range tagFields {
		var out struct {
			Field struct {
				Type        string `json:"type"`
				MultiValued bool   `json:"multiValued"`
			} `json:"field"`
		}
		err := s.c.do(ctx, "GET", s.path("/schema/fields/"+f), nil, nil, "", &out)
		switch {
		case statusOf(err) == 404:
			add = append(add, map[string]any{"name": f, "type": solrTypes[f][0], "indexed": true, "stored": true, "docValues": true, "multiValued": false})
			continue
		case err != nil:
			return fmt.Errorf("indextag: reading the schema of %s: %w", s.core, err)
		}
		want := solrTypes[f]
		ok := false
		for _, t := range want {
			ok = ok || out.Field.Type == t
		}
		if !ok || out.Field.MultiValued {
			return fmt.Errorf("indextag: core %s defines %s as %q (multiValued %v), not a single %q: it is not winnow's field", s.core, f, out.Field.Type, out.Field.MultiValued, want[0])
		}
	}
	if len(add) == 0 {
		return nil
	}
	body, _ := json.Marshal(map[string]any{"add-field": add})
	if err := s.c.do(ctx, "POST", s.path("/schema"), nil, body, "", nil); err != nil {
		return fmt.Errorf("indextag: adding the winnow fields to the schema of %s (a managed schema is needed): %w", s.core, err)
	}
	return nil
}

// solrNestFields are the fields Solr itself sets on every document of a
// schema that has them (Solr's _default configset has _root_, indexed
// and neither stored nor with docValues), and sets again on an atomic
// update.
var solrNestFields = map[string]bool{"_root_": true, "_nest_path_": true, "_nest_parent_": true}

// fieldFlags returns the fields the core's index holds, dynamic ones
// included, with their schema's flags ("ITS-..."; I indexed, S stored,
// D docValues), as the Luke handler lists them.
//
// Luke describes the index of the core that answers: in a SolrCloud
// collection of several shards each shard's core is asked (at its node's
// address, as the cluster state gives it), and the fields of all are
// returned. A field only the documents of one shard had was missed when
// another shard answered, and an update dropped its terms.
func (s *solr) fieldFlags(ctx context.Context, cloud *solrCloud) (map[string]string, error) {
	q := url.Values{"numTerms": {"0"}, "wt": {"json"}}
	flags := map[string]string{}
	read := func(c *conn, path string) error {
		var luke struct {
			Fields map[string]struct {
				Schema string `json:"schema"`
			} `json:"fields"`
		}
		if err := c.do(ctx, "GET", path, q, nil, "", &luke); err != nil {
			return err
		}
		for name, f := range luke.Fields {
			flags[name] = f.Schema
		}
		return nil
	}
	if len(cloud.shardCores) == 0 {
		return flags, read(s.c, s.path("/admin/luke"))
	}
	q.Set("distrib", "false")
	for _, core := range cloud.shardCores {
		if err := read(s.c.at(core), "/admin/luke"); err != nil {
			return nil, fmt.Errorf("the shard core at %s: %w", core.Redacted(), err)
		}
	}
	return flags, nil
}

// lostFields returns the fields of the core's documents (flags, from
// fieldFlags) that an atomic update would drop: indexed, neither stored
// nor with docValues, and not a copyField destination (Solr copies those
// again).
func (s *solr) lostFields(ctx context.Context, flags map[string]string) ([]string, error) {
	var copies struct {
		CopyFields []struct {
			Dest string `json:"dest"`
		} `json:"copyFields"`
	}
	if err := s.c.do(ctx, "GET", s.path("/schema/copyfields"), url.Values{"wt": {"json"}}, nil, "", &copies); err != nil {
		return nil, err
	}
	var lost []string
	for name, f := range flags {
		if len(f) < 4 || f[0] != 'I' || f[2] == 'S' || f[3] == 'D' {
			continue
		}
		if solrNestFields[name] {
			continue
		}
		copied := false
		for _, c := range copies.CopyFields {
			ok, _ := path.Match(c.Dest, name) // a dynamic destination: *_str
			copied = copied || ok
		}
		if !copied {
			lost = append(lost, name)
		}
	}
	slices.Sort(lost)
	return lost, nil
}

// solrDoc is the atomic update of one document, conditioned on its
// _version_.
func solrDoc(key, route string, u update) map[string]any {
	d := map[string]any{key: u.id}
	if route != "" {
		// The router field's value as it is (not a "set"): SolrCloud
		// places the update on the shard it names, and refuses one
		// without it ("Unable to identify shard").
		d[route] = u.routing
	}
	if u.ver.Version != 0 {
		d["_version_"] = u.ver.Version
	}
	d[FieldGroup] = map[string]any{"set": u.tags.Group}
	d[FieldWinner] = map[string]any{"set": u.tags.Winner}
	d[FieldRemovable] = map[string]any{"set": u.tags.Removable}
	d[FieldProbability] = map[string]any{"set": u.tags.Probability}
	return d
}

// write sends the updates as one request. Solr stops a request at its
// first document it refuses, with one status for the whole: a version
// conflict (409), or a document it cannot take (400: one indexed before
// a field became required, say). Then the updates are sent one by one so
// that each gets its own outcome and the others are written (those
// applied before the refused one then conflict with themselves and are
// re-read).
func (s *solr) write(ctx context.Context, ups []update) ([]result, error) {
	key, err := s.uniqueKey(ctx)
	if err != nil {
		return nil, err
	}
	cloud, err := s.cloudInfo(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.send(ctx, key, ups)
	st := statusOf(err)
	switch {
	case solrForwardFailed(err, cloud):
		// The leader the updates were forwarded to is gone (lost
		// mid-run): SolrCloud elects another. The updates are
		// conditioned on their _version_, so sending them again cannot
		// write one twice: one already applied conflicts and is re-read.
		res = make([]result, len(ups))
		for i := range res {
			res[i] = result{outcome: outcomeRejected}
		}
		return res, nil
	case len(ups) == 1 && (st == 409 || st == 404 || st == 400):
		return []result{solrRefused(err)}, nil
	case st != 409 && st != 400:
		return res, err
	}
	res = make([]result, len(ups))
	for i, u := range ups {
		r, err := s.send(ctx, key, []update{u})
		switch st := statusOf(err); {
		case err == nil:
			res[i] = r[0]
		case st != 0:
			res[i] = solrRefused(err)
		default:
			return nil, err
		}
	}
	return res, nil
}

// solrForwardFailed reports a SolrCloud's 500 to a request of updates:
// its answer when it could not forward them to their shard's leader or
// replicas ("Async exceptions during distributed update:
// java.net.ConnectException: Connection refused", a node lost), which
// may pass once the cluster has elected a new leader. (The reason comes
// after the list of the request's documents, past what an error keeps
// of the body.)
func solrForwardFailed(err error, cloud *solrCloud) bool {
	return statusOf(err) == 500 && len(cloud.collections) > 0
}

// solrRefused is the outcome of one update Solr refused: a conflict
// (changed or deleted since read: re-read it), or the status and Solr's
// reason without the document's ID, so that the report counts documents
// by reason.
func solrRefused(err error) result {
	var se *statusError
	if !errors.As(err, &se) {
		return result{outcome: err.Error()}
	}
	if se.status == 409 || se.status == 404 {
		return result{outcome: outcomeConflict}
	}
	var body struct {
		Error struct {
			Msg string `json:"msg"`
		} `json:"error"`
	}
	reason := fmt.Sprintf("HTTP %d", se.status)
	if json.Unmarshal([]byte(se.body), &body) == nil && body.Error.Msg != "" {
		msg := body.Error.Msg
		if strings.HasPrefix(msg, "[doc=") {
			if _, rest, ok := strings.Cut(msg, "] "); ok {
				msg = rest
			}
		}
		reason += ": " + msg
	}
	return result{outcome: reason}
}

func (s *solr) send(ctx context.Context, key string, ups []update) ([]result, error) {
	cloud, err := s.cloudInfo(ctx)
	if err != nil {
		return nil, err
	}
	docs := make([]map[string]any, len(ups))
	for i, u := range ups {
		docs[i] = solrDoc(key, cloud.routeField, u)
	}
	body, _ := json.Marshal(docs)
	var out struct {
		Adds []any `json:"adds"`
	}
	if err := s.c.do(ctx, "POST", s.path("/update"), url.Values{"versions": {"true"}, "wt": {"json"}}, body, "", &out); err != nil {
		return nil, err
	}
	vers := map[string]int64{}
	for i := 0; i+1 < len(out.Adds); i += 2 {
		if n, ok := out.Adds[i+1].(json.Number); ok {
			vers[fmt.Sprint(out.Adds[i])], _ = n.Int64()
		}
	}
	res := make([]result, len(ups))
	for i, u := range ups {
		res[i] = result{outcome: outcomeOK, ver: version{Version: vers[u.id]}}
	}
	return res, nil
}

func (s *solr) flush(ctx context.Context) error {
	return s.c.do(ctx, "POST", s.path("/update"), url.Values{"commit": {"true"}, "wt": {"json"}}, []byte("[]"), "", nil)
}
