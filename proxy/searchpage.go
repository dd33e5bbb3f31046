package proxy

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/proxy/engine"
	"github.com/winnow-search/winnow/proxy/ui"
	"github.com/winnow-search/winnow/resultlist"
	"github.com/winnow-search/winnow/similarity"
)

// groups reads the page's groups from the marks, in rank order: a
// result that is its own winner, or is unmarked, opens a group; one marked
// with another winner joins that winner's group, among its similar
// results, or its removed ones when mode drops it (remove mode: what the
// content-equivalence decision accepted goes, listed with its verdict out
// of the results; a near-duplicate it did not accept stays, explained).
// The clusters are read only for the scores of the verdicts the marks
// explain: in remove mode the content-equivalence verdict that removed or
// kept a duplicate, else the near-duplicate one.
func (o *metaOutcome) groups(mode engine.Mode) []ui.Group {
	marks := o.ref.marks
	verdicts := map[int]similarity.Verdict{}
	for _, c := range o.ref.clusters {
		for _, m := range c.Members[1:] {
			verdicts[m.Index] = m.Verdict
		}
	}
	for i, v := range o.ref.removeVerdicts {
		verdicts[i] = v
	}
	item := func(i int) ui.Item {
		r := o.results[i]
		return ui.Item{URL: r.URL, Title: plainText(r.Title), Snippet: plainText(r.Snippet), SnippetParts: highlightParts(r.Snippet),
			Engines: r.engines, Rank: i + 1, Unrefined: marks[i].Winner < 0}
	}
	var gs []ui.Group
	at := map[int]int{} // a winner's index -> its group in gs
	for i, mk := range marks {
		if mk.Winner < 0 || mk.Winner == i {
			id := cmp.Or(mk.Cluster, "r"+strconv.Itoa(i))
			at[i] = len(gs)
			gs = append(gs, ui.Group{ID: id, Winner: item(i)})
		}
	}
	// A winner may rank below its members (a declared canonical URL):
	// the groups are all open before any member joins.
	for i, mk := range marks {
		if mk.Winner < 0 || mk.Winner == i {
			continue
		}
		it := item(i)
		it.Relation = mk.Relation
		if it.Relation == "" || it.Relation == "none" {
			it.Relation = "duplicate"
		}
		it.Explain = mk.Explain
		it.Kept = mk.Keep
		if v, ok := verdicts[i]; ok {
			it.Reason = plainReason(v.Scores)
			it.Scores = scoresOf(v)
		}
		g := &gs[at[mk.Winner]]
		if resultlist.Place(mode, i, resultlist.Facts{Winner: mk.Winner, Keep: mk.Keep}) == resultlist.Dropped {
			g.Removed = append(g.Removed, it)
		} else {
			g.Similar = append(g.Similar, it)
		}
	}
	return gs
}

// plainText turns an engine's title or snippet, which may carry
// highlighting markup such as <em> ([engine.HighlightTag]), into plain
// text for the page (which escapes it): the highlighting tags go,
// entities are decoded, and any other "<" is the text's own
// ("std::vector<int>", "a < b", an indexed title "<script>...").
func plainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		if n, _, ok := engine.HighlightTag(s[i:]); ok {
			s = s[i+n:]
			continue
		}
		b.WriteByte('<')
		s = s[i+1:]
	}
	return html.UnescapeString(b.String())
}

// scoresOf lists the tests of a verdict. The tests that decided (the
// first candidate test that passed, and the verification) show the value
// and threshold exactly as the verdict's explanation writes them
// (similarity.TestResult's String), so the summary line and the table
// agree; the other candidate tests show their value only.
func scoresOf(v similarity.Verdict) []ui.Score {
	var out []ui.Score
	add := func(t similarity.TestResult, deciding bool) {
		if t.Method == similarity.MethodNone || math.IsNaN(t.Value) {
			return
		}
		if t.Method == similarity.MethodModel {
			// "P(content-equivalent) 0.42 < 0.90", or where the
			// decision stopped aligning the pair its bound, "P(...)
			// <= 0.55 < 0.90 (LCS exited early)": the table names the
			// decision and shows the bound as one.
			name, rest, _ := strings.Cut(t.String(), " ")
			rest, cut := strings.CutSuffix(rest, " (LCS exited early)")
			f := strings.Fields(rest)
			if len(f) < 3 {
				return
			}
			sc := ui.Score{Name: name, Value: strings.Join(f[:len(f)-2], " ")}
			if cut {
				sc.Name += " (LCS exited early)"
			}
			if deciding {
				sc.Threshold = f[len(f)-2] + " " + f[len(f)-1]
			}
			out = append(out, sc)
			return
		}
		f := strings.Fields(t.String()) // "... value op threshold"
		if len(f) < 3 {
			return
		}
		sc := ui.Score{Name: t.Method.String(), Value: f[len(f)-3]}
		if deciding {
			sc.Threshold = f[len(f)-2] + " " + f[len(f)-1]
		}
		out = append(out, sc)
	}
	first := true
	for _, c := range v.Candidates {
		add(c, c.Pass && first)
		first = first && !c.Pass
	}
	n := len(out)
	if v.Step == similarity.StepAccept || v.Step == similarity.StepVerify && !v.NoSeq {
		add(v.Verify, true)
	}
	if len(out) > n && v.Step == similarity.StepAccept {
		out[n].Name += " (accept)"
	}
	// An alignment that stopped early leaves divergence at its worst
	// value, 1, as a placeholder: not the pair's (winnow compare aligns
	// to the end and gives it), so it is not shown as if measured.
	if d := v.Scores.Divergence; !math.IsNaN(d) && !v.Scores.LCSCut {
		out = append(out, ui.Score{Name: "divergence", Value: strconv.FormatFloat(d, 'f', 2, 64)})
	}
	return out
}

// plainReason says in one sentence, for a reader who does not know the
// scores, what makes two results alike: the share of words in the same
// order and how the rest is spread when the pair was aligned, else the
// share of shared phrases, else how close their word fingerprints are.
func plainReason(sc similarity.Scores) string {
	pct := func(f float64) int { return int(math.Floor(f*100 + 1e-9)) }
	switch {
	case sc.HasLCS && !sc.LCSCut && !math.IsNaN(sc.LCS):
		r := fmt.Sprintf("%d %% of the words appear in the same order in both pages", pct(sc.LCS))
		switch d := sc.Divergence; {
		case math.IsNaN(d) || sc.LCS >= 0.995:
		case d <= 0.2:
			r += fmt.Sprintf("; the differences are spread thin (at most %d %% of any passage)", max(pct(d), 1))
		default:
			r += fmt.Sprintf("; the differences gather in one passage (%d %% of it differs)", pct(d))
		}
		return r
	case !math.IsNaN(sc.Jaccard):
		return fmt.Sprintf("about %d %% of their five-word phrases are shared", pct(sc.Jaccard))
	default:
		return fmt.Sprintf("their word fingerprints (simhash) differ in %d of 64 bits", sc.SimhashDistance)
	}
}

// searchPage answers the built-in search page (HTML) and its JSON form
// (/_winnow/search.json or format=json): a metasearch over every engine,
// grouped. Query parameters: q, page (from 1), size (default 10, at most
// 50), mode, method, threshold.
func (s *Server) searchPage(ctx *fasthttp.RequestCtx) {
	args := ctx.QueryArgs()
	q := strings.TrimSpace(string(args.Peek("q")))
	asJSON := string(ctx.Path()) == "/_winnow/search.json" || string(args.Peek("format")) == "json"
	pageNo := max(atoiOr(args.Peek("page"), 1), 1)
	size := min(max(atoiOr(args.Peek("size"), 10), 1), 50)
	p, err := s.params(ctx)
	if m := string(args.Peek("mode")); m != "" && err == nil {
		// The form's own parameter: the page's mode selector.
		p.mode, err = engine.ParseMode(m)
	}
	if err != nil {
		ctx.Error("winnow: "+err.Error(), fasthttp.StatusBadRequest)
		return
	}
	view := &ui.Page{Query: q, Mode: p.mode.String()}
	if q != "" {
		reqCtx, cancel := context.WithTimeout(context.Background(), s.maxEngineTimeout()+s.o.Budget)
		defer cancel()
		// A page's list is the fused list of the engines' first
		// pageNo·size·Factor results, asked deeper (tiers doubled)
		// while an engine may have more and either duplicates leave
		// too few groups to fill the page and show one after it, or
		// the list is shorter than the top K that refinement groups:
		// the fusion keeps a deeper list's start, and grouping reads
		// only the top K, so once the list holds them every page
		// groups them alike (a shorter list grouped otherwise as it
		// grew, and pages repeated and skipped results).
		step := size * s.o.Factor
		depth := pageNo * step
		out := s.metasearch(reqCtx, q, depth, step, p)
		for (len(out.groups(p.render())) <= pageNo*size || len(out.results) < s.o.TopK) && out.more && depth*2 <= maxMetaDepth && reqCtx.Err() == nil {
			depth *= 2
			deeper := s.metasearch(reqCtx, q, depth, step, p)
			if deeper.failed() > out.failed() {
				break // an engine missed its deadline this time: keep what it gave
			}
			out = deeper
		}
		// The links to other pages keep the request's own settings
		// (winnow_method, winnow_threshold, ..., format): a page
		// grouped under other settings repeats and skips results.
		keep := url.Values{}
		for k, v := range args.All() {
			if key := string(k); strings.HasPrefix(key, "winnow_") || key == "format" {
				keep.Add(key, string(v))
			}
		}
		fillPage(view, out, p, pageNo, size, keep)
	}
	if s.fb != nil {
		view.FeedbackURL = FeedbackPath
		thanks := map[string]string{"not_duplicate": "Thank you: recorded as not a duplicate.", "same_page": "Thank you: recorded as the same page."}
		if t := thanks[string(args.Peek("feedback"))]; t != "" {
			view.Notice = strings.TrimSpace(t + " " + view.Notice)
		}
	}
	if asJSON {
		ctx.SetContentType("application/json; charset=utf-8")
		enc := json.NewEncoder(ctx)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(jsonPage(view)); err != nil {
			s.log.Warn("write_failed", "err", err)
		}
		return
	}
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.Response.Header.Set("Content-Security-Policy", ui.ContentSecurityPolicy)
	if err := ui.Render(ctx, view); err != nil {
		s.log.Error("render_page_failed", "err", err)
	}
}

// fillPage fills view with page pageNo (of size groups) of a metasearch.
// Ranks are the user's: a winner's is its place in the list the user
// pages through, and similar results, outside that list, have none. The
// links to the previous and next page carry keep besides the query, page,
// mode and size.
func fillPage(view *ui.Page, out *metaOutcome, p params, pageNo, size int, keep url.Values) {
	gs := out.groups(p.render())
	total := len(gs)
	from := (pageNo - 1) * size
	if from < len(gs) {
		gs = gs[from:min(from+size, len(gs))]
	} else {
		gs = nil
	}
	for k := range gs {
		gs[k].Winner.Rank = from + k + 1
		for j := range gs[k].Similar {
			gs[k].Similar[j].Rank = 0
		}
		for j := range gs[k].Removed {
			gs[k].Removed[j].Rank = 0
		}
		view.Removed += len(gs[k].Removed)
	}
	view.Groups = gs
	view.Took = out.took
	view.Refined = out.ref.cached + out.ref.text + out.ref.fetched
	for _, g := range gs {
		view.Total += 1 + len(g.Similar)
	}
	for _, a := range out.answers {
		st := ui.EngineStatus{Name: a.name, Results: len(a.results), Took: a.took, Partial: a.partial}
		if a.err != nil {
			st.Err = a.err.Error()
		}
		view.Engines = append(view.Engines, st)
	}
	view.Notice = notice(out)
	link := func(pg int) string {
		v := url.Values{"q": {view.Query}, "page": {strconv.Itoa(pg)}, "mode": {p.mode.String()}}
		for k, vs := range keep {
			v[k] = vs
		}
		if size != 10 {
			v.Set("size", strconv.Itoa(size))
		}
		return "?" + v.Encode()
	}
	if pageNo > 1 {
		view.PrevURL = link(min(pageNo-1, max((total+size-1)/size, 1)))
	}
	if total > pageNo*size {
		view.NextURL = link(pageNo + 1)
	}
}

// maxMetaDepth bounds how deep the search page asks the engines when
// duplicates leave a page short: Solr and Elasticsearch slow down with
// deep pages, and Elasticsearch refuses past 10,000.
const maxMetaDepth = 1000

func (s *Server) maxEngineTimeout() time.Duration {
	var d time.Duration
	for _, b := range s.engines {
		d = max(d, b.Timeout)
	}
	return d
}

func atoiOr(b []byte, def int) int {
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return def
	}
	return n
}

// jsonPage is winnow's own JSON answer of the search page.
func jsonPage(p *ui.Page) map[string]any {
	type score struct {
		Name      string `json:"name"`
		Value     string `json:"value"`
		Threshold string `json:"threshold,omitempty"`
	}
	type item struct {
		URL       string   `json:"url"`
		Title     string   `json:"title"`
		Snippet   string   `json:"snippet,omitempty"`
		Engines   []string `json:"engines,omitempty"`
		Rank      int      `json:"rank"`
		Relation  string   `json:"relation,omitempty"`
		Explain   string   `json:"explain,omitempty"`
		Scores    []score  `json:"scores,omitempty"`
		Unrefined bool     `json:"unrefined,omitempty"`
		Kept      bool     `json:"kept,omitempty"`
	}
	conv := func(it ui.Item) item {
		var sc []score
		for _, s := range it.Scores {
			sc = append(sc, score(s))
		}
		return item{it.URL, it.Title, it.Snippet, it.Engines, it.Rank, it.Relation, it.Explain, sc, it.Unrefined, it.Kept}
	}
	var results []map[string]any
	for _, g := range p.Groups {
		var dups, removed []item
		for _, it := range g.Similar {
			dups = append(dups, conv(it))
		}
		for _, it := range g.Removed {
			removed = append(removed, conv(it))
		}
		gm := map[string]any{"cluster": g.ID, "result": conv(g.Winner), "duplicates": dups}
		if removed != nil {
			gm["removed"] = removed
		}
		results = append(results, gm)
	}
	var engines []map[string]any
	for _, e := range p.Engines {
		m := map[string]any{"name": e.Name, "results": e.Results, "took_ms": e.Took.Milliseconds()}
		if e.Err != "" {
			m["error"] = e.Err
		}
		if e.Partial != "" {
			m["partial"] = e.Partial
		}
		engines = append(engines, m)
	}
	out := map[string]any{"query": p.Query, "mode": p.Mode, "took_ms": p.Took.Milliseconds(),
		"refined": p.Refined, "notice": p.Notice, "engines": engines, "groups": results,
		"prev": p.PrevURL, "next": p.NextURL}
	if p.Mode == "remove" {
		out["removed"] = p.Removed
	}
	return out
}

// notice tells why results are shown unmarked: pages the SSRF guard
// refused (an intranet engine's, until serve.fetch.allow lists their
// network), results past the top K (serve.top_k), which no time would
// have checked, results without a URL, then pages not signed in time.
func notice(out *metaOutcome) string {
	n, internal, beyond := min(out.ref.unrefined, len(out.results)), out.ref.internal, out.ref.beyond
	var parts []string
	if internal > 0 {
		parts = append(parts, fmt.Sprintf("%d results not refined: their addresses are internal (allow their network in serve.fetch.allow)", internal))
	}
	if beyond > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d results rank past the first %d, the results checked for duplicates (serve.top_k), and are shown unmarked", beyond, len(out.results), len(out.results)-beyond))
	}
	noURL := 0 // among the results checked: no page to fetch
	for _, r := range out.results[:len(out.results)-beyond] {
		if r.URL == "" {
			noURL++
		}
	}
	if noURL > 0 {
		parts = append(parts, fmt.Sprintf("%d results have no URL (is the engine's url_field right?) and are shown unmarked", noURL))
	}
	if late := n - internal - beyond - noURL; late > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d results could not be checked in time and are shown unmarked", late, len(out.results)))
	}
	return strings.Join(parts, "; ")
}

// highlightParts splits an engine's snippet into plain text and the
// words its highlighting marks ([engine.HighlightTag]), entities
// decoded; any other "<" is text. nil when the snippet has no
// highlighting, so the page shows Snippet. The page escapes every part.
func highlightParts(s string) []ui.Part {
	if !strings.Contains(s, "<") {
		return nil
	}
	var parts []ui.Part
	hit, marked := false, false
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			parts = append(parts, ui.Part{Text: html.UnescapeString(text.String()), Hit: hit})
			marked = marked || hit
			text.Reset()
		}
	}
	for s != "" {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			text.WriteString(s)
			break
		}
		text.WriteString(s[:i])
		n, open, ok := engine.HighlightTag(s[i:])
		if !ok {
			text.WriteByte('<')
			s = s[i+1:]
			continue
		}
		if open != hit {
			flush()
			hit = open
		}
		s = s[i+n:]
	}
	flush()
	if !marked {
		return nil
	}
	return parts
}
