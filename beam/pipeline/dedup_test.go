package pipeline

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"

	"github.com/winnow-search/winnow/beam/internal/enginetest"
	"github.com/winnow-search/winnow/beam/internal/synth"
	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/corpus"
)

// winnowBin is the winnow binary of the main module, built by TestMain.
var winnowBin string

func TestMain(m *testing.M) {
	flag.Parse()
	beam.Init()
	dir, err := os.MkdirTemp("", "winnow-beam-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	winnowBin = filepath.Join(dir, "winnow")
	build := exec.Command("go", "build", "-o", winnowBin, "./cmd/winnow")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building winnow: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// dedupOutput runs `winnow dedup` on inputs and returns its output.
func dedupOutput(t *testing.T, inputs ...string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "dedup.jsonl")
	args := append([]string{"-set", "dedup.progress=never", "dedup", "-o", out}, inputs...)
	cmd := exec.Command(winnowBin, args...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("winnow dedup: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// beamRun is one run of the pipeline.
type beamRun struct {
	runner string
	split  SplitOptions
	o      Options
}

// run runs the dedup pipeline on inputs and returns its output and stats.
func (r beamRun) run(t *testing.T, inputs ...string) ([]byte, Stats) {
	t.Helper()
	p, out := r.pipeline(t, inputs...)
	st, err := Run(context.Background(), r.runner, p)
	if err != nil {
		if r.runner == "flink" || r.runner == "spark" {
			t.Fatalf("pipeline on %s: %v\njob server:\n%s", r.runner, err, enginetest.LogTail(r.runner))
		}
		t.Fatalf("pipeline on %s: %v", r.runner, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b, st
}

// pipeline builds the dedup pipeline on inputs and returns it and the
// file it writes.
func (r beamRun) pipeline(t *testing.T, inputs ...string) (*beam.Pipeline, string) {
	t.Helper()
	shards, err := Split(inputs, r.split)
	if err != nil {
		t.Fatal(err)
	}
	o := r.o
	o.Config, o.Shards, o.Several = config.Default(), shards, len(inputs) > 1
	o.Output = filepath.Join(t.TempDir(), "beam.jsonl")
	p, s := beam.NewPipelineWithRoot()
	if err := Dedup(s, o); err != nil {
		t.Fatal(err)
	}
	return p, o.Output
}

// sameLines reports the first line where got and want differ.
func sameLines(t *testing.T, name string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			// From a little before the first byte that differs.
			at := 0
			for at < len(gl) && at < len(wl) && gl[at] == wl[at] {
				at++
			}
			from := max(at-60, 0)
			t.Errorf("%s: line %d of %d (winnow dedup has %d), from byte %d:\n got %.300s\nwant %.300s", name, i+1, len(g), len(w), from, gl[from:], wl[from:])
			return
		}
	}
}

// withProcs runs fn with GOMAXPROCS set to n: prism's workers run in this
// process, so this is the pipeline's parallelism.
func withProcs(n int, fn func()) {
	old := runtime.GOMAXPROCS(n)
	defer runtime.GOMAXPROCS(old)
	fn()
}

// TestDedupSample: on the embedded sample the pipeline writes the bytes
// `winnow dedup` writes, whatever the parallelism, the number of groups,
// whether buckets are expanded in blocks and whether the components are
// found in one grouping or in rounds.
func TestDedupSample(t *testing.T) {
	want := dedupOutput(t)
	for _, tc := range []struct {
		procs int
		r     beamRun
	}{
		{1, beamRun{runner: "prism"}},
		{2, beamRun{runner: "prism", o: Options{Packs: 1}}},
		{2, beamRun{runner: "prism", o: Options{Packs: 7, HotBucket: 2}}},
		{2, beamRun{runner: "prism", o: Options{SmallEdges: -1}}},
		{2, beamRun{runner: "prism", o: Options{Packs: 3, SmallEdges: -1, HotBucket: 2}}},
	} {
		name := fmt.Sprintf("procs=%d/packs=%d/hot=%d/small=%d", tc.procs, tc.r.o.Packs, tc.r.o.HotBucket, tc.r.o.SmallEdges)
		t.Run(name, func(t *testing.T) {
			withProcs(tc.procs, func() {
				got, st := tc.r.run(t)
				sameLines(t, name, got, want)
				if st.Docs != 53 || st.Clusters != 12 {
					t.Errorf("stats %+v, want 53 documents in 12 clusters", st)
				}
				// The sample's edges are a few KB: one grouping unless
				// the rounds are forced.
				if rounds := tc.r.o.SmallEdges < 0; rounds != (st.UnionNodes == 0) || rounds != (st.Rounds > 0) {
					t.Errorf("stats %+v: %d nodes labelled in one grouping, %d rounds", st, st.UnionNodes, st.Rounds)
				}
			})
		})
	}
}

// TestDedupSynthetic: 100 k synthetic pages with planted near-duplicates
// and a group of 5,000 identical pages (hot keys), read in ranges of a
// JSON Lines file. One run (about 5 minutes and 7 GB on prism here):
// TestDedupSample varies the parallelism.
func TestDedupSynthetic(t *testing.T) {
	if testing.Short() {
		t.Skip("100 k pages: minutes")
	}
	in := filepath.Join(t.TempDir(), "synth.jsonl")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := synth.Write(f, 100_000, synth.Options{Seed: 1, Hot: 5000}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	want := dedupOutput(t, in)
	got, st := beamRun{runner: "prism", split: SplitOptions{RangeBytes: 8 << 20}, o: Options{HotBucket: 1000}}.run(t, in)
	sameLines(t, "synthetic", got, want)
	if st.Docs != 100_000 || st.LargestBucket < 5000 || st.LargestUnit > 512 {
		t.Errorf("stats %+v, want 100000 documents, a bucket of 5000+ cut into blocks of at most 512", st)
	}
}

// TestDedupWARC: on wget's WARC (corpus testdata) the pipeline writes what
// `winnow dedup` writes and counts the 8 records that hold no page.
func TestDedupWARC(t *testing.T) {
	in := "../../corpus/testdata/wget.warc.gz"
	want := dedupOutput(t, in)
	got, st := beamRun{runner: "prism"}.run(t, in)
	sameLines(t, "warc", got, want)
	if st.Docs != 3 || st.Skipped != 8 || st.Clusters != 1 {
		t.Errorf("stats %+v, want 3 documents, 8 skipped, 1 cluster", st)
	}
}

// TestDedupLLVM compares on the LLVM documentation pages of
// ../shared/eval/llvm-docs (built by its build.py; WINNOW_LLVM_DOCS names
// the html folder, default /work/llvm-docs/html).
func TestDedupLLVM(t *testing.T) {
	dir := os.Getenv("WINNOW_LLVM_DOCS")
	if dir == "" {
		dir = "/work/llvm-docs/html"
	}
	if _, err := os.Stat(dir); err != nil || testing.Short() {
		t.Skipf("no llvm-docs pages at %s (build them with ../shared/eval/llvm-docs/build.py)", dir)
	}
	want := dedupOutput(t, dir)
	got, st := beamRun{runner: "prism", split: SplitOptions{FilesPerShard: 16}}.run(t, dir)
	sameLines(t, "llvm-docs", got, want)
	t.Logf("llvm-docs: %+v", st)
}

// TestUniversalRunner submits the pipeline through the portable runner to
// a prism job server started as a process of its own on loopback (the path
// a Flink or Spark job server takes); the workers run in this process
// (environment LOOPBACK).
func TestUniversalRunner(t *testing.T) {
	dir := t.TempDir()
	prism := filepath.Join(dir, "prism")
	build := exec.Command("go", "build", "-o", prism, "github.com/apache/beam/sdks/v2/go/cmd/prism")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building prism: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	server := exec.Command(prism, "--job_port", strconv.Itoa(port), "--serve_http=false")
	var log bytes.Buffer
	server.Stdout, server.Stderr = &log, &log
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		server.Process.Kill()
		server.Wait()
	}()
	endpoint := "127.0.0.1:" + strconv.Itoa(port)
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", endpoint)
		if err == nil {
			c.Close()
			break
		}
		if i == 600 {
			t.Fatalf("prism job server did not listen on %s: %v\n%s", endpoint, err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	oldEndpoint, oldEnv := *jobopts.Endpoint, *jobopts.EnvironmentType
	*jobopts.Endpoint, *jobopts.EnvironmentType = endpoint, "LOOPBACK"
	defer func() { *jobopts.Endpoint, *jobopts.EnvironmentType = oldEndpoint, oldEnv }()
	got, _ := beamRun{runner: "universal"}.run(t)
	sameLines(t, "universal", got, dedupOutput(t))
}

// TestSplitRanges: ranges of a JSON Lines file yield the documents, IDs
// (line numbers when a line has none) and errors of the whole file.
func TestSplitRanges(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		switch {
		case i%17 == 3:
			b.WriteString("not json\n")
		case i%11 == 5:
			b.WriteString("\n")
		case i%2 == 0:
			fmt.Fprintf(&b, "{\"text\": \"page %d without an id\"}\n", i)
		default:
			fmt.Fprintf(&b, "{\"id\": \"d%d\", \"text\": \"page %d\"}\n", i, i)
		}
	}
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	list := func(seq func(func(corpus.Doc, error) bool)) []string {
		var out []string
		for d, err := range seq {
			if err != nil {
				out = append(out, "error "+err.Error())
			} else {
				out = append(out, d.ID+" "+string(d.Body))
			}
		}
		return out
	}
	want := list(corpus.Options{}.Open(path))
	shards, err := Split([]string{path}, SplitOptions{RangeBytes: 300})
	if err != nil {
		t.Fatal(err)
	}
	if len(shards) < 10 {
		t.Fatalf("%d shards, want 10 or more", len(shards))
	}
	var got []string
	for _, sh := range shards {
		got = append(got, list(sh.Docs(config.Default(), corpus.Options{}))...)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("documents of the ranges:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDedupNoDuplicates: on pages none of which is near another (corpus's
// testdata folder) the pipeline writes an empty output file, as `winnow
// dedup` does. It wrote none: the write step ran only for some part file,
// and winnow-beam failed reading back its output.
func TestDedupNoDuplicates(t *testing.T) {
	in := "../../corpus/testdata/dir"
	if want := dedupOutput(t, in); len(want) != 0 {
		t.Fatalf("winnow dedup found near-duplicates in %s:\n%s", in, want)
	}
	got, st := beamRun{runner: "prism"}.run(t, in)
	if len(got) != 0 || st.Docs == 0 {
		t.Errorf("output %q, stats %+v; want an empty file of some documents", got, st)
	}
}
