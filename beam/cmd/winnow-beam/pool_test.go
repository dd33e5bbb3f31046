package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/winnow-search/winnow/beam/internal/enginetest"
	"github.com/winnow-search/winnow/beam/internal/synth"
)

// startPool starts `winnow-beam worker-pool` on a free port and returns
// its address and a channel of its log lines; it is stopped at the end of
// the test.
func startPool(t *testing.T) (addr string, lines <-chan string, logged func() string) {
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
	return addr, ch, func() string { mu.Lock(); defer mu.Unlock(); return all.String() }
}

// TestWorkerKill: with every SDK harness a process of `winnow-beam
// worker-pool` (-environment_type EXTERNAL), a worker killed with SIGKILL
// in the middle of its task fails the task, the runner retries it on a
// new worker, and the output is still the bytes of the run on prism, on
// Flink (parallelism 2) and Spark. The batches are spilled (-spill auto).
// Without Java or Maven it is skipped, unless CI=true.
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
			addr, lines, logged := startPool(t)
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
			// Kill the first worker still running a while after it
			// started: it is in the middle of a task (the runner starts
			// a worker for a task and stops it when the task is done).
			killed := make(chan string, 1)
			done := make(chan struct{})
			go func() {
				defer close(killed)
				started := regexp.MustCompile(`worker (\S+) started, pid (\d+)`)
				for {
					var l string
					var ok bool
					select {
					case l, ok = <-lines:
					case <-done:
						return
					}
					if !ok {
						return
					}
					m := started.FindStringSubmatch(l)
					if m == nil {
						continue
					}
					time.Sleep(500 * time.Millisecond)
					var pid int
					fmt.Sscan(m[2], &pid)
					if syscall.Kill(pid, syscall.SIGKILL) == nil {
						killed <- m[1]
						return
					}
				}
			}()
			err := cmd.Wait()
			close(done)
			id := <-killed
			if err != nil {
				t.Fatalf("winnow-beam dedup on %s with a killed worker: %v\n%s\npool:\n%s", kind, err, tail(log.String()), tail(logged()))
			}
			if id == "" {
				t.Fatalf("no worker was killed\n%s", logged())
			}
			// The kill landed before the runner was done with the worker
			// (no stop was asked of it), so its task failed.
			pool := logged()
			end := strings.Index(pool, "worker "+id+" (pid")
			if end < 0 || !strings.Contains(pool[end:], "signal: killed") {
				t.Errorf("worker %s did not end killed:\n%s", id, pool)
			} else if strings.Contains(pool[:end], "worker "+id+": stop requested") {
				t.Errorf("worker %s was killed after the runner stopped it (the kill tested no retry):\n%s", id, pool)
			}
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
				t.Errorf("%s with a killed worker: %d bytes, winnow dedup %d, not the same", kind, len(got), len(w))
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
