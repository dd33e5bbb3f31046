package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/winnow-search/winnow/beam/internal/synth"
	"github.com/winnow-search/winnow/beam/pipeline"
)

// beamBin is the winnow-beam binary, built by TestMain.
var beamBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "winnow-beam-cmd")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	beamBin = filepath.Join(dir, "winnow-beam")
	if out, err := exec.Command("go", "build", "-o", beamBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building winnow-beam: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestUnknownRunner: a runner name that does not exist is an error naming
// the choices, on both subcommands.
func TestUnknownRunner(t *testing.T) {
	for _, args := range [][]string{{"dedup", "-runner", "flnk"}, {"assign", "-groups", "x", "-runner", "flnk"}} {
		out, err := exec.Command(beamBin, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), `unknown runner "flnk": one of prism, universal, flink, spark, dataflow`) {
			t.Errorf("winnow-beam %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestMissingOutputFolder: an output in a folder that does not exist is
// an error naming that folder, not the -spill flag the operator left at
// its default (it read "-spill: stat ...").
func TestMissingOutputFolder(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-folder")
	out, err := exec.Command(beamBin, "dedup", "-o", filepath.Join(missing, "out.jsonl"), "../../../corpus/testdata/pages.jsonl").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "the output's folder "+missing) || strings.Contains(string(out), "-spill") {
		t.Errorf("winnow-beam dedup -o %s/out.jsonl: %v\n%s", missing, err, out)
	}
}

// TestProcessEnvironment: -environment_type PROCESS, which the Go SDK
// cannot build, is an error that says so and names the alternatives.
func TestProcessEnvironment(t *testing.T) {
	out, err := exec.Command(beamBin, "dedup", "-runner", "flink", "-endpoint", "127.0.0.1:1",
		"-environment_type", "PROCESS", "-environment_config", `{"command": "`+beamBin+`"}`, "-o", filepath.Join(t.TempDir(), "out")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "cannot build a PROCESS environment") || !strings.Contains(string(out), "LOOPBACK") {
		t.Errorf("winnow-beam -environment_type PROCESS: %v\n%s", err, out)
	}
}

// TestInterrupt: SIGINT or SIGTERM mid-run stops winnow-beam within a
// second with a non-zero exit and leaves no file under the output's name
// and no signature store beside it.
func TestInterrupt(t *testing.T) {
	// 20 k synthetic pages, so that the run has spilled batches and
	// signatures to leave behind.
	pages := filepath.Join(t.TempDir(), "synth.jsonl")
	f, err := os.Create(pages)
	if err != nil {
		t.Fatal(err)
	}
	if err := synth.Write(f, 20_000, synth.Options{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.jsonl")
			cmd := exec.Command(beamBin, "dedup", "-o", out, pages)
			// The write step holds its task until the signal, so the
			// signal lands mid-run however fast the machine.
			hold := t.TempDir()
			cmd.Env = append(os.Environ(), pipeline.HoldOnceEnv+"="+hold)
			var log bytes.Buffer
			cmd.Stdout, cmd.Stderr = &log, &log
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
				if _, err := os.Stat(filepath.Join(hold, "write.pid")); err == nil {
					break
				}
				if time.Since(start) > 5*time.Minute {
					cmd.Process.Kill()
					t.Fatalf("the run did not reach its write step in 5 minutes\n%s", log.String())
				}
			}
			sent := time.Now()
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			took := time.Since(sent)
			if err == nil {
				t.Errorf("exit 0 after %v\n%s", sig, log.String())
			}
			// Bound loose enough for a loaded machine; the stop is
			// immediate (it exits 0.5 s after the signal at most).
			if took > 5*time.Second {
				t.Errorf("stopped %v after the signal", took)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s exists after an interrupted run", out)
			}
			// The signature store beside the output goes with the run.
			if left, _ := filepath.Glob(out + ".spill-*"); len(left) > 0 {
				t.Errorf("left after an interrupted run: %v", left)
			}
		})
	}
}

// TestRunnerLogs: by default a prism run prints winnow-beam's summary and
// the pipeline's warnings (a skipped record), not Beam's and prism's
// progress (the submitted pipeline as text, the job's states); -v
// prints those too.
func TestRunnerLogs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	lines := `{"id":"a","text":"the quick brown fox jumps over the lazy dog near the river bank"}` + "\n" +
		`{"id":"b","text":` + "\n" +
		`{"id":"c","text":"the quick brown fox jumps over the lazy dog near the river bank"}` + "\n"
	if err := os.WriteFile(in, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		var stderr bytes.Buffer
		cmd := exec.Command(beamBin, append(append([]string{"dedup"}, args...), "-o", filepath.Join(dir, "out.jsonl"), in)...)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("winnow-beam dedup %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stderr.String()
	}
	quiet := run()
	for _, want := range []string{"winnow-beam dedup: 2 documents", "1 skipped with errors", "dedup_skip", "line 2", "1 clusters holding 1 duplicates"} {
		if !strings.Contains(quiet, want) {
			t.Errorf("stderr without -v lacks %q:\n%s", want, quiet)
		}
	}
	for _, noise := range []string{"components:{transforms", "state: RUNNING", "Submitted job", "INFO"} {
		if strings.Contains(quiet, noise) {
			t.Errorf("stderr without -v holds %q (%d bytes in all)", noise, len(quiet))
		}
	}
	if verbose := run("-v"); !strings.Contains(verbose, "state: DONE") || !strings.Contains(verbose, "winnow-beam dedup: 2 documents") {
		t.Errorf("stderr with -v lacks the job's states or the summary:\n%.2000s", verbose)
	}
}

// TestAssignSummary: assign says what it read and what it decided,
// writes the heap profile -memprofile asks for, and fails on an input
// without a page, as dedup does.
func TestAssignSummary(t *testing.T) {
	dir := t.TempDir()
	groups := filepath.Join(dir, "groups.jsonl")
	in := filepath.Join(dir, "in.jsonl")
	bad := filepath.Join(dir, "bad.jsonl")
	page := `{"id":"a","text":"the quick brown fox jumps over the lazy dog near the river bank"}` + "\n"
	for name, data := range map[string]string{groups: "", in: page + `{"id":"b","text":` + "\n" + strings.Replace(page, `"a"`, `"c"`, 1), bad: `{"id":"b","text":` + "\n"} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prof := filepath.Join(dir, "heap.prof")
	out, err := exec.Command(beamBin, "assign", "-groups", groups, "-memprofile", prof, "-o", filepath.Join(dir, "out.jsonl"), in).CombinedOutput()
	if err != nil {
		t.Fatalf("winnow-beam assign: %v\n%s", err, out)
	}
	for _, want := range []string{"winnow-beam assign: 2 documents", "1 skipped with errors", "pairs decided among the pages that joined no group", "peak heap"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("-memprofile wrote no profile: %v", err)
	}
	out, err = exec.Command(beamBin, "assign", "-groups", groups, "-o", filepath.Join(dir, "out2.jsonl"), bad).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "nothing could be read") {
		t.Errorf("winnow-beam assign on an input without a page: %v\n%s", err, out)
	}
}
