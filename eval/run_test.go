package eval

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/corpus/sample"

	"github.com/winnow-search/winnow/similarity"
)

func TestDetectMode(t *testing.T) {
	tests := []struct {
		dir  string
		want Mode
	}{
		{"testdata/pairs", PairMode},
		{sampleCorpus(t), CorpusMode},
	}
	for _, tt := range tests {
		if got, err := DetectMode(tt.dir); got != tt.want || err != nil {
			t.Errorf("DetectMode(%q) = %v, %v; want %v", tt.dir, got, err, tt.want)
		}
	}
	if _, err := DetectMode(t.TempDir()); !errors.Is(err, ErrLayout) {
		t.Errorf("DetectMode(empty dir) error = %v, want ErrLayout", err)
	}
	// A missing path is not a folder of the wrong layout.
	missing := filepath.Join(t.TempDir(), "no-such-set")
	if _, err := DetectMode(missing); !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("DetectMode(missing path) error = %v, want one saying it does not exist", err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "pairs"), 0o755)
	os.WriteFile(filepath.Join(dir, "pairs.tsv"), []byte("subset\tpair\tdoc_a\tdoc_b\tlabel\nweb\tp1\ta\tb\tthree\n"), 0o644)
	if _, err := Load(dir); err == nil {
		t.Error("Load(label \"three\") = nil error")
	}
	os.WriteFile(filepath.Join(dir, "pairs.tsv"), []byte("subset\tpair\tdoc_a\tdoc_b\tlabel\nweb\tp1\ta\tb\t1\n"), 0o644)
	if _, err := Load(dir); err == nil {
		t.Error("Load(missing document files) = nil error")
	}
}

// runSet loads the labelled set in dir and runs the evaluation on it.
func runSet(t *testing.T, dir string, o Options) *Report {
	t.Helper()
	set, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), set, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestRunPairMode(t *testing.T) {
	rep := runSet(t, "testdata/pairs", Options{})
	if len(rep.Results) != 2 || rep.Results[0].Definition != "label >= 1" || rep.Results[1].Definition != "label = 3" {
		t.Fatalf("Run: results %+v, want label >= 1 and label = 3", rep.Results)
	}
	r := rep.Results[0]
	if r.Pairs != 4 || r.Positives != 2 {
		t.Errorf("label >= 1: %d pairs, %d positives; want 4, 2", r.Pairs, r.Positives)
	}
	// The edited copy and the re-templated copy are found, the unrelated
	// licences are not.
	if r.Default.TP != 2 || r.Default.FP != 0 {
		t.Errorf("default decision: %+v, want tp 2 fp 0", r.Default)
	}
	names := map[string]bool{}
	for _, m := range r.Methods {
		names[m.Name] = true
		if len(m.Curve) == 0 {
			t.Errorf("method %s has no curve", m.Name)
		}
	}
	for _, want := range []string{"simhash", "bloom", "supershingles", "jaccard", "lcs", "lcs-central"} {
		if !names[want] {
			t.Errorf("method %s missing", want)
		}
	}
	if rep.Results[1].Positives != 1 {
		t.Errorf("label = 3: %d positives, want 1", rep.Results[1].Positives)
	}
	// The mode decisions: the group decision finds both near-duplicates;
	// the remove decision accepts at most the content-equivalent one.
	if g := r.Decisions["group"]; g.TP != 2 || g.FP != 0 {
		t.Errorf("group decision, label >= 1: %+v, want tp 2 fp 0", g)
	}
	if rm := rep.Results[1].Decisions["remove"]; rm.FP != 0 {
		t.Errorf("remove decision, label = 3: %+v, want no false positive", rm)
	}
	if e := r.ECE["group"]; e != e || e < 0 || e > 1 {
		t.Errorf("group ECE = %g, want a number in [0, 1]", e)
	}
}

// sampleCorpus writes a corpus-mode set of five pages of the embedded
// sample (LLVM docs): two pages in releases 13 and 16, and one more.
func sampleCorpus(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	want := []string{"13/Benchmarking", "16/Benchmarking", "13/CodeReview", "16/CodeReview", "13/MarkedUpDisassembly"}
	bodies := map[string][]byte{}
	for d, err := range sample.Docs() {
		if err != nil {
			t.Fatal(err)
		}
		bodies[strings.TrimPrefix(d.ID, "sample://llvm/")] = d.Body
	}
	docs := "doc\tversion\tpage\tsource_words\n"
	for _, id := range want {
		p := filepath.Join(dir, "html", filepath.FromSlash(id)+".html")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bodies[id], 0o644); err != nil {
			t.Fatal(err)
		}
		docs += id + ".html\t-\t-\t0\n"
	}
	pairs := "doc_a\tdoc_b\tsource_ratio\tlabel\n13/Benchmarking.html\t16/Benchmarking.html\t1.0\tdup\n13/CodeReview.html\t16/CodeReview.html\t0.988\tdup\n"
	os.WriteFile(filepath.Join(dir, "docs.tsv"), []byte(docs), 0o644)
	os.WriteFile(filepath.Join(dir, "pairs.tsv"), []byte(pairs), 0o644)
	return dir
}

func TestRunCorpusMode(t *testing.T) {
	rep := runSet(t, sampleCorpus(t), Options{Decision: similarity.Decision{}})
	r := rep.Results[0]
	if r.Pairs != 10 || r.Positives != 2 {
		t.Errorf("corpus: %d pairs, %d positives; want 10 (5 docs), 2", r.Pairs, r.Positives)
	}
	if r.Default.F1 != 1 {
		t.Errorf("default decision on the same pages of two releases: %+v, want F1 1", r.Default)
	}
	if r.ClusterBCubed == nil || r.ClusterBCubed.F1 != 1 || r.ClusterPairs.F1 != 1 {
		t.Errorf("clusters: pairs %+v, B-cubed %+v; want F1 1", r.ClusterPairs, r.ClusterBCubed)
	}
}

func TestPlot(t *testing.T) {
	set, err := Load("testdata/pairs")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := Plot(rep, dir, "pairs", "jaccard", "simhash")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 7 {
		t.Fatalf("Plot wrote %v, want 2 PR charts, a histogram and 4 reliability diagrams", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || len(b) < 1000 || string(b[1:4]) != "PNG" {
			t.Errorf("%s: %d bytes, err %v; want a PNG", f, len(b), err)
		}
	}
	if _, err := Plot(rep, dir, "pairs", "cosine", "simhash"); err == nil {
		t.Error("Plot(unknown method) = nil error")
	}
}

func TestIncremental(t *testing.T) {
	set, err := Load(sampleCorpus(t))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := cluster.New(cluster.NewMemStore(), cluster.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Incremental(context.Background(), set, Options{}, svc)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Docs != 5 || rep.Incremental.F1 != 1 || rep.Batch.F1 != 1 || rep.RelErrPrecision != 0 || rep.RelErrRecall != 0 {
		t.Errorf("Incremental = %+v; want both clusterings perfect on the same pages of two releases", rep)
	}
	if len(rep.Steps) == 0 || rep.Steps[len(rep.Steps)-1].Docs != 5 {
		t.Errorf("growth steps %+v, want the last at 5 documents", rep.Steps)
	}
	if _, err := Incremental(context.Background(), &Set{Mode: PairMode}, Options{}, svc); err == nil {
		t.Error("Incremental(pair mode) = nil error")
	}
	// IDs that differ only after a "#" or in a tracking parameter are
	// different documents, though the service keys pages by canon.URL.
	for i := range set.Docs {
		set.Docs[i].ID = fmt.Sprintf("doc?utm_source=%d#%d", i, i)
	}
	svc, err = cluster.New(cluster.NewMemStore(), cluster.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err = Incremental(context.Background(), set, Options{}, svc); err != nil || rep.Incremental.F1 != 1 {
		t.Errorf("Incremental with IDs alike but for a fragment = %+v, %v; want F1 1", rep, err)
	}
}

// TestDecisionThreshold checks that each mode decision's figures carry
// its knob, the min_confidence (a paper method's threshold under a paper
// method), not 0.
func TestDecisionThreshold(t *testing.T) {
	mc := func(p similarity.Purpose, c string) similarity.Decision {
		t.Helper()
		d, err := similarity.ParseDecision(p, similarity.DecisionSettings{MinConfidence: c}, similarity.DecisionFields{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	tests := []struct {
		name          string
		o             Options
		group, remove float64
	}{
		{"defaults", Options{}, 0.68, 0.9},
		{"set", Options{Group: mc(similarity.PurposeGroup, "0.55"), Remove: mc(similarity.PurposeRemove, "0.8")}, 0.55, 0.8},
		{"paper method", Options{Group: similarity.SingleMethod(similarity.MethodLCS, 0.77), Remove: similarity.SingleMethod(similarity.MethodSimhash, 5)}, 0.77, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range runSet(t, "testdata/pairs", tt.o).Results {
				if got := r.Decisions["group"].Threshold; got != tt.group {
					t.Errorf("%s: group decision's threshold = %v, want %v", r.Definition, got, tt.group)
				}
				if got := r.Decisions["remove"].Threshold; got != tt.remove {
					t.Errorf("%s: remove decision's threshold = %v, want %v", r.Definition, got, tt.remove)
				}
			}
		})
	}
}

// TestPRMarksModeDecision checks that each definition's precision-recall
// chart marks the mode decision whose definition it is: the group
// decision for label >= 1 and dup, the remove decision for label = 3.
func TestPRMarksModeDecision(t *testing.T) {
	reps := map[string]*Report{"pairs": runSet(t, "testdata/pairs", Options{}), "corpus": runSet(t, sampleCorpus(t), Options{})}
	want := map[string]string{"label >= 1": "group", "label = 3": "remove", "dup": "group"}
	for name, rep := range reps {
		for _, r := range rep.Results {
			mode := want[r.Definition]
			if r.ModeDecision != mode {
				t.Errorf("%s, %s: ModeDecision %q, want %q", name, r.Definition, r.ModeDecision, mode)
			}
			pt, label := prMark(r)
			if pt != r.Decisions[mode] || !strings.HasPrefix(label, mode+" decision at min_confidence 0.") {
				t.Errorf("%s, %s: chart marks %+v as %q; want the %s decision's %+v, labelled as such", name, r.Definition, pt, label, mode, r.Decisions[mode])
			}
		}
	}
}

// TestConfidenceRowIsDecision checks that the confidence table at a mode
// decision's own min_confidence gives the decision's figures, also when
// pages were cut at the signing size cap, which the remove decision
// refuses whatever the probability (similarity.Verdict.Capped). The
// licence texts are 9 KB; signed with a 5,000-byte cap every page is cut.
func TestConfidenceRowIsDecision(t *testing.T) {
	remove, err := similarity.ParseDecision(similarity.PurposeRemove, similarity.DecisionSettings{MinConfidence: "0.7"}, similarity.DecisionFields{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	capped := Options{Remove: remove}
	capped.Signer.Signature.MaxBytes = 5000
	for _, tt := range []struct {
		name string
		o    Options
	}{{"uncapped", Options{Remove: remove}}, {"capped", capped}} {
		t.Run(tt.name, func(t *testing.T) {
			rep := runSet(t, "testdata/pairs", tt.o)
			refused := 0
			for _, sp := range rep.Scored {
				if sp.Remove.Refused && sp.Remove.Probability >= 0.7 {
					refused++
				}
			}
			if tt.name == "capped" && refused == 0 {
				t.Fatal("no capped pair reaches the remove decision's 0.7: the test checks nothing")
			}
			for _, r := range rep.Results {
				for mode, d := range r.Decisions {
					i := slices.Index(Confidences, d.Threshold)
					if i < 0 {
						t.Fatalf("%s decision at %v, not one of Confidences", mode, d.Threshold)
					}
					if got := r.Confidence[mode][i]; got != d {
						t.Errorf("%s, %s decision: confidence row at %v = %+v, want the decision's %+v", r.Definition, mode, d.Threshold, got, d)
					}
				}
			}
		})
	}
}
