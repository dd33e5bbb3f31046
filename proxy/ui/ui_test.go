package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden and testdata/screenshot.png")

// fixture returns the Page in testdata/fixture.json.
func fixture(t testing.TB) *Page {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixture.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p Page
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("testdata/fixture.json: %v", err)
	}
	return &p
}

func render(t testing.TB, p *Page) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(&buf, p); err != nil {
		t.Fatalf("Render: %v", err)
	}
	return buf.String()
}

// parse parses a rendered page as a browser would.
func parse(t testing.TB, s string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(s))
	if err != nil {
		t.Fatalf("html.Parse: %v", err)
	}
	return doc
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func hasClass(n *html.Node, class string) bool {
	v, _ := attr(n, "class")
	return slices.Contains(strings.Fields(v), class)
}

// findAll returns the elements under n, in document order, that have the
// tag (any tag when "") and the class (any class when "").
func findAll(n *html.Node, tag, class string) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && (tag == "" || d.Data == tag) && (class == "" || hasClass(d, class)) {
			out = append(out, d)
		}
	}
	return out
}

// text returns the text under n with white space collapsed.
func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func texts(ns []*html.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, text(n))
	}
	return out
}

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name string
		page *Page
	}{
		{"page", fixture(t)},
		{"form", nil},
		{"noresults", &Page{
			Query:   "zzxq vectorizor",
			Engines: []EngineStatus{{Name: "solr", Took: 12 * time.Millisecond}, {Name: "searxng", Took: 2 * time.Second, Err: "engine searxng: status 503"}},
			Took:    2*time.Second + 3*time.Millisecond,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, tt.page)
			golden := filepath.Join("testdata", tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("Render(%s) differs from %s (run go test -update and review the diff):\n%s", tt.name, golden, firstDiff(got, string(want)))
			}
		})
	}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return ""
}

func TestRenderStructure(t *testing.T) {
	p := fixture(t)
	doc := parse(t, render(t, p))
	if got := texts(findAll(doc, "title", "")); !slices.Equal(got, []string{"winnow — llvm loop vectorizer"}) {
		t.Errorf("title = %q, want %q", got, "winnow — llvm loop vectorizer")
	}
	if f := findAll(doc, "form", ""); len(f) != 1 {
		t.Fatalf("found %d forms, want 1", len(f))
	} else if id, _ := attr(f[0], "id"); id != "search" {
		t.Errorf("form id = %q, want %q", id, "search")
	}
	for _, landmark := range []string{"header", "main", "footer", "nav"} {
		if n := len(findAll(doc, landmark, "")); n != 1 {
			t.Errorf("found %d <%s>, want 1", n, landmark)
		}
	}
	for _, l := range findAll(doc, "label", "") {
		id, _ := attr(l, "for")
		found := false
		for d := range doc.Descendants() {
			if v, ok := attr(d, "id"); ok && v == id && d.Type == html.ElementNode {
				found = true
			}
		}
		if !found {
			t.Errorf("label %q is for %q, which no element has as id", text(l), id)
		}
	}
	groups := findAll(doc, "li", "group")
	if len(groups) != len(p.Groups) {
		t.Fatalf("found %d .group, want %d", len(groups), len(p.Groups))
	}
	for i, g := range groups {
		want := p.Groups[i]
		if id, _ := attr(g, "data-cluster"); id != want.ID {
			t.Errorf("group %d data-cluster = %q, want %q", i, id, want.ID)
		}
		if w := texts(findAll(g, "h2", "title")); !slices.Equal(w, []string{want.Winner.Title}) {
			t.Errorf("group %d winner title = %q, want %q", i, w, want.Winner.Title)
		}
		if n := len(findAll(g, "", "item")); n != len(want.Similar) {
			t.Errorf("group %d has %d .item, want %d", i, n, len(want.Similar))
		}
		badges := len(findAll(g, "", "badge-unrefined"))
		if wantBadges := map[bool]int{false: 0, true: 1}[want.Winner.Unrefined]; badges != wantBadges {
			t.Errorf("group %d has %d .badge-unrefined, want %d", i, badges, wantBadges)
		}
		if len(want.Similar) == 0 {
			continue
		}
		lines := texts(findAll(g, "p", "explain-line"))
		details := texts(findAll(g, "p", "explain-detail"))
		for j, s := range want.Similar {
			if j >= len(details) || details[j] != s.Explain {
				t.Errorf("group %d explain details = %q, want line %d %q", i, details, j, s.Explain)
			}
			// The plain sentence comes first, on the title's line.
			if j >= len(lines) || s.Reason != "" && !strings.HasSuffix(lines[j], ": "+s.Reason+".") {
				t.Errorf("group %d explain lines = %q, want line %d ending %q", i, lines, j, s.Reason)
			}
		}
		rows := findAll(g, "tr", "")
		wantRows := 0
		for _, s := range want.Similar {
			wantRows += 1 + len(s.Scores) // a head row per table
		}
		if len(rows) != wantRows {
			t.Errorf("group %d has %d score table rows, want %d", i, len(rows), wantRows)
		}
	}
	if n := len(findAll(doc, "script", "")); n != 0 {
		t.Errorf("found %d <script>, want none: the page works without script", n)
	}
}

func TestSimilarSummary(t *testing.T) {
	item := Item{URL: "https://example.com/b", Title: "B", Relation: "duplicate", Explain: "duplicate: x"}
	tests := []struct {
		n    int
		want []string // summaries of details.similar
	}{
		{0, nil},
		{1, []string{"1 similar result"}},
		{2, []string{"2 similar results"}},
		{11, []string{"11 similar results"}},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.n), func(t *testing.T) {
			g := Group{ID: "c1", Winner: Item{URL: "https://example.com/a", Title: "A"}}
			for range tt.n {
				g.Similar = append(g.Similar, item)
			}
			doc := parse(t, render(t, &Page{Query: "q", Groups: []Group{g}}))
			var got []string
			for _, d := range findAll(doc, "details", "similar") {
				got = append(got, texts(findAll(d, "summary", ""))...)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("%d similar: summaries = %q, want %q", tt.n, got, tt.want)
			}
			wantExplain := 1
			if tt.n == 0 {
				wantExplain = 0
			}
			if e := findAll(doc, "details", "explain"); len(e) != wantExplain {
				t.Errorf("%d similar: found %d details.explain, want %d", tt.n, len(e), wantExplain)
			} else if wantExplain == 1 {
				if s := texts(findAll(e[0], "summary", "")); !slices.Equal(s, []string{"why grouped?"}) {
					t.Errorf("explain summary = %q, want %q", s, "why grouped?")
				}
			}
		})
	}
}

func TestRenderEscapes(t *testing.T) {
	const hostile = `<script>alert("x")</script><img src=x onerror=alert(1)>`
	tests := []struct {
		name   string
		url    string
		linked bool
	}{
		{"javascript", "javascript:alert(1)", false},
		{"javascript mixed case", "JaVaScRiPt:alert(1)", false},
		{"javascript leading space", "  javascript:alert(1)", false},
		{"javascript tab inside", "java\tscript:alert(1)", false},
		{"javascript entity", "javascript&colon;alert(1)", false},
		{"vbscript", "vbscript:msgbox(1)", false},
		{"data", "data:text/html,<script>alert(1)</script>", false},
		{"file", "file:///etc/passwd", false},
		{"scheme relative", "//evil.example/x", false},
		{"relative", "/local/path", false},
		{"http without host", "http:evil", false},
		{"quotes in https", `https://ok.example/?a=<b>&c="d"' onclick='x`, true},
		{"http", "http://ok.example/page", true},
		{"https upper case", "HTTPS://OK.example/", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := Item{URL: tt.url, Title: hostile, Snippet: hostile, Engines: []string{hostile}, Relation: hostile, Explain: hostile,
				Scores: []Score{{Name: hostile, Value: hostile, Threshold: hostile}}}
			p := &Page{
				Query:   hostile,
				Mode:    hostile,
				Engines: []EngineStatus{{Name: hostile, Err: hostile}},
				Notice:  hostile,
				Groups:  []Group{{ID: `" onmouseover="alert(1)`, Winner: it, Similar: []Item{it}}},
				PrevURL: tt.url,
				NextURL: "javascript:alert(2)",
			}
			out := render(t, p)
			doc := parse(t, out)
			if n := len(findAll(doc, "script", "")); n != 0 {
				t.Errorf("URL %q: found %d <script> elements, want none", tt.url, n)
			}
			if n := len(findAll(doc, "img", "")); n != 0 {
				t.Errorf("URL %q: found %d <img> elements, want none", tt.url, n)
			}
			var links []string
			for d := range doc.Descendants() {
				if d.Type != html.ElementNode {
					continue
				}
				for _, a := range d.Attr {
					if strings.HasPrefix(a.Key, "on") {
						t.Errorf("URL %q: <%s> has event attribute %s=%q", tt.url, d.Data, a.Key, a.Val)
					}
				}
				if h, ok := attr(d, "href"); ok && h != "?" {
					links = append(links, h)
				}
			}
			for _, h := range links {
				u, err := url.Parse(h)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "") || strings.HasPrefix(h, "//") {
					t.Errorf("URL %q: href %q, want http, https or a relative path", tt.url, h)
				}
			}
			titles := findAll(doc, "", "title")
			for _, ti := range titles {
				if got := text(ti); !strings.HasSuffix(got, hostile) {
					t.Errorf("URL %q: title text = %q, want it to end in %q", tt.url, got, hostile)
				}
				anchors := findAll(ti, "a", "")
				if linked := len(anchors) > 0; linked != tt.linked {
					t.Errorf("URL %q: title linked = %v, want %v", tt.url, linked, tt.linked)
				}
			}
			if got := texts(findAll(doc, "p", "notice")); !slices.Equal(got, []string{hostile}) {
				t.Errorf("notice = %q, want %q", got, hostile)
			}
			if id, _ := attr(findAll(doc, "li", "group")[0], "data-cluster"); id != p.Groups[0].ID {
				t.Errorf("data-cluster = %q, want %q", id, p.Groups[0].ID)
			}
		})
	}
}

func TestRenderEmpty(t *testing.T) {
	tests := []struct {
		name      string
		page      *Page
		empty     []string // text of p.empty
		intro     int      // count of p.intro
		wantTitle string
	}{
		{"nil page", nil, nil, 1, "winnow"},
		{"no query", &Page{}, nil, 1, "winnow"},
		{"no results", &Page{Query: "nothing here"}, []string{"No results for “nothing here”."}, 0, "winnow — nothing here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := parse(t, render(t, tt.page))
			if got := texts(findAll(doc, "p", "empty")); !slices.Equal(got, tt.empty) {
				t.Errorf("empty message = %q, want %q", got, tt.empty)
			}
			if got := len(findAll(doc, "p", "intro")); got != tt.intro {
				t.Errorf("found %d p.intro, want %d", got, tt.intro)
			}
			if got := texts(findAll(doc, "title", "")); !slices.Equal(got, []string{tt.wantTitle}) {
				t.Errorf("title = %q, want %q", got, tt.wantTitle)
			}
			if n := len(findAll(doc, "", "group")) + len(findAll(doc, "nav", "pages")); n != 0 {
				t.Errorf("found %d groups and page links, want none", n)
			}
		})
	}
}

func TestRenderEngines(t *testing.T) {
	p := &Page{Query: "q", Engines: []EngineStatus{
		{Name: "solr", Results: 1, Took: 1500 * time.Microsecond},
		{Name: "es", Results: 0, Took: 250 * time.Millisecond, Err: "engine es: context deadline exceeded"},
		{Name: "searxng", Results: 30, Took: 1234567 * time.Microsecond},
	}}
	doc := parse(t, render(t, p))
	got := texts(findAll(doc, "li", "engine"))
	want := []string{"solr 1 result in 1.5ms", "es failed: engine es: context deadline exceeded", "searxng 30 results in 1.235s"}
	if !slices.Equal(got, want) {
		t.Errorf("engines = %q, want %q", got, want)
	}
	if got := texts(findAll(doc, "li", "engine-error")); !slices.Equal(got, want[1:2]) {
		t.Errorf("engine errors = %q, want %q", got, want[1:2])
	}
}

func TestRenderMode(t *testing.T) {
	g := Group{ID: "c", Winner: Item{URL: "https://a.example/", Title: "A"}, Similar: []Item{{URL: "https://b.example/", Title: "B"}}}
	tests := []struct {
		mode, selected string
		open           bool
	}{
		{"", "group", false},
		{"group", "group", false},
		{"remove", "remove", false},
		{"annotate", "annotate", true},
		{"bogus", "group", false},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			doc := parse(t, render(t, &Page{Query: "q", Mode: tt.mode, Groups: []Group{g}}))
			var selected []string
			for _, o := range findAll(doc, "option", "") {
				if _, ok := attr(o, "selected"); ok {
					v, _ := attr(o, "value")
					selected = append(selected, v)
				}
			}
			if !slices.Equal(selected, []string{tt.selected}) {
				t.Errorf("mode %q: selected = %q, want %q", tt.mode, selected, tt.selected)
			}
			_, open := attr(findAll(doc, "details", "similar")[0], "open")
			if open != tt.open {
				t.Errorf("mode %q: details.similar open = %v, want %v", tt.mode, open, tt.open)
			}
		})
	}
}

func TestRenderPages(t *testing.T) {
	tests := []struct {
		prev, next string
		want       []string // rel=href of the links in nav.pages, nil: no nav
	}{
		{"", "", nil},
		{"", "?q=a&page=2", []string{"next=?q=a&page=2"}},
		{"?q=a&page=1", "?q=a&page=3", []string{"prev=?q=a&page=1", "next=?q=a&page=3"}},
		{"https://x.example/s?q=a", "", []string{"prev=https://x.example/s?q=a"}},
		{"javascript:alert(1)", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.prev+"|"+tt.next, func(t *testing.T) {
			doc := parse(t, render(t, &Page{Query: "a", PrevURL: tt.prev, NextURL: tt.next}))
			navs := findAll(doc, "nav", "pages")
			var got []string
			for _, n := range navs {
				for _, a := range findAll(n, "a", "") {
					rel, _ := attr(a, "rel")
					href, _ := attr(a, "href")
					got = append(got, rel+"="+href)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("links(%q, %q) = %q, want %q", tt.prev, tt.next, got, tt.want)
			}
			if len(tt.want) == 0 && len(navs) != 0 {
				t.Errorf("links(%q, %q): found nav.pages, want none", tt.prev, tt.next)
			}
		})
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{1234 * time.Nanosecond, "1µs"},
		{1500 * time.Microsecond, "1.5ms"},
		{263700 * time.Microsecond, "264ms"},
		{2*time.Second + 3400*time.Microsecond, "2.003s"},
	}
	for _, tt := range tests {
		if got := formatDuration(tt.d); got != tt.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestHandler(t *testing.T) {
	errBackend := errors.New("backend down")
	search := func(r *http.Request) (*Page, error) {
		if r.FormValue("q") == "fail" {
			return nil, errBackend
		}
		return &Page{Query: r.FormValue("q"), Mode: r.FormValue("mode")}, nil
	}
	h := Handler(search)
	tests := []struct {
		method, target string
		status         int
		contains       string
	}{
		{http.MethodGet, "/?q=go+generics&mode=remove", http.StatusOK, "<title>winnow — go generics</title>"},
		{http.MethodGet, "/?q=%3Cb%3E", http.StatusOK, "<title>winnow — &lt;b&gt;</title>"},
		{http.MethodHead, "/?q=x", http.StatusOK, ""},
		{http.MethodGet, "/?q=fail", http.StatusBadGateway, `<p class="notice" role="status">ui: search failed: backend down</p>`},
		{http.MethodPost, "/?q=x", http.StatusMethodNotAllowed, "method not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, nil))
			if rec.Code != tt.status {
				t.Errorf("%s %s: status = %d, want %d", tt.method, tt.target, rec.Code, tt.status)
			}
			if !strings.Contains(rec.Body.String(), tt.contains) {
				t.Errorf("%s %s: body does not contain %q:\n%s", tt.method, tt.target, tt.contains, rec.Body)
			}
			if tt.status == http.StatusMethodNotAllowed {
				return
			}
			if got := rec.Header().Get("Content-Security-Policy"); got != ContentSecurityPolicy {
				t.Errorf("%s %s: Content-Security-Policy = %q, want %q", tt.method, tt.target, got, ContentSecurityPolicy)
			}
			if got := rec.Header().Get("Content-Type"); got != "text/html; charset=utf-8" {
				t.Errorf("%s %s: Content-Type = %q, want text/html; charset=utf-8", tt.method, tt.target, got)
			}
			if tt.method == http.MethodHead && rec.Body.Len() != 0 {
				t.Errorf("HEAD: body of %d bytes, want none", rec.Body.Len())
			}
		})
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRenderWriteError(t *testing.T) {
	err := Render(failWriter{}, fixture(t))
	if err == nil || !strings.HasPrefix(err.Error(), "ui: render: ") {
		t.Errorf("Render(failing writer) = %v, want an error prefixed %q", err, "ui: render: ")
	}
}

func BenchmarkRender(b *testing.B) {
	small := fixture(b)
	// large is the top 50 of a page: the fixture's groups repeated.
	large := *small
	large.Groups = nil
	for len(large.Groups) < 30 {
		large.Groups = append(large.Groups, small.Groups...)
	}
	for _, bb := range []struct {
		name string
		page *Page
	}{{"fixture", small}, {"50results", &large}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			var buf bytes.Buffer
			if err := Render(&buf, bb.page); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(buf.Len()))
			for b.Loop() {
				buf.Reset()
				if err := Render(&buf, bb.page); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRenderHighlight checks that a snippet's highlighted words are
// marked and every part is escaped.
func TestRenderHighlight(t *testing.T) {
	p := &Page{Query: "code review", Groups: []Group{{ID: "a", Winner: Item{URL: "https://example.org/", Title: "T",
		Snippet:      "LLVM's code <review>",
		SnippetParts: []Part{{Text: "LLVM's "}, {Text: "code", Hit: true}, {Text: " <review>"}}}}}}
	var b strings.Builder
	if err := Render(&b, p); err != nil {
		t.Fatal(err)
	}
	if want := `<p class="snippet" dir="auto">LLVM&#39;s <mark>code</mark> &lt;review&gt;</p>`; !strings.Contains(b.String(), want) {
		t.Errorf("page lacks %s:\n%s", want, b.String())
	}
}

// TestRenderRemoved: in remove mode the status line counts the
// duplicates removed and each group lists its removed ones, closed,
// with their scores; the other modes say nothing of removal.
func TestRenderRemoved(t *testing.T) {
	removed := Item{URL: "https://c.example/", Title: "C", Explain: "removed by the content-equivalence decision: ...",
		Scores: []Score{{Name: "P(content-equivalent)", Value: "0.97", Threshold: ">= 0.90"}}}
	g := Group{ID: "c", Winner: Item{URL: "https://a.example/", Title: "A"}, Removed: []Item{removed}}
	doc := parse(t, render(t, &Page{Query: "q", Mode: "remove", Groups: []Group{g}, Total: 1, Removed: 1}))
	if got := text(findAll(doc, "p", "totals")[0]); !strings.Contains(got, "1 duplicate removed as content-equivalent") {
		t.Errorf("remove mode: totals %q, want the count removed", got)
	}
	ds := findAll(doc, "details", "removed")
	if len(ds) != 1 {
		t.Fatalf("remove mode: %d details.removed, want 1", len(ds))
	}
	if _, open := attr(ds[0], "open"); open || !strings.Contains(text(ds[0]), "1 duplicate removed: why?") || !strings.Contains(text(ds[0]), "P(content-equivalent)0.97>= 0.90") {
		t.Errorf("remove mode: details.removed open %v, text %q", open, text(ds[0]))
	}
	doc = parse(t, render(t, &Page{Query: "q", Mode: "group", Groups: []Group{{ID: "c", Winner: g.Winner}}, Total: 1}))
	if got := text(findAll(doc, "p", "totals")[0]); strings.Contains(got, "removed") {
		t.Errorf("group mode: totals %q speak of removal", got)
	}
}
