package ui

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Page is everything the search page shows for one query. The zero Page
// renders the empty search form.
type Page struct {
	// Query is the user's query, shown in the title and the search box;
	// "" shows the form alone.
	Query string
	// Mode is "group" (the default when ""), "remove" or "annotate".
	Mode string
	// Engines reports each engine queried, in the order shown.
	Engines []EngineStatus
	// Took is the time the whole search took.
	Took time.Duration
	// Groups holds the results in rank order, one group per cluster.
	Groups []Group
	// Refined counts the results that were signed and compared; Total
	// counts the results shown, similar ones included.
	Refined, Total int
	// Removed counts, in Mode "remove", the duplicates removed (the
	// groups' Removed); the page says it in that mode only.
	Removed int
	// PrevURL and NextURL link to the previous and next page of results;
	// "" means there is none. Relative URLs are allowed.
	PrevURL, NextURL string
	// Notice is a message shown above the results, e.g. "3 results could
	// not be fetched in time and are shown unmarked"; "" shows none.
	Notice string
	// FeedbackURL, when not "", is where the page posts a reader's
	// verdict (fields a, b, verdict, q, mode): a "not a duplicate"
	// button on every grouped or removed result (a: its winner, b: it)
	// and a "same page as above" button on every winner after the first
	// (a: the winner above, b: it). "" shows no buttons.
	FeedbackURL string
}

// EngineStatus is what one engine answered.
type EngineStatus struct {
	// Name is the engine's name from the configuration.
	Name string
	// Results counts the results the engine returned.
	Results int
	// Took is the time the engine took to answer.
	Took time.Duration
	// Err describes why the engine failed; "" means it answered.
	Err string
	// Partial says why an answer holds only part of the engine's
	// results ("1 of 2 shards failed: ...", a time limit that cut the
	// search); "" for a whole answer.
	Partial string
}

// Group is a cluster of near-duplicate results: the winner that stands for
// it and the results similar to the winner.
type Group struct {
	// ID is the cluster ID.
	ID string
	// Winner is the result shown for the cluster.
	Winner Item
	// Similar holds the winner's near-duplicates, best first; nil shows the
	// winner alone.
	Similar []Item
	// Removed holds, in remove mode, the duplicates removed as
	// content-equivalent to the winner: not results, but listed with
	// their explanation under "why removed?"; nil lists none.
	Removed []Item
}

// Item is one search result.
type Item struct {
	// URL is the result's address; only absolute http and https URLs are
	// linked.
	URL string
	// Title and Snippet are the engine's title and snippet, as plain text.
	Title, Snippet string
	// SnippetParts, when not nil, is the snippet with the engine's
	// highlighting: the page shows it instead of Snippet, the parts
	// with Hit set marked.
	SnippetParts []Part
	// Engines names the engines that returned the result.
	Engines []string
	// Rank is the result's fused rank, from 1; 0 shows no rank.
	Rank int
	// Relation says how a similar item relates to its winner: "duplicate",
	// "contains" (it contains the winner) or "contained" (the winner
	// contains it). Unused for a winner.
	Relation string
	// Explain is a one-line explanation of the decision, e.g. "duplicate:
	// simhash distance 3 <= 16 (candidate), LCS ratio 0.91 >= 0.77
	// (verified)". Unused for a winner.
	Explain string
	// Reason is one plain sentence that says why the item was grouped
	// with its winner, before the expert's scores, e.g. "92 % of the
	// words appear in the same order in both pages; the differences are
	// spread thin (at most 9 % of any passage)". "" shows none.
	Reason string
	// Scores lists the scores behind the decision. Unused for a winner.
	Scores []Score
	// Unrefined marks a result that could not be fetched or signed in
	// time; it is shown with a "not checked" badge.
	Unrefined bool
	// Kept marks, in remove mode, a near-duplicate that the
	// content-equivalence decision did not accept: it is shown, not
	// removed, and Explain says why.
	Kept bool
}

// Part is a run of a snippet's text; Hit marks the words the engine
// highlighted as matching the query.
type Part struct {
	Text string
	Hit  bool
}

// Score is one measured score and the threshold it was held against.
type Score struct {
	// Name names the score, e.g. "simhash distance".
	Name string
	// Value is the score, formatted.
	Value string
	// Threshold is the threshold with its comparison, e.g. "<= 16"; ""
	// means the score was informative only.
	Threshold string
}

// ContentSecurityPolicy is a Content-Security-Policy header value under
// which the rendered page works: no script, no external resources, the
// embedded style sheet, and forms posted to the same origin. [Handler] sets
// it; the proxy should too.
const ContentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

//go:embed page.html
var pageHTML string

//go:embed style.css
var styleCSS string

// page is the search page, parsed once.
var page = parsePage()

// parsePage parses the page template and adds the style sheet as template
// text, not data, so that it is escaped once rather than on every render.
// A parse error is a programmer error that every test catches, hence
// template.Must.
func parsePage() *template.Template {
	t := template.Must(template.New("page").Funcs(template.FuncMap{
		"href":          itemHref,
		"navHref":       navHref,
		"plural":        plural,
		"dur":           formatDuration,
		"join":          strings.Join,
		"mode":          normalMode,
		"relationTitle": relationTitle,
		"breakURL":      breakURL,
		"above":         above,
		"feedback":      feedbackForm,
	}).Parse(pageHTML))
	template.Must(t.New("style").Parse(styleCSS))
	return t
}

// modes lists the modes the form offers, the default first.
var modes = []string{"group", "remove", "annotate"}

// view is what the template executes: the Page and values derived from it.
type view struct {
	*Page
	Modes []string
}

// Render writes the complete HTML document for p to w. A nil p renders the
// empty search form. Render writes as it goes: after an error, w may hold
// part of the page.
func Render(w io.Writer, p *Page) error {
	if p == nil {
		p = &Page{}
	}
	if err := page.Execute(w, view{Page: p, Modes: modes}); err != nil {
		return fmt.Errorf("ui: render: %w", err)
	}
	return nil
}

// Handler returns an http.Handler that answers GET and HEAD requests with
// the page that search returns. When search fails, the handler answers 502
// with the search form, the query from the request's "q" parameter, and the
// error as the notice; a nil Page renders the empty form. The handler sets
// [ContentSecurityPolicy] and buffers the page, so a render error becomes a
// 500 response.
func Handler(search func(r *http.Request) (*Page, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "ui: method not allowed", http.StatusMethodNotAllowed)
			return
		}
		status := http.StatusOK
		p, err := search(r)
		if err != nil {
			status = http.StatusBadGateway
			p = &Page{
				Query:  r.FormValue("q"),
				Mode:   r.FormValue("mode"),
				Notice: "ui: search failed: " + err.Error(),
			}
		}
		var buf bytes.Buffer
		if err := Render(&buf, p); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Length", strconv.Itoa(buf.Len()))
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			w.Write(buf.Bytes())
		}
	})
}

// itemHref returns u when it is an absolute http or https URL with a host,
// and "" otherwise, so that the template links only such URLs.
func itemHref(u string) string {
	pu, err := url.Parse(strings.TrimSpace(u))
	if err != nil || pu.Host == "" {
		return ""
	}
	switch strings.ToLower(pu.Scheme) {
	case "http", "https":
		return pu.String()
	}
	return ""
}

// navHref returns u when it is an absolute http or https URL or a
// reference relative to the page (no scheme, no host), and "" otherwise.
func navHref(u string) string {
	u = strings.TrimSpace(u)
	pu, err := url.Parse(u)
	if err != nil || u == "" || (pu.Scheme == "" && pu.Host != "") {
		return ""
	}
	switch strings.ToLower(pu.Scheme) {
	case "", "http", "https":
		return pu.String()
	}
	return ""
}

// plural returns "1 one" for n == 1 and "n many" otherwise.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// formatDuration rounds d for display: whole milliseconds from 10 ms on,
// tenths below, microseconds under a millisecond.
func formatDuration(d time.Duration) string {
	switch {
	case d >= 10*time.Millisecond:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	default:
		return d.Round(time.Microsecond).String()
	}
}

// feedbackView is what the feedback form shows.
type feedbackView struct {
	Action, A, B, Verdict, Label, Query, Mode string
}

func feedbackForm(action, a, b, verdict, label, query, mode string) feedbackView {
	return feedbackView{Action: action, A: a, B: b, Verdict: verdict, Label: label, Query: query, Mode: normalMode(mode)}
}

// above returns the URL of the winner of the group before groups[i], ""
// for the first.
func above(groups []Group, i int) string {
	if i <= 0 || i > len(groups) {
		return ""
	}
	return groups[i-1].Winner.URL
}

// relationTitle describes a relation for a tooltip.
func relationTitle(rel string) string {
	switch rel {
	case "duplicate":
		return "near-duplicate of the first result"
	case "contains":
		return "contains the text of the first result"
	case "contained":
		return "its text is contained in the first result"
	}
	return "similar to the first result"
}

// normalMode returns m when the form offers it and "group" otherwise.
func normalMode(m string) string {
	for _, v := range modes {
		if m == v {
			return m
		}
	}
	return modes[0]
}

// breakURL writes a URL for display with a line-break opportunity (<wbr>)
// after each of its separators (/ ? & = # and, inside long segments, . - _),
// so a long URL wraps between its parts instead of mid-word or off the
// page. Every part is HTML-escaped.
func breakURL(u string) template.HTML {
	var b strings.Builder
	b.Grow(len(u) + len(u)/8)
	start := 0
	for i := 0; i < len(u); i++ {
		switch u[i] {
		case '/', '?', '&', '=', '#', '.', '-', '_':
			// Not between the two slashes of "//", nor at the end.
			if i+1 < len(u) && u[i+1] != '/' {
				b.WriteString(template.HTMLEscapeString(u[start : i+1]))
				b.WriteString("<wbr>")
				start = i + 1
			}
		}
	}
	b.WriteString(template.HTMLEscapeString(u[start:]))
	return template.HTML(b.String())
}
