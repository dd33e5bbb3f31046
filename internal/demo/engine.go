package demo

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/corpus"
)

// BM25 parameters (Robertson and Zaragoza 2009; Elasticsearch's defaults).
const (
	k1 = 1.2
	b  = 0.75
	// titleBoost weighs the title field against the page text in the
	// scorer of the SearXNG endpoint.
	titleBoost = 3
)

// Snippet window around the first matching word, in bytes of text.
const (
	snippetBefore = 60
	snippetAfter  = 180
)

// ErrNoDocs is returned by [New] when the documents are empty.
var ErrNoDocs = errors.New("demo: no documents")

// Options configures [New]. The zero value is ready to use.
type Options struct {
	// Logger receives debug records of the queries served and warnings of
	// the HTTP server; nil means slog.Default().
	Logger *slog.Logger
	// TextInHits includes each page's canonical text in the _source of
	// Elasticsearch hits (field "text"), so a client needs no fetch. The
	// default, false, leaves it out: the client fetches the page URL.
	TextInHits bool
	// ModTime is the Last-Modified time of every page; zero means the
	// time New was called.
	ModTime time.Time
}

// Hit is one search result of [Engine.Search].
type Hit struct {
	// ID is the document's ID, e.g. "sample://llvm/13/Benchmarking".
	ID string
	// URL is the page's path on [Engine.Handler], such as
	// "/pages/13/Benchmarking.html"; the handler's responses carry it as
	// an absolute URL on the requested host.
	URL string
	// Title is the page's <title>, or its path if it has none.
	Title string
	// Snippet is an excerpt of the page around the first word of the
	// query that it contains, cut from its canonical text and shown as the
	// page writes it (case and punctuation kept); the canonical text (lower
	// case, lines joined with spaces) for a page whose visible text does
	// not align with it.
	Snippet string
	// Score is the page's BM25 score for the query.
	Score float64
}

// doc is one indexed page. The JSON fields are precomputed, escaped JSON
// string literals with their quotes.
type doc struct {
	id, path, release, title, contentType, etag string
	urlPath                                     string // "/pages/" + path, escaped
	body                                        []byte
	text                                        string // canonical main text
	flat                                        string // text with "\n" replaced by " "

	idJSON, titleJSON, releaseJSON, textJSON []byte
	urlJSON, urlXML, titleXML                []byte // urlPath escaped without quotes, title

	words    []word // the text's tokens in order, without overlaps, for highlighting
	flatSafe bool   // flat needs no JSON escaping
	// shown is the page's visible text aligned with words (nil: the
	// snippets show flat).
	shown *display
}

// word is one token of a page's text: its byte span and term ID.
type word struct {
	off, end, term int32
}

// posting is one document in a term's postings list.
type posting struct {
	doc   int32
	off   int32   // byte offset of the term's first occurrence in text; -1 if only in the title
	score float64 // the term's BM25 score in this document's field
}

// Engine is an in-memory search engine over a fixed set of pages. It is
// immutable once built and safe for concurrent use.
type Engine struct {
	log        *slog.Logger
	textInHits bool
	modTime    time.Time
	docs       []doc // in ID order, so a document's index breaks score ties
	byPath     map[string]int32
	terms      map[string]int32
	text       [][]posting // term -> postings of the page text
	title      [][]posting // term -> postings of the title
	scratch    sync.Pool   // *scratch
}

// scratch holds one query's working memory, reused through a sync.Pool.
// scores, off, nterms and last are indexed by document and zero (off: -1)
// between queries; touched lists the documents that matched.
type scratch struct {
	terms   []int32 // distinct query term IDs
	scores  []float64
	off     []int32
	nterms  []int32 // how many of the query's distinct words matched
	last    []int32 // the last query word (1-based) counted in nterms; 0: untouched
	touched []int32
	word    []byte
	buf     []byte // response buffer
}

// New indexes docs and returns the engine. A document's page path is its
// ID without the "sample://llvm/" prefix (or the scheme of any other URL
// form) with ".html" (".txt" for text/plain) appended if the last element
// has no extension; its release is the first element of that path.
// Documents whose type is text/plain are read with [canon.Text], all
// others with [canon.HTML] in [canon.ContentMain] mode. New fails on the
// first error of docs, on a page that canon rejects, on two documents with
// one page path, and with [ErrNoDocs] on an empty input.
func New(docs iter.Seq2[corpus.Doc, error], o Options) (*Engine, error) {
	e := &Engine{
		log:        cmp.Or(o.Logger, slog.Default()),
		textInHits: o.TextInHits,
		modTime:    o.ModTime,
		byPath:     map[string]int32{},
		terms:      map[string]int32{},
	}
	if e.modTime.IsZero() {
		e.modTime = time.Now()
	}
	e.modTime = e.modTime.UTC().Truncate(time.Second)
	fields, err := e.read(docs)
	if err != nil {
		return nil, err
	}
	if fields, err = e.sortByID(fields); err != nil {
		return nil, err
	}
	e.indexFields(fields)
	n := len(e.docs)
	e.scratch.New = func() any {
		s := &scratch{
			scores: make([]float64, n),
			off:    make([]int32, n),
			nterms: make([]int32, n),
			last:   make([]int32, n),
		}
		for i := range s.off {
			s.off[i] = -1
		}
		return s
	}
	return e, nil
}

// read canonicalizes every document into e.docs and returns the fields to
// index of each: its text and its title.
func (e *Engine) read(docs iter.Seq2[corpus.Doc, error]) ([][2]field, error) {
	var fields [][2]field
	for d, err := range docs {
		if err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
		p, err := pagePath(d)
		if err != nil {
			return nil, err
		}
		var cd canon.Document
		if isText(d.ContentType) {
			cd, err = canon.Text(d.Body, canon.Options{})
		} else {
			cd, err = canon.HTML(d.Body, d.ContentType, canon.Options{Content: canon.ContentMain})
		}
		if err != nil {
			return nil, fmt.Errorf("demo: document %q: %w", d.ID, err)
		}
		release := ""
		if i := strings.IndexByte(p, '/'); i > 0 {
			release = p[:i]
		}
		title := strings.TrimSpace(cd.Title)
		if title == "" {
			title = p
		}
		sum := sha256.Sum256(d.Body)
		e.docs = append(e.docs, doc{
			id:          d.ID,
			path:        p,
			release:     release,
			title:       title,
			contentType: contentType(d.ContentType),
			etag:        `"` + hex.EncodeToString(sum[:12]) + `"`,
			body:        d.Body,
			text:        cd.Text,
			flat:        strings.ReplaceAll(cd.Text, "\n", " "),
		})
		fields = append(fields, [2]field{
			{tokens: cd.Tokens, offs: offsets(cd)},
			{tokens: canon.Tokenize(canon.Normalize(title))},
		})
	}
	if len(e.docs) == 0 {
		return nil, ErrNoDocs
	}
	if len(e.docs) > math.MaxInt32 {
		return nil, fmt.Errorf("demo: %d documents, over the limit of %d", len(e.docs), math.MaxInt32)
	}
	return fields, nil
}

// sortByID orders the documents (and their fields) by ID, so that the
// index order breaks score ties, and fills what each document renders
// with: its encoded ID, title, release, text and URL.
func (e *Engine) sortByID(fields [][2]field) ([][2]field, error) {
	order := make([]int, len(e.docs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return strings.Compare(e.docs[i].id, e.docs[j].id) })
	docsByID := make([]doc, len(order))
	fieldsByID := make([][2]field, len(order))
	for i, j := range order {
		docsByID[i], fieldsByID[i] = e.docs[j], fields[j]
	}
	e.docs = docsByID
	for i := range e.docs {
		d := &e.docs[i]
		if j, dup := e.byPath[d.path]; dup {
			return nil, fmt.Errorf("demo: documents %q and %q have the same page path %q", e.docs[j].id, d.id, d.path)
		}
		e.byPath[d.path] = int32(i)
		d.idJSON = appendJSONString(nil, d.id)
		d.titleJSON = appendJSONString(nil, d.title)
		d.releaseJSON = appendJSONString(nil, d.release)
		d.textJSON = appendJSONString(nil, d.text)
		d.flatSafe = len(appendJSONChars(nil, d.flat)) == len(d.flat)
		d.urlPath = "/pages/" + escapePath(d.path)
		d.urlJSON = appendJSONChars(nil, d.urlPath)
		d.urlXML = appendXML(nil, d.urlPath)
		d.titleXML = appendXML(nil, d.title)
	}
	return fieldsByID, nil
}

// indexFields builds the text and title indexes and each document's words
// (the terms of its text at their offsets) and display.
func (e *Engine) indexFields(fields [][2]field) {
	text := make([]field, len(fields))
	title := make([]field, len(fields))
	for i, f := range fields {
		text[i], title[i] = f[0], f[1]
	}
	e.text = e.index(text)
	e.title = e.index(title)
	for i, f := range text {
		d := &e.docs[i]
		d.words = make([]word, 0, len(f.tokens))
		for j, tok := range f.tokens {
			w := word{off: f.offs[j], end: f.offs[j] + int32(len(tok)), term: e.terms[tok]}
			if n := len(d.words); n > 0 && w.off < d.words[n-1].end {
				continue // a CJK bigram overlapping the previous one
			}
			d.words = append(d.words, w)
		}
		d.shown = displayOf(d.body, isText(d.contentType), d.flat, d.words)
	}
	// Both fields share the term dictionary; pad the tables to its size.
	for len(e.text) < len(e.terms) {
		e.text = append(e.text, nil)
	}
	for len(e.title) < len(e.terms) {
		e.title = append(e.title, nil)
	}
}

// field is one field of one document to index: its tokens and, for the
// page text, each token's byte offset in the text (nil for the title).
type field struct {
	tokens []string
	offs   []int32
}

// index builds the postings of one field over all documents, in document
// order, with each posting's BM25 score precomputed:
// idf · tf/(tf + k1·(1 − b + b·dl/avgdl)), idf = ln(1 + (N − df + 0.5)/(df + 0.5)).
// Cost: O(total tokens).
func (e *Engine) index(fields []field) [][]posting {
	var total float64
	for _, f := range fields {
		total += float64(len(f.tokens))
	}
	avg := max(total/float64(len(fields)), 1)
	var table [][]posting
	tf := map[int32]int{}
	first := map[int32]int32{}
	var order []int32
	for i, f := range fields {
		clear(tf)
		clear(first)
		order = order[:0]
		for j, tok := range f.tokens {
			t := e.termID(tok)
			if _, ok := tf[t]; !ok {
				order = append(order, t)
				first[t] = -1
				if f.offs != nil {
					first[t] = f.offs[j]
				}
			}
			tf[t]++
		}
		for len(table) < len(e.terms) {
			table = append(table, nil)
		}
		norm := k1 * (1 - b + b*float64(len(f.tokens))/avg)
		for _, t := range order {
			c := float64(tf[t])
			table[t] = append(table[t], posting{doc: int32(i), off: first[t], score: c / (c + norm)})
		}
	}
	n := float64(len(fields))
	for _, ps := range table {
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for k := range ps {
			ps[k].score *= idf
		}
	}
	return table
}

func (e *Engine) termID(t string) int32 {
	id, ok := e.terms[t]
	if !ok {
		id = int32(len(e.terms))
		e.terms[t] = id
	}
	return id
}

// offsets returns the byte offset of each token of cd in cd.Text. canon
// documents its tokens as substrings of the text, so the offset is the
// distance between the two strings' data; a token for which that does
// not hold (canon does not promise it for every future version) is
// looked up instead.
func offsets(cd canon.Document) []int32 {
	out := make([]int32, len(cd.Tokens))
	base := uintptr(unsafe.Pointer(unsafe.StringData(cd.Text)))
	for i, t := range cd.Tokens {
		off := int(uintptr(unsafe.Pointer(unsafe.StringData(t))) - base)
		if off < 0 || off+len(t) > len(cd.Text) || cd.Text[off:off+len(t)] != t {
			off = max(strings.Index(cd.Text, t), 0)
		}
		out[i] = int32(min(off, math.MaxInt32))
	}
	return out
}

// pagePath derives a document's page path from its ID.
func pagePath(d corpus.Doc) (string, error) {
	rest, ok := strings.CutPrefix(d.ID, "sample://llvm/")
	if !ok {
		if _, after, found := strings.Cut(rest, "://"); found {
			rest = after
		}
	}
	p := strings.TrimPrefix(path.Clean("/"+rest), "/")
	if p == "" {
		return "", fmt.Errorf("demo: document %q: no page path in its ID", d.ID)
	}
	if path.Ext(path.Base(p)) == "" {
		if isText(d.ContentType) {
			p += ".txt"
		} else {
			p += ".html"
		}
	}
	return p, nil
}

func isText(ct string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "text/plain")
}

// contentType is the Content-Type a page is served with.
func contentType(ct string) string {
	if strings.Contains(strings.ToLower(ct), "charset=") {
		return ct
	}
	if isText(ct) {
		return "text/plain; charset=utf-8"
	}
	return "text/html; charset=utf-8"
}

// escapePath percent-encodes each element of a page path.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// Len returns the number of pages in e.
func (e *Engine) Len() int { return len(e.docs) }

// scorer selects the fields a query is scored on.
type scorer int

const (
	scoreText    scorer = iota // BM25 on the page text
	scoreTitle                 // BM25 on the title
	scoreBoosted               // BM25 on the text plus titleBoost × BM25 on the title
)

// query is a parsed search request.
type query struct {
	text   string
	all    bool // match_all: every page, score 1
	and    bool // every distinct word must match
	scorer scorer
	from   int
	size   int
	// variant, when not empty, is appended to every hit URL as ?v=variant
	// (the x_variant parameter): the same pages under as many URLs as a
	// load test wants, so a signature cache fills and churns.
	variant string
}

// Search runs q as a full-text query on the page text (the words of q,
// any of which may match, ranked by BM25) and returns the hits ranked
// from+1 to from+size and the number of pages that matched. Ties are
// broken by ID, so a query always gives the same order. A q without
// words matches nothing. Negative from and size count as zero. Words are
// split and lower-cased as canon does; there is no stemming. Cost: the
// postings of q's words plus a sort of the matches; only the returned
// slice is allocated.
func (e *Engine) Search(q string, from, size int) (hits []Hit, total int) {
	s := e.get()
	defer e.put(s)
	e.run(s, query{text: q})
	page := window(s.touched, from, size)
	hits = make([]Hit, 0, len(page))
	for _, d := range page {
		hits = append(hits, e.hit(s, d))
	}
	return hits, len(s.touched)
}

func (e *Engine) hit(s *scratch, d int32) Hit {
	dc := &e.docs[d]
	return Hit{
		ID:      dc.id,
		URL:     dc.urlPath,
		Title:   dc.title,
		Snippet: e.snippet(d, s.off[d]),
		Score:   s.scores[d],
	}
}

// window returns touched[from:from+size], clamped.
func window(touched []int32, from, size int) []int32 {
	from = min(max(from, 0), len(touched))
	size = max(size, 0)
	return touched[from : from+min(size, len(touched)-from)]
}

func (e *Engine) get() *scratch { return e.scratch.Get().(*scratch) }

// put clears what run left in s and returns it to the pool.
func (e *Engine) put(s *scratch) {
	for _, d := range s.touched {
		s.reset(d)
	}
	s.touched = s.touched[:0]
	s.terms = s.terms[:0]
	if cap(s.buf) > 1<<20 { // do not keep one huge response forever
		s.buf = nil
	}
	e.scratch.Put(s)
}

// run scores q into s: s.touched lists the matching documents, best
// first; s.scores and s.off hold their scores and first-match offsets.
// Cost: one pass over the postings of q's words, plus O(m log m) to sort
// the m matches.
func (e *Engine) run(s *scratch, q query) {
	if q.all {
		for i := range e.docs {
			s.touched = append(s.touched, int32(i))
			s.scores[i] = 1
		}
		return
	}
	unknown := e.words(s, q.text)
	if len(s.terms) == 0 || q.and && unknown {
		return
	}
	for k, t := range s.terms {
		if q.scorer != scoreTitle {
			for _, p := range e.text[t] {
				s.add(p, 1, int32(k+1))
			}
		}
		if q.scorer != scoreText {
			boost := 1.0
			if q.scorer == scoreBoosted {
				boost = titleBoost
			}
			for _, p := range e.title[t] {
				s.add(p, boost, int32(k+1))
			}
		}
	}
	if q.and {
		kept := s.touched[:0]
		for _, d := range s.touched {
			if int(s.nterms[d]) == len(s.terms) {
				kept = append(kept, d)
			} else {
				s.reset(d)
			}
		}
		s.touched = kept
	}
	slices.SortFunc(s.touched, func(x, y int32) int {
		if c := cmp.Compare(s.scores[y], s.scores[x]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
}

// add accumulates one posting of the query's term number k (1-based).
func (s *scratch) add(p posting, boost float64, k int32) {
	d := p.doc
	if s.last[d] == 0 {
		s.touched = append(s.touched, d)
	}
	if s.last[d] != k {
		s.last[d] = k
		s.nterms[d]++
	}
	s.scores[d] += boost * p.score
	if p.off >= 0 && (s.off[d] < 0 || p.off < s.off[d]) {
		s.off[d] = p.off
	}
}

// reset clears document d's entries.
func (s *scratch) reset(d int32) {
	s.scores[d], s.off[d], s.nterms[d], s.last[d] = 0, -1, 0, 0
}

// words splits text into words as canon does (lower case; runs of
// letters, digits and marks; CJK as bigrams), stores the distinct IDs of
// those the index knows in s.terms, in query order, and reports whether
// some word is unknown to the index. ASCII text takes a path that does
// not allocate; unlike canon.Normalize it keeps list numberings such as
// "a.1" at the start of the query (a query is not a list).
func (e *Engine) words(s *scratch, text string) (unknown bool) {
	if !isASCII(text) {
		for _, w := range canon.Tokenize(canon.Normalize(text)) {
			unknown = e.addWord(s, w) || unknown
		}
		return unknown
	}
	for i := 0; i < len(text); {
		for i < len(text) && !isAlnum(text[i]) {
			i++
		}
		s.word = s.word[:0]
		for ; i < len(text) && isAlnum(text[i]); i++ {
			c := text[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			s.word = append(s.word, c)
		}
		if len(s.word) > 0 {
			unknown = e.addWord(s, string(s.word)) || unknown
		}
	}
	return unknown
}

// addWord adds w's term ID to s.terms unless it is there, and reports
// whether w is unknown to the index.
func (e *Engine) addWord(s *scratch, w string) (unknown bool) {
	id, ok := e.terms[w]
	if !ok {
		return true
	}
	if !slices.Contains(s.terms, id) {
		s.terms = append(s.terms, id)
	}
	return false
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isWordRune reports whether r belongs to a canon word token.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isAlnum(byte(r))
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// snippet returns the excerpt of document d's flat text around byte
// offset off (the start if off < 0), cut at spaces. It is a substring:
// no allocation.
func (e *Engine) snippet(d, off int32) string {
	start, end := e.snippetSpan(d, off)
	if sh, i, j, ok := e.shownSpan(d, start, end); ok {
		b, _ := sh.appendWords(nil, i, j, appendRaw, nil)
		return string(b)
	}
	return e.docs[d].flat[start:end]
}

// shownSpan returns the page's visible text and the words [i, j) of the
// canonical span start, end, when the page has an aligned visible text.
func (e *Engine) shownSpan(d int32, start, end int) (sh *display, i, j int, ok bool) {
	dc := &e.docs[d]
	if dc.shown == nil {
		return nil, 0, 0, false
	}
	ws := dc.words
	i, _ = slices.BinarySearchFunc(ws, int32(start), func(w word, off int32) int { return cmp.Compare(w.off, off) })
	j = i
	for j < len(ws) && int(ws[j].end) <= end {
		j++
	}
	return dc.shown, i, j, j > i
}

// snippetSpan returns the byte span of the snippet.
func (e *Engine) snippetSpan(d, off int32) (start, end int) {
	t := e.docs[d].flat
	o := max(int(off), 0)
	if o > snippetBefore {
		start = o - snippetBefore
		if i := strings.IndexByte(t[start:o], ' '); i >= 0 {
			start += i + 1
		} else {
			for start < o && !utf8.RuneStart(t[start]) {
				start++
			}
		}
	}
	end = len(t)
	if o+snippetAfter < len(t) {
		end = o + snippetAfter
		if i := strings.LastIndexByte(t[o:end], ' '); i > 0 {
			end = o + i
		} else {
			for end > o && !utf8.RuneStart(t[end]) {
				end--
			}
		}
	}
	for start < end && t[start] == ' ' {
		start++
	}
	for end > start && t[end-1] == ' ' {
		end--
	}
	return start, end
}
