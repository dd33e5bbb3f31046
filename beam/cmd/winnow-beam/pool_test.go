package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/winnow-search/winnow/beam/internal/enginetest"
	"github.com/winnow-search/winnow/beam/internal/synth"
	"github.com/winnow-search/winnow/beam/pipeline"
)

// startPool starts `winnow-beam worker-pool` on a free port and returns
// its address and its log so far; it is stopped at the end of the test.
func startPool(t *testing.T) (addr string, logged func() string) {
	t.Helper()
	cmd := exec.Command(beamBin, "worker-pool", "-addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := make(chan string, 1000)
	var mu sync.Mutex
	var all strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			all.WriteString(sc.Text() + "\n")
			mu.Unlock()
			select {
			case ch <- sc.Text():
			default:
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		<-done
	})
	listening := regexp.MustCompile(`listening on (\S+)`)
	select {
	case l := <-ch:
		if m := listening.FindStringSubmatch(l); m != nil {
			addr = m[1]
		}
	case <-time.After(time.Minute):
	}
	if addr == "" {
		t.Fatal("winnow-beam worker-pool did not say where it listens")
	}
	return addr, func() string { mu.Lock(); defer mu.Unlock(); return all.String() }
}

// TestWorkerKill: with every SDK harness a process of `winnow-beam
// worker-pool` (-environment_type EXTERNAL), a worker killed with SIGKILL
// in the middle of its task fails the task, the runner retries it on a
// new worker, and the output is still the bytes of the run on prism, on
// Flink (parallelism 2) and Spark. The batches are spilled (-spill auto).
// The first attempt of the write step holds its task until it is killed
// (pipeline.HoldOnceEnv), so the kill lands mid-task however short the
// runner's tasks are. Without Java or Maven it is skipped, unless CI=true.
func TestWorkerKill(t *testing.T) {
	pages := synthPages(t, 20_000)
	// The reference: the same pipeline on prism, in-process, whose output
	// the pipeline's tests hold byte for byte to `winnow dedup`'s.
	want := filepath.Join(t.TempDir(), "prism.jsonl")
	if out, err := exec.Command(beamBin, "dedup", "-o", want, pages).CombinedOutput(); err != nil {
		t.Fatalf("winnow-beam dedup on prism: %v\n%s", err, out)
	}
	for _, kind := range []string{"flink", "spark"} {
		t.Run(kind, func(t *testing.T) {
			endpoint := enginetest.Endpoint(t, kind)
			hold := t.TempDir()
			t.Setenv(pipeline.HoldOnceEnv, hold) // the pool's workers inherit it
			addr, logged := startPool(t)
			out := filepath.Join(t.TempDir(), "out.jsonl")
			args := []string{"dedup", "-runner", kind, "-endpoint", endpoint,
				"-environment_type", "EXTERNAL", "-environment_config", addr, "-o", out}
			if kind == "flink" {
				args = append(args, "-parallelism", "2")
			}
			args = append(args, pages) // flags end at the first argument
			cmd := exec.Command(beamBin, args...)
			var log bytes.Buffer
			cmd.Stdout, cmd.Stderr = &log, &log
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Kill the worker that holds the write step's first attempt,
			// once it says which it is.
			killed := make(chan string, 1)
			done := make(chan struct{})
			go func() {
				defer close(killed)
				for {
					select {
					case <-done:
						return
					case <-time.After(100 * time.Millisecond):
					}
					b, err := os.ReadFile(filepath.Join(hold, "write.pid"))
					if err != nil {
						continue
					}
					var pid int
					fmt.Sscan(string(b), &pid)
					pool := logged()
					m := regexp.MustCompile(`worker (\S+) started, pid ` + strconv.Itoa(pid) + `\n`).FindStringSubmatch(pool)
					if m != nil && syscall.Kill(pid, syscall.SIGKILL) == nil && midTask(logged, m[1], len(pool)) {
						killed <- m[1]
						return
					}
					// Not a worker of the pool, or not ended by the kill:
					// the run would wait out the hold.
					cmd.Process.Kill()
					return
				}
			}()
			err := cmd.Wait()
			close(done)
			id := <-killed
			if id == "" {
				held, _ := os.ReadFile(filepath.Join(hold, "write.pid"))
				t.Fatalf("no worker was killed in the middle of a task (the write step held by pid %q; run: %v)\nrun:\n%s\npool:\n%s\n%s job server:\n%s", held, err, tail(log.String()), tail(logged()), kind, enginetest.LogTail(kind))
			}
			if err != nil {
				t.Fatalf("winnow-beam dedup on %s with a killed worker: %v\n%s\npool:\n%s\n%s job server:\n%s", kind, err, tail(log.String()), tail(logged()), kind, enginetest.LogTail(kind))
			}
			pool := logged()
			t.Logf("%s: worker %s killed mid-task; the pool started %d workers in all", kind, id, strings.Count(pool, " started, pid "))
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			w, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, w) {
				t.Errorf("%s with a killed worker: %d bytes, prism %d, not the same", kind, len(got), len(w))
			}
			if spills, _ := filepath.Glob(out + ".spill-*"); len(spills) > 0 {
				t.Errorf("spill directories left: %v", spills)
			}
		})
	}
}

// tail returns the last lines of a log.
func tail(s string) string {
	if len(s) > 4000 {
		return "..." + s[len(s)-4000:]
	}
	return s
}

// synthPages writes n synthetic pages (seed 1) and returns the file.
func synthPages(t *testing.T, n int) string {
	t.Helper()
	pages := filepath.Join(t.TempDir(), "synth.jsonl")
	f, err := os.Create(pages)
	if err != nil {
		t.Fatal(err)
	}
	if err := synth.Write(f, n, synth.Options{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return pages
}

// midTask waits until the pool logs worker id's end (at most ten
// seconds) and reports whether the kill ended it, in the middle of its
// task: it ended killed, and no stop was asked of it in the pool's log
// before the kill (the first killedAt bytes). A stop asked after the kill
// is the runner's answer to the broken connection, and under load the
// pool may log it before the worker's end.
func midTask(logged func() string, id string, killedAt int) bool {
	for range 100 {
		pool := logged()
		if end := strings.Index(pool, "worker "+id+" (pid"); end >= 0 {
			line, _, _ := strings.Cut(pool[end:], "\n")
			return strings.Contains(line, "signal: killed") && !strings.Contains(pool[:killedAt], "worker "+id+": stop requested")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}
