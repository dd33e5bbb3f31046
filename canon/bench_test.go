package canon

import (
	"bufio"
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// loadPages reads every HTML page under testdata.
func loadPages(b *testing.B) ([][]byte, int64) {
	b.Helper()
	var ps []string
	for _, g := range []string{"testdata/pages/*.html", "testdata/charset/*.html"} {
		m, _ := filepath.Glob(g)
		ps = append(ps, m...)
	}
	var docs [][]byte
	var n int64
	for _, p := range ps {
		d, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, d)
		n += int64(len(d))
	}
	return docs, n
}

func benchHTML(b *testing.B, o Options) {
	benchPages(b, func(d []byte) {
		if _, err := HTML(d, "", o); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkHTML(b *testing.B)     { benchHTML(b, Options{}) }
func BenchmarkHTMLMain(b *testing.B) { benchHTML(b, Options{Content: ContentMain}) }

// benchTexts runs f on the canonical text of every saved page; MB/s
// counts the texts.
func benchTexts(b *testing.B, f func(text string)) {
	docs, _ := loadPages(b)
	var texts []string
	var n int64
	for _, d := range docs {
		doc, _ := HTML(d, "", Options{})
		texts = append(texts, doc.Text)
		n += int64(len(doc.Text))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range texts {
			f(s)
		}
	}
}

func BenchmarkNormalize(b *testing.B) { benchTexts(b, func(s string) { Normalize(s) }) }
func BenchmarkTokenize(b *testing.B)  { benchTexts(b, func(s string) { Tokenize(s) }) }

func BenchmarkURL(b *testing.B) {
	urls := []string{
		"https://www.bbc.com/news/world-us-canada-52241221",
		"HTTPS://WWW.Example.COM:443/a/../b/./c?utm_source=x&b=2&a=1#frag",
		"http://Bücher.example/%7e/path%2fx?q=a+b",
		"https://docs.docker.com/engine/install/?utm_campaign=x&gclid=abc",
	}
	var n int64
	for _, u := range urls {
		n += int64(len(u))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, u := range urls {
			if _, err := URL(u); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// benchPages runs f on every saved page; MB/s counts the whole pages.
func benchPages(b *testing.B, f func(page []byte)) {
	docs, n := loadPages(b)
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs {
			f(d)
		}
	}
}

// BenchmarkHead measures ParseHead on the saved pages; MB/s counts the
// whole pages, of which only the heads are parsed.
func BenchmarkHead(b *testing.B) {
	benchPages(b, func(d []byte) { ParseHead(d, "", "https://example.com/a/page.html") })
}

// BenchmarkHTMLHead measures HTMLHead: HTML and the head with one
// decoding.
func BenchmarkHTMLHead(b *testing.B) {
	benchPages(b, func(d []byte) {
		if _, _, err := HTMLHead(d, "", "https://example.com/a/page.html", Options{}); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkTextPeers canonicalizes the first 200 texts of the peers'
// benchmark input (docs/peers.md: run.py prep writes each llvm-docs page's
// visible text as one line), from WINNOW_PEERS_JSONL, default
// /tmp/peers/llvm.jsonl; it is skipped when the file is absent. Long lines
// of mostly ASCII prose: the fold, the NFKC check and the tokenizer.
func BenchmarkTextPeers(b *testing.B) {
	path := cmp.Or(os.Getenv("WINNOW_PEERS_JSONL"), "/tmp/peers/llvm.jsonl")
	f, err := os.Open(path)
	if err != nil {
		b.Skip(err)
	}
	defer f.Close()
	var texts [][]byte
	var n int64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() && len(texts) < 200 {
		var r struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			b.Fatal(err)
		}
		texts = append(texts, []byte(r.Text))
		n += int64(len(r.Text))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range texts {
			if _, err := Text(t, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
