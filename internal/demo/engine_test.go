package demo

import (
	"errors"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/corpus"
	"github.com/winnow-search/winnow/corpus/sample"
)

var (
	sampleOnce   sync.Once
	sampleEngine *Engine
	sampleErr    error
)

// testEngine returns an engine over the sample corpus, built once.
func testEngine(t testing.TB) *Engine {
	t.Helper()
	sampleOnce.Do(func() {
		sampleEngine, sampleErr = New(sample.Docs(), Options{
			Logger:  slog.New(slog.DiscardHandler),
			ModTime: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC),
		})
	})
	if sampleErr != nil {
		t.Fatalf("New(sample.Docs()) error: %v", sampleErr)
	}
	return sampleEngine
}

func docs(ds ...corpus.Doc) iter.Seq2[corpus.Doc, error] {
	return func(yield func(corpus.Doc, error) bool) {
		for _, d := range ds {
			if !yield(d, nil) {
				return
			}
		}
	}
}

func TestNewErrors(t *testing.T) {
	errSource := errors.New("source broke")
	page := []byte("<html><head><title>t</title></head><body><p>some words here</p></body></html>")
	tests := []struct {
		name string
		docs iter.Seq2[corpus.Doc, error]
		want string // substring of the error
		is   error
	}{
		{"empty", docs(), "no documents", ErrNoDocs},
		{"source error", func(yield func(corpus.Doc, error) bool) { yield(corpus.Doc{}, errSource) }, "demo: source broke", errSource},
		{"same path", docs(
			corpus.Doc{ID: "sample://llvm/13/A", Body: page, ContentType: "text/html"},
			corpus.Doc{ID: "x://13/A.html", Body: page, ContentType: "text/html"},
		), `have the same page path "13/A.html"`, nil},
		{"no path", docs(corpus.Doc{ID: "/", Body: page}), "no page path", nil},
		{"binary", docs(corpus.Doc{ID: "bin", Body: []byte("\x00\x01\x02\x03\x00\x00\x00binary\x00"), ContentType: "text/plain"}), `demo: document "bin"`, canon.ErrBinary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(tt.docs, Options{})
			if err == nil {
				t.Fatalf("New() = %v, nil, want error %q", e, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "demo: ") {
				t.Errorf("New() error = %q, want it to contain %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("New() error = %v, want errors.Is %v", err, tt.is)
			}
		})
	}
}

func TestNewPaths(t *testing.T) {
	page := []byte("<html><head><title>A page</title></head><body><main><p>alpha beta gamma</p></main></body></html>")
	e, err := New(docs(
		corpus.Doc{ID: "sample://llvm/13/Dir/Page", Body: page, ContentType: "text/html"},
		corpus.Doc{ID: "notes/readme", Body: []byte("alpha words in plain text"), ContentType: "text/plain"},
		corpus.Doc{ID: "https://example.org/x/y.htm", Body: page, ContentType: "text/html; charset=windows-1252"},
	), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ path, release, ctype string }{
		"sample://llvm/13/Dir/Page":   {"13/Dir/Page.html", "13", "text/html; charset=utf-8"},
		"notes/readme":                {"notes/readme.txt", "notes", "text/plain; charset=utf-8"},
		"https://example.org/x/y.htm": {"example.org/x/y.htm", "example.org", "text/html; charset=windows-1252"},
	}
	if e.Len() != len(want) {
		t.Fatalf("Len() = %d, want %d", e.Len(), len(want))
	}
	for _, d := range e.docs {
		w := want[d.id]
		if d.path != w.path || d.release != w.release || d.contentType != w.ctype {
			t.Errorf("doc %q: path, release, type = %q, %q, %q, want %q, %q, %q", d.id, d.path, d.release, d.contentType, w.path, w.release, w.ctype)
		}
	}
	hits, total := e.Search("alpha", 0, 10)
	if total != 3 || len(hits) != 3 {
		t.Errorf("Search(%q) total = %d (%d hits), want 3", "alpha", total, len(hits))
	}
}

// TestSeveralReleases checks the point of the demo: a query for a page
// that exists in several releases returns its near-duplicates, so the top
// 10 holds one page in at least three releases.
func TestSeveralReleases(t *testing.T) {
	e := testEngine(t)
	tests := []struct{ q, page string }{
		{"benchmark", "Benchmarking"},
		{"code review", "CodeReview"},
		{"llvm-as", "CommandGuide/llvm-as"},
		{"getting started", "GettingStartedTutorials"},
		{"fault maps", "FaultMaps"},
		{"tutorial", "tutorial/index"},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			hits, _ := e.Search(tt.q, 0, 10)
			var releases []string
			for _, h := range hits {
				if sample.Page(h.ID) == tt.page {
					releases = append(releases, strings.Split(strings.TrimPrefix(h.ID, "sample://llvm/"), "/")[0])
				}
			}
			if len(releases) < 3 {
				t.Errorf("Search(%q) top 10 has %s in releases %v, want at least 3 releases", tt.q, tt.page, releases)
			}
			if len(hits) > 0 && sample.Page(hits[0].ID) != tt.page {
				t.Errorf("Search(%q) first hit = %q, want a %s page", tt.q, hits[0].ID, tt.page)
			}
		})
	}
}

func TestSearchOrder(t *testing.T) {
	e := testEngine(t)
	for _, q := range []string{"benchmark", "code review", "llvm", "the", "llvm-as", "table of contents"} {
		t.Run(q, func(t *testing.T) {
			hits, total := e.Search(q, 0, 100)
			if len(hits) != total {
				t.Fatalf("Search(%q, 0, 100) gave %d hits, total %d", q, len(hits), total)
			}
			for i := 1; i < len(hits); i++ {
				a, b := hits[i-1], hits[i]
				if a.Score < b.Score || a.Score == b.Score && a.ID >= b.ID {
					t.Errorf("Search(%q) hits %d, %d = (%v, %q), (%v, %q): not by score then ID", q, i-1, i, a.Score, a.ID, b.Score, b.ID)
				}
			}
			again, _ := e.Search(q, 0, 100)
			if !slices.Equal(hits, again) {
				t.Errorf("Search(%q) differs between two calls", q)
			}
		})
	}
}

func TestSearchConcurrent(t *testing.T) {
	e := testEngine(t)
	queries := []string{"benchmark", "code review", "llvm-as", "getting started"}
	want := make([][]Hit, len(queries))
	for i, q := range queries {
		want[i], _ = e.Search(q, 0, 10)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range 50 {
				i := (g + k) % len(queries)
				if got, _ := e.Search(queries[i], 0, 10); !slices.Equal(got, want[i]) {
					t.Errorf("concurrent Search(%q) differs", queries[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestSearchPagination(t *testing.T) {
	e := testEngine(t)
	all, total := e.Search("llvm", 0, 1000)
	if total < 20 {
		t.Fatalf("Search(%q) total = %d, want at least 20", "llvm", total)
	}
	tests := []struct {
		from, size int
		want       []Hit
	}{
		{0, 10, all[:10]},
		{10, 10, all[10:20]},
		{total - 3, 10, all[total-3:]},
		{total, 10, nil},
		{total + 5, 10, nil},
		{-4, 2, all[:2]},
		{3, 0, nil},
		{3, -1, nil},
	}
	for _, tt := range tests {
		got, gotTotal := e.Search("llvm", tt.from, tt.size)
		if gotTotal != total {
			t.Errorf("Search(%q, %d, %d) total = %d, want %d", "llvm", tt.from, tt.size, gotTotal, total)
		}
		if len(got) != len(tt.want) || len(got) > 0 && !slices.Equal(got, tt.want) {
			t.Errorf("Search(%q, %d, %d) = %d hits, want %d (hits %d..)", "llvm", tt.from, tt.size, len(got), len(tt.want), tt.from)
		}
	}
}

func TestSearchQueryText(t *testing.T) {
	e := testEngine(t)
	ids := func(q string) []string {
		hits, _ := e.Search(q, 0, 100)
		var out []string
		for _, h := range hits {
			out = append(out, h.ID+" "+h.Snippet)
		}
		return out
	}
	tests := []struct{ q, same string }{
		{"BENCHMARK", "benchmark"},
		{"  Code,  REVIEW!! ", "code review"},
		{"code review code", "code review"},
		{"llvm‐as", "llvm as"},                 // U+2010 hyphen takes canon's path
		{"Code Review ünknown", "code review"}, // an unknown non-ASCII word
		{"code review xyzzy", "code review"},   // an unknown word adds nothing
	}
	for _, tt := range tests {
		if got, want := ids(tt.q), ids(tt.same); !slices.Equal(got, want) {
			t.Errorf("Search(%q) = %d hits, want those of Search(%q) (%d)", tt.q, len(got), tt.same, len(want))
		}
	}
	for _, q := range []string{"", "  ", "!?", "xyzzy plugh"} {
		if hits, total := e.Search(q, 0, 10); total != 0 || len(hits) != 0 {
			t.Errorf("Search(%q) = %d hits, total %d, want none", q, len(hits), total)
		}
	}
}

// TestWordsMatchCanon checks that the ASCII fast path splits queries as
// canon does. (It differs on purpose in one way: canon drops list
// numberings such as "a.1" at a line start, a query keeps them.)
func TestWordsMatchCanon(t *testing.T) {
	e := testEngine(t)
	for _, q := range []string{"code review", "LLVM-as", "don't stop", "x86_64 target", "version 13.0.1", "getting started/tutorials", "C++ and Objective-C"} {
		s := e.get()
		e.words(s, q)
		fast := slices.Clone(s.terms)
		e.put(s)
		var slow []int32
		for _, w := range canon.Tokenize(canon.Normalize(q)) {
			if id, ok := e.terms[w]; ok && !slices.Contains(slow, id) {
				slow = append(slow, id)
			}
		}
		if !slices.Equal(fast, slow) {
			t.Errorf("words(%q) = %v, want canon's %v", q, fast, slow)
		}
	}
}

func TestSnippet(t *testing.T) {
	e := testEngine(t)
	for _, q := range []string{"benchmark", "review", "assembler", "tutorial"} {
		hits, _ := e.Search(q, 0, 10)
		for _, h := range hits {
			// The page's own text, in its own case.
			if !strings.Contains(strings.ToLower(h.Snippet), q) {
				t.Errorf("Search(%q) hit %q snippet = %q, want it to contain %q", q, h.ID, h.Snippet, q)
			}
			if h.Snippet == strings.ToLower(h.Snippet) && strings.ContainsAny(h.Snippet, "LC") {
				t.Errorf("Search(%q) hit %q snippet = %q: canonical text, not the page's", q, h.ID, h.Snippet)
			}
			if n := len(h.Snippet); n == 0 || n > 2*(snippetBefore+snippetAfter) {
				t.Errorf("Search(%q) hit %q snippet is %d bytes, want 1..%d", q, h.ID, n, snippetBefore+snippetAfter)
			}
			if strings.Contains(h.Snippet, "\n") {
				t.Errorf("Search(%q) hit %q snippet %q has a newline", q, h.ID, h.Snippet)
			}
		}
	}
}

func BenchmarkSearch(b *testing.B) {
	e := testEngine(b)
	b.ReportAllocs()
	for b.Loop() {
		e.Search("code review", 0, 10)
	}
}

// BenchmarkRun measures the query path the handler uses: scoring and
// ranking without building Hits.
func BenchmarkRun(b *testing.B) {
	e := testEngine(b)
	b.ReportAllocs()
	for b.Loop() {
		s := e.get()
		e.run(s, query{text: "code review"})
		e.put(s)
	}
}
