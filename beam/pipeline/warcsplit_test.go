package pipeline

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/corpus"
	"github.com/winnow-search/winnow/internal/crawltest"
)

// wgetCrawls crawls a loopback site of real pages (LLVM documentation of
// corpus's testdata) twice with Debian's wget: the second crawl stores the
// unchanged pages as revisit records of the first's, in another file.
func wgetCrawls(t *testing.T) (first, second string) {
	t.Helper()
	pages := map[string][]byte{}
	for doc, err := range corpus.Dir("../../corpus/testdata/dir") {
		if err != nil {
			t.Fatal(err)
		}
		if doc.ContentType == "text/html" {
			pages["docs/"+doc.ID] = doc.Body
		}
	}
	site := crawltest.NewSite(t, pages)
	dir := t.TempDir()
	first = crawltest.Crawl(t, site, dir, "first", true, "")
	second = crawltest.Crawl(t, site, dir, "second", false, filepath.Join(dir, "first.cdx"))
	return first, second
}

// gunzip writes the decompressed copy of the gzip file src to dst.
func gunzip(t *testing.T, src, dst string) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
}

// readAll lists what o yields from the shards (or one pass over the
// inputs when shards is nil): documents, skips and errors, in order.
func readAll(t *testing.T, inputs []string, shards []Shard, o corpus.Options) []string {
	t.Helper()
	var out []string
	o.OnSkip = func(s corpus.Skip) { out = append(out, fmt.Sprintf("skip %s %s %d", s.Kind, s.ID, s.Offset)) }
	add := func(d corpus.Doc, err error) {
		if err != nil {
			out = append(out, "error "+err.Error())
			return
		}
		out = append(out, fmt.Sprintf("doc %s %s %s %d bytes", d.ID, d.URL, d.ContentType, len(d.Body)))
	}
	if shards == nil {
		for _, in := range inputs {
			for d, err := range o.Open(in) {
				add(d, err)
			}
		}
		return out
	}
	for _, sh := range shards {
		for d, err := range sh.Docs(config.Default(), o) {
			add(d, err)
		}
	}
	return out
}

// TestSplitWARC: WARC files written by wget, gzip'ed record by record and
// decompressed, cut into record ranges, yield the records, skips and
// offsets of one pass over the files; the second crawl's revisits resolve
// to the first crawl's records, in another file and another range, as one
// pass with shared targets resolves them.
func TestSplitWARC(t *testing.T) {
	first, second := wgetCrawls(t)
	dir := t.TempDir()
	plainFirst, plainSecond := filepath.Join(dir, "first.warc"), filepath.Join(dir, "second.warc")
	gunzip(t, first, plainFirst)
	gunzip(t, second, plainSecond)
	for _, inputs := range [][]string{
		{"../../corpus/testdata/wget.warc.gz"},
		{first, second},
		{plainFirst, plainSecond},
	} {
		name := filepath.Base(inputs[0])
		t.Run(name, func(t *testing.T) {
			want := readAll(t, inputs, nil, corpus.Options{Targets: &corpus.Targets{}})
			shards, err := Split(inputs, SplitOptions{RangeBytes: 1500})
			if err != nil {
				t.Fatal(err)
			}
			if len(shards) < 4*len(inputs) {
				t.Fatalf("%d shards of %d files, want at least 4 a file", len(shards), len(inputs))
			}
			targets := &corpus.Targets{}
			for _, p := range warcInputs(shards) {
				if err := targets.Index(p); err != nil {
					t.Fatal(err)
				}
			}
			got := readAll(t, inputs, shards, corpus.Options{Targets: targets})
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("records of the ranges:\n%s\nwant (one pass):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			docs, revisits := 0, 0
			for _, l := range want {
				if strings.HasPrefix(l, "doc ") {
					docs++
				}
				if strings.Contains(l, "revisit") {
					revisits++
				}
			}
			if docs == 0 || revisits != 0 {
				t.Errorf("one pass: %d documents, %d unresolved revisits; want documents, every revisit resolved", docs, revisits)
			}
		})
	}
}

// TestDedupWARCRevisits: on two wget crawls whose second stores revisits
// of the first, the pipeline (whole files, and record ranges) writes what
// `winnow dedup` writes.
func TestDedupWARCRevisits(t *testing.T) {
	first, second := wgetCrawls(t)
	want := dedupOutput(t, first, second)
	for _, split := range []SplitOptions{{}, {RangeBytes: 1500}} {
		t.Run(fmt.Sprint("range=", split.RangeBytes), func(t *testing.T) {
			got, st := beamRun{runner: "prism", split: split, o: Options{Packs: 7}}.run(t, first, second)
			sameLines(t, "revisits", got, want)
			if st.Clusters == 0 {
				t.Errorf("stats %+v, want clusters of the second crawl's revisits with the first's pages", st)
			}
		})
	}
}

// TestDedupNonUTF8Names: inputs whose paths are not UTF-8 (Latin-1
// names of a mirror, as wget writes them from a Latin-1 server) are read
// as `winnow dedup` reads them: WARC files in a folder so named,
// revisiting each other, and a folder holding a folder so named. The
// shards and the WARC paths crossed the runner as JSON, which made each
// bad byte U+FFFD: the WARC files could not be opened; and a folder was
// listed and read with os.DirFS, which refuses such names: the files
// under one were left out without a word.
func TestDedupNonUTF8Names(t *testing.T) {
	first, second := wgetCrawls(t)
	root := t.TempDir()
	dir := filepath.Join(root, "docs")
	for _, sub := range []string{"a", "r\xe9f"} {
		if err := os.CopyFS(filepath.Join(dir, sub), os.DirFS("../../corpus/testdata/dir")); err != nil {
			t.Fatal(err)
		}
	}
	crawls := filepath.Join(root, "cr\xe9")
	if err := os.MkdirAll(crawls, 0o755); err != nil {
		t.Fatal(err)
	}
	var inputs []string
	for _, src := range []string{first, second} {
		dst := filepath.Join(crawls, "\xe9t\xe9-"+filepath.Base(src))
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, dst)
	}
	inputs = append(inputs, dir)
	want := dedupOutput(t, inputs...)
	got, st := beamRun{runner: "prism"}.run(t, inputs...)
	sameLines(t, "non-UTF-8 names", got, want)
	if st.Clusters == 0 {
		t.Errorf("stats %+v, want clusters of the second crawl's revisits with the first's pages", st)
	}
}
