package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/internal/crawltest"
	"github.com/winnow-search/winnow/offline"
)

// crawlSample crawls the sample's releases with wget, one site and one
// WARC file per group of releases, as two crawls of two documentation
// packages would be, and returns the WARC paths and the sites.
func crawlSample(t *testing.T, groups ...[]string) ([]string, []*crawltest.Site) {
	t.Helper()
	dir := t.TempDir()
	var warcs []string
	var sites []*crawltest.Site
	for i, releases := range groups {
		pages := map[string][]byte{}
		for d, err := range sample.Docs() {
			if err != nil {
				t.Fatal(err)
			}
			rel := strings.TrimPrefix(d.ID, "sample://llvm/")
			for _, r := range releases {
				if strings.HasPrefix(rel, r+"/") {
					pages[rel+".html"] = d.Body
				}
			}
		}
		site := crawltest.NewSite(t, pages)
		warcs = append(warcs, crawltest.Crawl(t, site, dir, fmt.Sprintf("crawl%d", i+1), false, ""))
		sites = append(sites, site)
	}
	return warcs, sites
}

// TestDedupWgetCrawl clusters two crawls that wget wrote: no record but a
// page is clustered, the releases of each page are grouped across the
// crawls, and the same crawls load into the cluster service without error.
func TestDedupWgetCrawl(t *testing.T) {
	warcs, sites := crawlSample(t, []string{"13", "14", "15"}, []string{"16", "19", "22"})
	code, out, errs := winnow(t, "", append([]string{"-set", "dedup.progress=never", "dedup"}, warcs...)...)
	if code != 0 {
		t.Fatalf("winnow dedup = exit %d, stderr %s", code, errs)
	}
	if !strings.Contains(errs, fmt.Sprintf("%d documents", sample.Count+4)) { // + 2 index pages + 2 redirect targets
		t.Errorf("stderr: want %d documents (the sample, two index pages, the redirect targets):\n%s", sample.Count+4, errs)
	}
	for _, want := range []string{"items hold no page and were skipped", "warcinfo 2", "resource metadata: 4", "response 301 2", "media image/png 2"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr does not report %q:\n%s", want, errs)
		}
	}
	type member struct{ ID, URL, Relation string }
	var line struct {
		Members    []member
		WinnerRule string `json:"winner_rule"`
	}
	grouped := map[string]map[string]bool{} // page -> releases in its cluster
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("output line %q: %v", l, err)
		}
		// Winners by rule, not by random record UUID: the URLs differ in
		// length or, at one length, in order; only two captures of one URL
		// (the redirect's target) fall back to the key.
		sameURL := len(line.Members) > 1 && line.Members[0].URL == line.Members[1].URL
		if line.WinnerRule != "shorter" && line.WinnerRule != "url" && !(sameURL && line.WinnerRule == "key") {
			t.Errorf("cluster of %s: winner rule %q, want shorter or url", line.Members[0].URL, line.WinnerRule)
		}
		page := ""
		for _, m := range line.Members {
			path := m.URL
			for _, s := range sites {
				path = strings.TrimPrefix(path, s.URL+"/")
			}
			release, p, ok := strings.Cut(path, "/")
			if !ok || !strings.HasSuffix(p, ".html") || !strings.HasPrefix(m.ID, "<urn:uuid:") {
				t.Errorf("cluster member %+v is no page of the crawled sites", m)
				continue
			}
			if page == "" {
				page = p
			} else if p != page {
				t.Errorf("a cluster groups %s with %s", p, page)
			}
			if len(line.Members) > 1 {
				if grouped[p] == nil {
					grouped[p] = map[string]bool{}
				}
				grouped[p][release] = true
			}
		}
	}
	// Benchmarking.html is in releases 13, 14, 15, 16 and 22, CodeReview.html
	// in 13, 16, 19 and 22: each is one cluster that spans both crawls.
	for page, n := range map[string]int{"Benchmarking.html": 5, "CodeReview.html": 4} {
		if len(grouped[page]) != n {
			t.Errorf("%s: clustered releases %v, want %d", page, grouped[page], n)
		}
	}

	// The same crawls load into the cluster service: nothing refused.
	base, stop := startClusterService(t, "-set", "cluster.store=memory")
	code, _, errs = winnow(t, "", append([]string{"-set", "dedup.progress=never", "dedup", "-o", os.DevNull, "-cluster", base}, warcs...)...)
	if code != 0 || !strings.Contains(errs, "loaded into") || strings.Contains(errs, "refused") || strings.Contains(errs, "not an absolute") {
		t.Fatalf("winnow dedup -cluster = exit %d: %s", code, errs)
	}
	cl, err := client.New(base, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cl.Lookup(context.Background(), []string{sites[0].URL + "/13/Benchmarking.html", sites[1].URL + "/22/Benchmarking.html"})
	if err != nil || len(res) != 2 || !res[0].Known || res[0].Group == "" || res[0].Group != res[1].Group {
		t.Errorf("lookup after loading the crawls: %+v, %v; want both releases in one group", res, err)
	}
	// Signed with other settings, the same crawls are refused: the
	// service recorded the first load's signer.
	other := []string{"-set", "dedup.progress=never", "-set", "signature.shingle_words=4"}
	code, _, errs = winnow(t, "", append(append(other, "dedup", "-o", os.DevNull, "-cluster", base), warcs...)...)
	if code == 0 || !strings.Contains(errs, "409") || !strings.Contains(errs, "signed with settings") {
		t.Errorf("winnow dedup -cluster with other signature settings = exit %d: %s; want a 409 refusal", code, errs)
	}
	if c, errs := stop(); c != 0 {
		t.Errorf("winnow cluster exit %d: %s", c, errs)
	}
}

// TestDedupExitStatus: a run fails only when nothing could be read or
// every input failed, and a flood of bad lines is summarised.
func TestDedupExitStatus(t *testing.T) {
	dir := t.TempDir()
	var flood strings.Builder
	for i := range 500 {
		fmt.Fprintf(&flood, "{\"id\": %d, broken\n", i)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(flood.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// A folder of binary pages: every document read, none signed.
	binDir := filepath.Join(dir, "binary")
	if err := os.Mkdir(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.html", "b.html"} {
		if err := os.WriteFile(filepath.Join(binDir, name), []byte("\x00\x01\x02 not text \x00"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Not a WARC: the input opens, and every record of it fails.
	garbage := filepath.Join(dir, "garbage.warc")
	if err := os.WriteFile(garbage, []byte("not a warc at all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.jsonl")
	if err := os.WriteFile(good, []byte(`{"id": "a", "text": "one small page of text that is long enough"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		inputs []string
		code   int
	}{
		{"every input failed", []string{bad, garbage}, 1},
		{"one input not a WARC", []string{garbage, good}, 0},
		{"one input read", []string{bad, good}, 0},
		{"empty input", []string{filepath.Join(dir, "empty.jsonl")}, 1},
		{"every document binary", []string{binDir}, 1},
		{"binary documents beside a good one", []string{binDir, good}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.WriteFile(filepath.Join(dir, "empty.jsonl"), nil, 0o644)
			code, _, errs := winnow(t, "", append([]string{"-set", "dedup.progress=never", "dedup", "-o", os.DevNull}, tt.inputs...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, errs)
			}
			if n := strings.Count(errs, "dedup_skip"); n > maxWarnings+1 {
				t.Errorf("%d warning lines for 500 bad lines, want at most %d", n, maxWarnings+1)
			}
			if slices := strings.Contains(errs, "bad JSON line 500"); !slices && strings.Contains(strings.Join(tt.inputs, " "), "bad.jsonl") {
				t.Errorf("summary does not count the 500 bad lines:\n%s", errs)
			}
		})
	}
}

// TestDedupMissingInput: an input path that does not exist stops the run
// before anything is read, naming it, and leaves no output file.
func TestDedupMissingInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	if err := os.WriteFile(good, []byte(`{"id": "a", "text": "one small page of text that is long enough"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "typo.jsonl")
	out := filepath.Join(dir, "out.jsonl")
	code, _, errs := winnow(t, "", "-set", "dedup.progress=never", "dedup", "-o", out, good, missing)
	if code != 1 || !strings.Contains(errs, missing+": no such file or directory") || !strings.Contains(errs, "nothing was read") {
		t.Errorf("exit %d, want 1 naming %s; stderr:\n%s", code, missing, errs)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("output %s after a refused run: %v", out, err)
	}
}

// TestDedupWinnerRules: the winner of a cluster is elected by the cluster
// service's rules, and the output says which rule decided.
func TestDedupWinnerRules(t *testing.T) {
	var page []byte
	for d, err := range sample.Docs() {
		if err == nil && d.ID == "sample://llvm/13/Benchmarking" {
			page = d.Body
		}
	}
	html, _ := json.Marshal(string(page))
	line := func(id, url string, pop float64) string {
		return fmt.Sprintf(`{"id": %q, "url": %q, "html": %s, "popularity": %g}`, id, url, html, pop)
	}
	for _, tt := range []struct {
		name         string
		records      []string
		winner, rule string
		set          []string
	}{
		{name: "https", records: []string{line("a", "http://docs.example/b", 0), line("c", "https://docs.example/bench", 0)},
			winner: "c", rule: "https"},
		{name: "shorter", records: []string{line("a", "http://docs.example/b", 0), line("b", "https://docs.example/bench?x=1", 0), line("c", "https://docs.example/bench", 0)},
			winner: "c", rule: "shorter"}, // against the best of the rest
		{name: "popularity", records: []string{line("a", "http://docs.example/b", 3), line("b", "https://docs.example/bench?x=1", 0), line("c", "https://docs.example/bench", 1)},
			winner: "a", rule: "popularity"},
		{name: "static", records: []string{line("a", "https://docs.example/a?x", 0), line("b", "https://docs.example/abc", 0)},
			winner: "b", rule: "static"},
		{name: "market", records: []string{line("a", "https://docs.example.de/b", 0), line("b", "https://docs.example.uk/b", 0)},
			winner: "b", rule: "market", set: []string{"-set", "dedup.winner.market_tlds=.uk"}},
		{name: "order", records: []string{line("a", "http://docs.example/b", 0), line("c", "https://docs.example/bench", 0)},
			winner: "a", rule: "shorter", set: []string{"-set", "dedup.winner.rules=shorter,https"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := filepath.Join(t.TempDir(), "pages.jsonl")
			if err := os.WriteFile(in, []byte(strings.Join(tt.records, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append(append([]string{"-set", "dedup.progress=never"}, tt.set...), "dedup", in)
			code, out, errs := winnow(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var c struct {
				Winner     struct{ ID string }
				WinnerRule string `json:"winner_rule"`
				Size       int
			}
			if err := json.Unmarshal([]byte(out), &c); err != nil {
				t.Fatalf("output %q: %v", out, err)
			}
			if c.Size != len(tt.records) || c.Winner.ID != tt.winner || c.WinnerRule != tt.rule {
				t.Errorf("cluster of %d, winner %s by %q; want %d, %s by %q", c.Size, c.Winner.ID, c.WinnerRule, len(tt.records), tt.winner, tt.rule)
			}
		})
	}
}

// TestDedupParquet clusters the Parquet file DuckDB wrote (corpus
// testdata): the three releases of llvm-link form one cluster, whose
// winner the rules elect: 13 and 22 tie on popularity (2), 22 is https.
func TestDedupParquet(t *testing.T) {
	code, out, errs := winnow(t, "", "-set", "dedup.progress=never", "dedup", filepath.Join("..", "..", "corpus", "testdata", "pages.parquet"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var c struct {
		Winner     struct{ ID, URL string }
		WinnerRule string `json:"winner_rule"`
		Size       int
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if c.Size != 3 || c.Winner.URL != "https://example.org/22/llvm-link.html" || c.WinnerRule != "https" {
		t.Errorf("cluster of %d won by %s by %q; want 3, the https page of release 22 by https", c.Size, c.Winner.URL, c.WinnerRule)
	}
	if !strings.Contains(errs, "4 documents") {
		t.Errorf("stderr: want 4 documents:\n%s", errs)
	}
}

// TestDedupRepeatedIDs: three records share one ID, each a copy of a
// different page; each copy's cluster is won by the repeat (keys x, x#1,
// x#2 sort before y*), so the three cluster IDs are the hashes of x, x#1
// and x#2: distinct (the third occurrence once got x#1 again).
func TestDedupRepeatedIDs(t *testing.T) {
	pages := map[string][]byte{}
	for d, err := range sample.Docs() {
		if err == nil {
			pages[d.ID] = d.Body
		}
	}
	var lines []string
	for _, id := range []string{"x", "x", "x", "y1", "y2", "y3"} {
		name := []string{"Benchmarking", "CodeReview", "FaultMaps"}[len(lines)%3]
		html, _ := json.Marshal(string(pages["sample://llvm/13/"+name]))
		lines = append(lines, fmt.Sprintf(`{"id": %q, "html": %s}`, id, html))
	}
	in := filepath.Join(t.TempDir(), "pages.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := winnow(t, "", "-set", "dedup.progress=never", "dedup", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var ids []string
	for _, c := range parseClusters(t, out) {
		ids = append(ids, c.ID)
	}
	var want []string
	for _, k := range []string{"x", "x#1", "x#2"} {
		want = append(want, fmt.Sprintf("%016x", offline.ClusterID(k)))
	}
	slices.Sort(ids)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("cluster IDs %v, want %v (the hashes of x, x#1, x#2)", ids, want)
	}
}

// TestDedupRepeatedIDsInInputOrder: records sharing one ID get their
// occurrence numbers (x, x#1, x#2) in input order, whatever order the
// workers finish signing them in. The first x is a page twenty times the
// size of the others, so with two workers the later ones are signed
// first; each x is copied under its own ID (y1, y2, y3), and the cluster
// of the copy yN must carry the ID of the Nth occurrence of x.
func TestDedupRepeatedIDsInInputOrder(t *testing.T) {
	pages := map[string][]byte{}
	for d, err := range sample.Docs() {
		if err == nil {
			pages[d.ID] = d.Body
		}
	}
	bodies := [][]byte{
		bytes.Repeat(pages["sample://llvm/22/CommandGuide/llvm-ir2vec"], 20),
		pages["sample://llvm/13/GettingStartedTutorials"],
		pages["sample://llvm/15/AMDGPU/gfx7_vaddr_e9b690"],
	}
	var lines []string
	for _, id := range []string{"x", "x", "x", "y1", "y2", "y3"} {
		html, _ := json.Marshal(string(bodies[len(lines)%3]))
		lines = append(lines, fmt.Sprintf(`{"id": %q, "html": %s}`, id, html))
	}
	in := filepath.Join(t.TempDir(), "pages.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"y1": fmt.Sprintf("%016x", offline.ClusterID("x")),
		"y2": fmt.Sprintf("%016x", offline.ClusterID("x#1")),
		"y3": fmt.Sprintf("%016x", offline.ClusterID("x#2")),
	}
	for run := range 3 {
		code, out, errs := winnow(t, "", "-set", "dedup.progress=never", "-set", "dedup.workers=2", "dedup", in)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		got := map[string]string{}
		for _, c := range parseClusters(t, out) {
			for _, m := range c.Members {
				if strings.HasPrefix(m.ID, "y") {
					got[m.ID] = c.ID
				}
			}
		}
		if !maps.Equal(got, want) {
			t.Fatalf("run %d: cluster ID by copy %v, want %v (occurrences numbered in input order)", run, got, want)
		}
	}
}
