package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/eval"
)

// winnow runs the command line in-process and returns its exit code,
// stdout and stderr.
func winnow(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb, nil)
	return code, out.String(), errb.String()
}

// samplePages writes the embedded sample's pages into dir as
// <release>/<page>.html and returns their paths by sample ID.
func samplePages(t testing.TB, dir string) map[string]string {
	t.Helper()
	paths := map[string]string{}
	for d, err := range sample.Docs() {
		if err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(d.ID, "sample://llvm/") + ".html"
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, d.Body, 0o644); err != nil {
			t.Fatal(err)
		}
		paths[d.ID] = p
	}
	return paths
}

type clusterOut struct {
	ID      string `json:"id"`
	Size    int    `json:"size"`
	Winner  struct{ ID string }
	Members []struct {
		ID, Relation, Explain string
		Probability           *float64
		Removable             bool
		RemoveProbability     *float64 `json:"remove_probability"`
	}
}

func parseClusters(t *testing.T, s string) []clusterOut {
	t.Helper()
	var cs []clusterOut
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c clusterOut
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("output line %q is not JSON: %v", sc.Text(), err)
		}
		cs = append(cs, c)
	}
	return cs
}

func TestDedupSample(t *testing.T) {
	code, out, errs := winnow(t, "", "dedup")
	if code != 0 {
		t.Fatalf("winnow dedup = exit %d, stderr %s", code, errs)
	}
	cs := parseClusters(t, out)
	removable := 0
	// 12 pages appear in 3 to 5 releases each (see corpus/sample).
	if len(cs) < 11 || len(cs) > 13 {
		t.Errorf("winnow dedup: %d clusters, want about 12", len(cs))
	}
	for _, c := range cs {
		page := func(id string) string {
			_, p, _ := strings.Cut(strings.TrimPrefix(id, "sample://llvm/"), "/")
			return p
		}
		for _, m := range c.Members {
			if page(m.ID) != page(c.Winner.ID) {
				t.Errorf("cluster %s groups %s with %s: different pages", c.ID, m.ID, c.Winner.ID)
			}
		}
		if c.Members[0].Relation != "winner" || c.Size != len(c.Members) {
			t.Errorf("cluster %s: first member %q, size %d of %d members", c.ID, c.Members[0].Relation, c.Size, len(c.Members))
		}
		if len(c.Members) > 1 && !strings.HasPrefix(c.Members[1].Explain, "duplicate: ") {
			t.Errorf("cluster %s: member explanation %q", c.ID, c.Members[1].Explain)
		}
		for _, m := range c.Members[1:] {
			if m.Probability == nil || *m.Probability < 0.7 || m.RemoveProbability == nil || m.Removable != (*m.RemoveProbability >= 0.9) {
				t.Errorf("cluster %s member %s: probability %v, removable %v at %v; want >= 0.7 and removable exactly from 0.9", c.ID, m.ID, m.Probability, m.Removable, m.RemoveProbability)
			}
			if m.Removable {
				removable++
			}
		}
	}
	if removable == 0 {
		t.Error("winnow dedup: no member removable, though most releases of a page are the same text")
	}
	if !strings.Contains(errs, "53 documents") {
		t.Errorf("summary on stderr = %q, want 53 documents", errs)
	}
	// The summary says what to do next: how many duplicates may be
	// deleted, the same count as the lines' removable flags.
	if want := fmt.Sprintf("%d of the ", removable); !strings.Contains(errs, want+"") || !strings.Contains(errs, "duplicates are removable") || !strings.Contains(errs, `"removable": true`) {
		t.Errorf("summary on stderr = %q, want %q… duplicates are removable and how to find them", errs, want)
	}
	// Stable IDs: a second run gives the same output.
	if _, again, _ := winnow(t, "", "dedup"); again != out {
		t.Error("winnow dedup output differs between two runs")
	}
}

// warcRecord returns one gzip member holding a WARC response record.
func warcRecord(t *testing.T, uri string, html []byte, cut int) []byte {
	t.Helper()
	payload := append([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"), html...)
	var rec bytes.Buffer
	fmt.Fprintf(&rec, "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:%08x-0000-4000-8000-000000000000>\r\n"+
		"WARC-Target-URI: %s\r\nWARC-Date: 2026-11-22T00:00:00Z\r\nContent-Type: application/http; msgtype=response\r\n"+
		"Content-Length: %d\r\n\r\n", len(uri)*7919, uri, len(payload))
	rec.Write(payload)
	rec.WriteString("\r\n\r\n")
	b := rec.Bytes()
	if cut > 0 {
		b = b[:len(b)-cut]
	}
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(b)
	w.Close()
	return z.Bytes()
}

func TestDedupBadInput(t *testing.T) {
	dir := t.TempDir()
	pages := samplePages(t, filepath.Join(dir, "pages"))
	bad := filepath.Join(dir, "pages", "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat("<div>", 10000) + "deep text " + strings.Repeat("</div>", 10000)
	huge := make([]byte, 50<<20)
	for i := range huge {
		huge[i] = "lorem ipsum dolor sit amet <p>"[i%30]
	}
	files := map[string][]byte{
		"binary.html":  {0x89, 'P', 'N', 'G', 0, 0, 0, 0x0d, 'I', 'H', 'D', 'R', 0, 1, 2, 3},
		"invalid.html": []byte("<p>caf\xe9 \xff\xfe broken utf-8 \xc3\x28 text</p>"),
		"empty.html":   nil,
		"deep.html":    []byte(deep),
		"huge.html":    huge,
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(bad, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A WARC whose second record is truncated: the first and the third
	// still count.
	var warc []byte
	ids := []string{"sample://llvm/13/Benchmarking", "sample://llvm/14/Benchmarking", "sample://llvm/15/Benchmarking"}
	for i, id := range ids {
		body, err := os.ReadFile(pages[id])
		if err != nil {
			t.Fatal(err)
		}
		cut := 0
		if i == 1 {
			cut = 500
		}
		warc = append(warc, warcRecord(t, "https://example.org/"+id, body, cut)...)
	}
	warcPath := filepath.Join(dir, "crawl.warc.gz")
	if err := os.WriteFile(warcPath, warc, 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errs := winnow(t, "", "-set", "dedup.progress=never", "dedup", filepath.Join(dir, "pages"), warcPath)
	if code != 0 {
		t.Fatalf("winnow dedup = exit %d, stderr %s", code, errs)
	}
	for _, want := range []string{"binary.html", "huge.html", "truncated", "1 cut at the size cap", "2 skipped with errors"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr does not report %s:\n%s", want, errs)
		}
	}
	cs := parseClusters(t, out)
	var warcCluster *clusterOut
	for i, c := range cs {
		for _, m := range c.Members {
			if strings.HasPrefix(m.ID, "<urn:uuid:") {
				warcCluster = &cs[i]
			}
		}
	}
	if warcCluster == nil {
		t.Fatalf("no cluster holds the WARC records; output:\n%s", out)
	}
	n := 0
	for _, m := range warcCluster.Members {
		if strings.HasPrefix(m.ID, "<urn:uuid:") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("the Benchmarking cluster holds %d WARC records, want 2 (the truncated one skipped)", n)
	}
}

func TestSigAndCompare(t *testing.T) {
	dir := t.TempDir()
	pages := samplePages(t, dir)
	a, b := pages["sample://llvm/13/Benchmarking"], pages["sample://llvm/22/Benchmarking"]
	code, out, errs := winnow(t, "", "sig", "-json", a)
	if code != 0 {
		t.Fatalf("winnow sig = exit %d: %s", code, errs)
	}
	var v sigView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("winnow sig -json: %v\n%s", err, out)
	}
	if v.Tokens < 100 || len(v.MinHash) != 84 || len(v.Supershingles) != 6 || v.EncodedBytes == 0 || v.EncodedBytes > 600 {
		t.Errorf("winnow sig: tokens %d, %d min-hashes, %d supershingles, %d bytes encoded", v.Tokens, len(v.MinHash), len(v.Supershingles), v.EncodedBytes)
	}
	code, out, errs = winnow(t, "", "compare", a, b)
	if code != 0 || !strings.Contains(out, "group    duplicate") || !strings.Contains(out, "why      duplicate: ") {
		t.Errorf("winnow compare (same page, two releases) = exit %d:\n%s%s", code, out, errs)
	}
	// The two releases are near-duplicates, not content-equivalent: the
	// remove decision's probability is the pair's (the whole alignment),
	// not the bound the proxy's early exit would leave.
	code, out, _ = winnow(t, "", "compare", "-json", a, b)
	var rc struct {
		Remove struct {
			Duplicate   bool
			Probability *float64
			Explain     string
		}
	}
	if err := json.Unmarshal([]byte(out), &rc); err != nil || code != 0 || rc.Remove.Duplicate || rc.Remove.Probability == nil ||
		strings.Contains(rc.Remove.Explain, ") <= ") || !strings.Contains(rc.Remove.Explain, "lcs_gap") {
		t.Errorf("winnow compare -json (two releases) = exit %d, remove %+v, %v; want a rejection at the pair's probability, explained", code, rc.Remove, err)
	}
	other := pages["sample://llvm/13/CommandGuide/llvm-as"]
	code, out, _ = winnow(t, "", "compare", "-json", a, other)
	var c struct {
		Duplicate bool
		Explain   string
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil || code != 1 || c.Duplicate || !strings.HasPrefix(c.Explain, "not duplicate: ") {
		t.Errorf("winnow compare (different pages) = exit %d, %+v, %v; want exit 1, as cmp answers no", code, c, err)
	}
	// Pages by URL, fetched as winnow serve fetches: SSRF-safe, so a
	// loopback server is refused (exit 2) until serve.fetch.allow opens it.
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Dir(filepath.Dir(a)))))
	defer srv.Close()
	rel := func(p string) string {
		r, _ := filepath.Rel(filepath.Dir(filepath.Dir(a)), p)
		return srv.URL + "/" + filepath.ToSlash(r)
	}
	if code, _, errs := winnow(t, "", "compare", rel(a), rel(b)); code != 2 || !strings.Contains(errs, "refused by SSRF guard") || !strings.Contains(errs, "-set serve.fetch.allow=") {
		t.Errorf("winnow compare of loopback URLs without serve.fetch.allow = exit %d %q, want 2 (SSRF guard) naming the setting that opens it", code, errs)
	}
	if code, out, errs := winnow(t, "", "-set", "serve.fetch.allow=127.0.0.0/8", "compare", rel(a), rel(b)); code != 0 || !strings.Contains(out, "group    duplicate") {
		t.Errorf("winnow compare of two URLs = exit %d:\n%s%s", code, out, errs)
	}
	// Text from stdin.
	code, out, _ = winnow(t, "just a few words", "sig", "-")
	if code != 0 || !strings.Contains(out, "never matches") {
		t.Errorf("winnow sig - (tiny text) = exit %d:\n%s", code, out)
	}
}

func TestUsageErrors(t *testing.T) {
	// A page that cannot be signed: the error names which file.
	bin := filepath.Join(t.TempDir(), "photo.html")
	if err := os.WriteFile(bin, []byte{0x89, 'P', 'N', 'G', 0, 0, 0, 0x0d, 'I', 'H', 'D', 'R'}, 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(t.TempDir(), "page.txt")
	if err := os.WriteFile(text, []byte("a page of plain text"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage: winnow"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"compare", "one"}, 2, "compare takes two pages"},
		{[]string{"-set", "decision.method=cosine", "dedup"}, 2, "decision.method"},
		{[]string{"sig", "/nonexistent/page.html"}, 1, "no such file"},
		{[]string{"eval", "/nonexistent"}, 1, "eval: /nonexistent does not exist"},
		{[]string{"eval", t.TempDir()}, 1, "folder holds neither"},
		{[]string{"compare", text, bin}, 2, bin + ": page: canon: input is binary"},
		{[]string{"compare", text, "/nonexistent/b.html"}, 2, "no such file"},
		{[]string{"sig", bin}, 1, bin + ": page: canon: input is binary"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, errs := winnow(t, "", tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.want) {
				t.Errorf("winnow %v = exit %d, stderr %q; want exit %d mentioning %q", tt.args, code, errs, tt.code, tt.want)
			}
		})
	}
}

func TestEval(t *testing.T) {
	dir := t.TempDir()
	pages := samplePages(t, filepath.Join(dir, "html"))
	var docs, pairs strings.Builder
	docs.WriteString("doc\trelease\tpage\twords\n")
	pairs.WriteString("doc_a\tdoc_b\tsource_ratio\tlabel\n")
	rel := func(id string) string { return strings.TrimPrefix(id, "sample://llvm/") + ".html" }
	ids := []string{"sample://llvm/13/Benchmarking", "sample://llvm/14/Benchmarking", "sample://llvm/13/CodeReview", "sample://llvm/16/CodeReview", "sample://llvm/13/FaultMaps"}
	for _, id := range ids {
		if _, ok := pages[id]; !ok {
			t.Fatalf("sample lacks %s", id)
		}
		fmt.Fprintf(&docs, "%s\t-\t-\t0\n", rel(id))
	}
	fmt.Fprintf(&pairs, "%s\t%s\t1.0\tdup\n%s\t%s\t1.0\tdup\n", rel(ids[0]), rel(ids[1]), rel(ids[2]), rel(ids[3]))
	os.WriteFile(filepath.Join(dir, "docs.tsv"), []byte(docs.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "pairs.tsv"), []byte(pairs.String()), 0o644)
	// Only the listed pages belong to the set.
	plots := filepath.Join(t.TempDir(), "plots")
	scores := filepath.Join(t.TempDir(), "scores.tsv")
	code, out, errs := winnow(t, "", "eval", "-json", "-plots", plots, "-scores", scores, dir)
	if code != 0 {
		t.Fatalf("winnow eval = exit %d: %s", code, errs)
	}
	var rep struct {
		Mode    string
		Default struct{ Precision, Recall, F1 float64 }
		Results []struct {
			Decisions map[string]struct{ Threshold, Precision, Recall, F1 float64 }
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("winnow eval -json: %v\n%s", err, out)
	}
	for _, r := range rep.Results {
		if g, rm := r.Decisions["group"].Threshold, r.Decisions["remove"].Threshold; g != 0.68 || rm != 0.9 {
			t.Errorf("winnow eval -json: decisions' thresholds %v (group), %v (remove); want their min_confidence 0.68, 0.9", g, rm)
		}
	}
	if rep.Mode != "corpus" || rep.Default.F1 != 1 {
		t.Errorf("winnow eval: mode %q, default %+v; want corpus mode and F1 1", rep.Mode, rep.Default)
	}
	if len(rep.Results) != 1 || rep.Results[0].Decisions["group"].F1 != 1 || rep.Results[0].Decisions["remove"].Precision != 1 {
		t.Errorf("winnow eval: results %+v; want the group decision's F1 1 and the remove decision's precision 1 under \"decisions\"", rep.Results)
	}
	b, err := os.ReadFile(scores)
	if err != nil || strings.Count(string(b), "\n") != 11 {
		t.Errorf("scores file: %d lines, err %v; want a header and 10 pairs", strings.Count(string(b), "\n"), err)
	}
	// Every line has the header's columns, and the named ones stand where
	// the header says.
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	header := strings.Split(lines[0], "\t")
	for _, col := range []string{"label", "lcs", "divergence", "page_divergence", "bag", "verdict", "p_group", "p_remove"} {
		if !slices.Contains(header, col) {
			t.Errorf("scores header %q has no column %q", lines[0], col)
		}
	}
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if len(f) != len(header) {
			t.Errorf("scores line %q: %d columns, header %d", l, len(f), len(header))
			continue
		}
		if v := f[slices.Index(header, "verdict")]; v != "true" && v != "false" {
			t.Errorf("scores line %q: verdict %q, want true or false", l, v)
		}
		// The mode decisions' probabilities: every pair of these pages
		// has one (a model decision), in [0, 1].
		for _, col := range []string{"p_group", "p_remove"} {
			if i := slices.Index(header, col); i >= 0 {
				if p, err := strconv.ParseFloat(f[i], 64); err != nil || !(p >= 0 && p <= 1) {
					t.Errorf("scores line %q: %s %q, want a probability", l, col, f[i])
				}
			}
		}
	}
	// Under a paper method the decisions give no probability: NaN.
	if code, _, errs := winnow(t, "", "-set", "decision.method=lcs", "eval", "-scores", scores, dir); code != 0 {
		t.Fatalf("winnow -set decision.method=lcs eval -scores = exit %d: %s", code, errs)
	}
	b, _ = os.ReadFile(scores)
	lines = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		for _, col := range []string{"p_group", "p_remove"} {
			if i := slices.Index(header, col); i < 0 || i >= len(f) || f[i] != "NaN" {
				t.Errorf("decision.method=lcs: scores line %q: %s is not NaN", l, col)
			}
		}
	}
	if m, _ := filepath.Glob(filepath.Join(plots, "*.png")); len(m) != 4 {
		t.Errorf("plots: %v, want a PR chart, a histogram and the two mode decisions' reliability diagrams", m)
	}
	// The thresholds follow -set.
	code, out, errs = winnow(t, "", "-set", "decision.min_confidence.group=0.55", "-set", "decision.min_confidence.remove=0.8", "eval", "-json", dir)
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("winnow -set ... eval -json = exit %d, %v: %s", code, err, errs)
	}
	if g, rm := rep.Results[0].Decisions["group"].Threshold, rep.Results[0].Decisions["remove"].Threshold; g != 0.55 || rm != 0.8 {
		t.Errorf("winnow -set ... eval -json: decisions' thresholds %v (group), %v (remove); want 0.55, 0.8 as set", g, rm)
	}
	code, out, _ = winnow(t, "", "eval", dir)
	if code != 0 || !strings.Contains(out, "winnow         decision: default") || !strings.Contains(out, "B-cubed") {
		t.Errorf("winnow eval (text) = exit %d:\n%s", code, out)
	}

	// The held-out protocol: thresholds chosen on one set, applied to
	// another of the same definition; a set of the other mode shares none.
	code, out, errs = winnow(t, "", "eval", "-json", "-thresholds-from", dir, dir)
	var tr struct {
		Results []struct {
			ThresholdsFrom string `json:"thresholds_from"`
			Methods        []struct {
				Name        string
				Best        struct{ Threshold, F1 float64 }
				Transferred *struct{ Threshold, F1 float64 }
			}
			Confidence           map[string][]struct{ Threshold, F1 float64 }
			DecisionsTransferred map[string]struct{ Threshold, F1 float64 } `json:"decisions_transferred"`
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &tr) != nil || len(tr.Results) != 1 || tr.Results[0].ThresholdsFrom != dir {
		t.Fatalf("winnow eval -thresholds-from = exit %d: %s%s", code, errs, out)
	}
	for _, m := range tr.Results[0].Methods {
		if m.Transferred == nil || m.Transferred.Threshold != m.Best.Threshold || m.Transferred.F1 != m.Best.F1 {
			t.Errorf("%s: transferred %+v, want its own best %+v (the same set)", m.Name, m.Transferred, m.Best)
		}
	}
	for _, mode := range []string{"group", "remove"} {
		// The same set: the transferred confidence is its own F1-best one.
		best := 0.0
		for _, p := range tr.Results[0].Confidence[mode] {
			best = max(best, p.F1)
		}
		got, ok := tr.Results[0].DecisionsTransferred[mode]
		if !ok || got.F1 != best || got.Threshold < 0.3 || got.Threshold > 0.98 {
			t.Errorf("%s decision: transferred %+v (present %v), want the set's own best F1 %v at one of its confidences", mode, got, ok, best)
		}
	}
	code, out, _ = winnow(t, "", "eval", "-thresholds-from", dir, dir)
	if code != 0 || !strings.Contains(out, ", chosen on "+filepath.Base(dir)) || len(regexp.MustCompile(`at min_confidence 0\.\d\d, chosen on `).FindAllString(out, -1)) != 2 {
		t.Errorf("winnow eval -thresholds-from (text) = exit %d, want the methods' and both decisions' transferred rows:\n%s", code, out)
	}
	code, _, errs = winnow(t, "", "eval", "-thresholds-from", filepath.Join("..", "..", "eval", "testdata", "pairs"), dir)
	if code != 1 || !strings.Contains(errs, "shares no definition") {
		t.Errorf("thresholds from a pair set onto a corpus = exit %d, stderr %q; want exit 1 naming the mismatch", code, errs)
	}
}

// TestEvalCVSeeds runs the cross-validation under two seeds and applies
// the selection rule across them.
func TestEvalCVSeeds(t *testing.T) {
	pairs := filepath.Join("..", "..", "eval", "testdata", "pairs")
	code, out, errs := winnow(t, "", "eval", "-cv", "-json", "-folds", "2", "-repeats", "2", "-seeds", "2", pairs)
	if code != 0 {
		t.Fatalf("eval -cv -seeds 2 = exit %d: %s", code, errs)
	}
	var rep struct {
		Seed     uint64 `json:"seed"`
		Selected []struct {
			Truth, Candidate string
		} `json:"selected"`
		Across *struct {
			Seeds    []uint64          `json:"seeds"`
			PerSeed  [][]any           `json:"per_seed"`
			Selected []json.RawMessage `json:"selected"`
		} `json:"across_seeds"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("eval -cv -seeds 2 -json: %v", err)
	}
	if rep.Across == nil || !slices.Equal(rep.Across.Seeds, []uint64{0, 1}) || len(rep.Across.PerSeed) != 2 || len(rep.Across.Selected) != len(rep.Selected) || len(rep.Selected) == 0 {
		t.Errorf("eval -cv -seeds 2: seed %d, %d selections, across %+v; want seeds 0 and 1 with one selection per truth", rep.Seed, len(rep.Selected), rep.Across)
	}
	code, out, _ = winnow(t, "", "eval", "-cv", "-folds", "2", "-repeats", "2", "-seeds", "2", pairs)
	if code != 0 || !strings.Contains(out, "the selection rule across seeds [0 1]") || !strings.Contains(out, "the tables below are seed 0's, one of seeds [0 1]") {
		t.Errorf("eval -cv -seeds 2 (text) = exit %d, want the tables' seed named and the selection across seeds printed:\n%s", code, out)
	}
	if code, _, errs := winnow(t, "", "eval", "-cv", "-seeds", "0", pairs); code != 2 || !strings.Contains(errs, "-seeds") {
		t.Errorf("eval -cv -seeds 0 = exit %d, stderr %q; want a usage error naming -seeds", code, errs)
	}
}

// TestEvalCVCompare pairs two cross-validations written by eval -cv -json:
// the same run twice changes nothing; other folds cannot be paired.
func TestEvalCVCompare(t *testing.T) {
	pairs := filepath.Join("..", "..", "eval", "testdata", "pairs")
	dir := t.TempDir()
	cv := func(name string, args ...string) string {
		t.Helper()
		args = append(append([]string{"eval", "-cv", "-json"}, args...), pairs)
		code, out, errs := winnow(t, "", args...)
		if code != 0 {
			t.Fatalf("winnow %v = exit %d: %s", args, code, errs)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := cv("a.json", "-folds", "2", "-repeats", "2"), cv("b.json", "-folds", "2", "-repeats", "2")
	code, out, errs := winnow(t, "", "eval", "-cv", "-compare", "-json", a, b)
	var ds []struct {
		Candidate string  `json:"candidate"`
		Folds     int     `json:"folds"`
		DeltaF1   float64 `json:"delta_f1"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &ds) != nil || len(ds) == 0 {
		t.Fatalf("eval -cv -compare -json = exit %d: %s%s", code, errs, out)
	}
	for _, d := range ds {
		if d.DeltaF1 != 0 || d.Folds != 4 {
			t.Errorf("%s: ΔF1 %v over %d folds, want 0 over 4 (the same run twice)", d.Candidate, d.DeltaF1, d.Folds)
		}
	}
	code, out, _ = winnow(t, "", "eval", "-cv", "-compare", a, b)
	if code != 0 || !strings.Contains(out, "after minus before") || !strings.Contains(out, "  lcs ") || strings.Contains(out, "*\n") {
		t.Errorf("eval -cv -compare (text) = exit %d:\n%s", code, out)
	}
	c := cv("c.json", "-folds", "3", "-repeats", "2")
	if code, _, errs := winnow(t, "", "eval", "-cv", "-compare", a, c); code != 1 || !strings.Contains(errs, "other folds") {
		t.Errorf("compare 2x2 with 2x3 folds = exit %d, stderr %q; want exit 1 naming the folds", code, errs)
	}
	if code, _, errs := winnow(t, "", "eval", "-cv", "-compare", a, pairs+"/pairs.tsv"); code != 1 || !strings.Contains(errs, "not the JSON") {
		t.Errorf("compare with a TSV = exit %d, stderr %q; want exit 1", code, errs)
	}
	for _, args := range [][]string{{"eval", "-compare", a, b}, {"eval", "-cv", "-compare", a}} {
		if code, _, errs := winnow(t, "", args...); code != 2 || !strings.Contains(errs, "two files") {
			t.Errorf("winnow %v = exit %d, stderr %q; want a usage error", args, code, errs)
		}
	}
}

func TestReport(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "balance.png")
	code, out, errs := winnow(t, "", "-set", "dedup.progress=never", "report", "balance", "-plot", png)
	if code != 0 || !strings.Contains(out, "53 documents") || !strings.Contains(out, "imbalance") {
		t.Fatalf("report balance = exit %d:\n%s%s", code, out, errs)
	}
	if b, err := os.ReadFile(png); err != nil || string(b[1:4]) != "PNG" {
		t.Errorf("balance plot: %v", err)
	}
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	winnow(t, "", "dedup", "-o", a)
	winnow(t, "", "-set", "decision.method=simhash", "dedup", "-o", b)
	code, out, errs = winnow(t, "", "report", "evolution", a, b)
	if code != 0 || !strings.Contains(out, "phi") || strings.Count(out, "\n") < 2 {
		t.Errorf("report evolution = exit %d:\n%s%s", code, out, errs)
	}
	if code, _, errs = winnow(t, "", "report", "mirrors", filepath.Join(dir, "missing.jsonl")); code != 1 {
		t.Errorf("report mirrors (missing file) = exit %d: %s", code, errs)
	}
}

// TestEnvironTypo: a WINNOW_ variable of a config section that names no
// key stops winnow at start-up, naming it (exit 2, as a bad -set does).
func TestEnvironTypo(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"sig", "-"}, strings.NewReader("<p>a page</p>"), &out, &errb,
		[]string{"WINNOW_DECISION_MIN_CONFIDENCE=0.99", "WINNOW_LLVM_DOCS=/tmp/llvm-docs"})
	if code != 2 || !strings.Contains(errb.String(), "WINNOW_DECISION_MIN_CONFIDENCE") || strings.Contains(errb.String(), "WINNOW_LLVM_DOCS") {
		t.Errorf("run with WINNOW_DECISION_MIN_CONFIDENCE set: exit %d, stderr %q; want 2 naming it alone", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"sig", "-"}, strings.NewReader("<p>a page</p>"), &out, &errb,
		[]string{"WINNOW_LLVM_DOCS=/tmp/llvm-docs", "WINNOW_DECISION_MIN_CONFIDENCE_GROUP=0.8"}); code != 0 {
		t.Errorf("run with known and foreign WINNOW_ variables: exit %d, stderr %q; want 0", code, errb.String())
	}
}

// TestEvalBound runs eval -bound on the test pairs: one figure per
// truth, the floor read on the first set, and the ratio alone never
// better than the widest search (it is one of its rules).
func TestEvalBound(t *testing.T) {
	pairs := filepath.Join("..", "..", "eval", "testdata", "pairs")
	code, out, errs := winnow(t, "", "eval", "-bound", "-json", pairs)
	if code != 0 {
		t.Fatalf("eval -bound -json = exit %d: %s", code, errs)
	}
	var figs []eval.BoundFigure
	if err := json.Unmarshal([]byte(out), &figs); err != nil {
		t.Fatalf("eval -bound -json: %v\n%s", err, out)
	}
	if len(figs) != len(eval.Truths()) {
		t.Fatalf("%d figures, want one per truth: %s", len(figs), out)
	}
	for _, f := range figs {
		if f.FloorSet != "pairs" || f.Floor != eval.PrecisionFloor || f.Free.F1+1e-12 < f.Ratio.F1 || f.Ratio.F1 == 0 {
			t.Errorf("%s: floor %v on %q, free F1 %v, ratio %+v; want the web floor on the only set and the ratio within the search", f.Truth, f.Floor, f.FloorSet, f.Free.F1, f.Ratio)
		}
	}
	code, out, errs = winnow(t, "", "eval", "-bound", "-cuts", "-json", pairs)
	var withCuts struct {
		Bounds []eval.BoundFigure `json:"bounds"`
		Cuts   []eval.BoundCut    `json:"cuts"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &withCuts) != nil || len(withCuts.Bounds) != len(figs) || len(withCuts.Cuts) == 0 {
		t.Errorf("eval -bound -cuts -json = exit %d (%s), want the bounds and a figure per score:\n%s", code, errs, out)
	}
	code, out, _ = winnow(t, "", "eval", "-bound", pairs)
	if code != 0 || !strings.Contains(out, "label >= 1") || !strings.Contains(out, "rule beats ratio") {
		t.Errorf("eval -bound (text) = exit %d:\n%s", code, out)
	}
	if code, _, errs := winnow(t, "", "eval", "-bound", "-cv", pairs); code != 2 || !strings.Contains(errs, "-bound") {
		t.Errorf("eval -bound -cv = exit %d, stderr %q; want a usage error naming -bound", code, errs)
	}
	if code, _, errs := winnow(t, "", "eval", "-cuts", pairs); code != 2 || !strings.Contains(errs, "-bound") {
		t.Errorf("eval -cuts without -bound = exit %d, stderr %q; want a usage error naming -bound", code, errs)
	}
}
