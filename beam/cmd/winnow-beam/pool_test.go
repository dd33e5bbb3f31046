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
			// Kill a worker in the middle of a task: the runner starts a
			// worker for a task and stops it when the task is done, and
			// a short task (Spark's) may end within the wait. A worker
			// the runner has already asked to stop is left alone, and a
			// kill counts only when the pool saw the worker end killed
			// with no stop asked of it before (a stop may cross the
			// kill: then the next worker is tried; such a kill fails no
			// task, so it uses none of the runner's retries).
			killed := make(chan string, 1)
			done := make(chan struct{})
			go func() {
				defer close(killed)
				started := regexp.MustCompile(`worker (\S+) started, pid (\d+)`)
				for tries := 0; tries < 3; {
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
					id := m[1]
					time.Sleep(500 * time.Millisecond)
					if pool := logged(); strings.Contains(pool, "worker "+id+": stop requested") || strings.Contains(pool, "worker "+id+" (pid") {
						continue // stopping or ended: not mid-task
					}
					var pid int
					fmt.Sscan(m[2], &pid)
					if syscall.Kill(pid, syscall.SIGKILL) != nil {
						continue
					}
					tries++
					if midTask(logged, id) {
						killed <- id
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
				t.Fatalf("no worker was killed in the middle of a task\n%s", logged())
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
// seconds) and reports whether it ended killed with no stop asked of it
// before: the kill, not the runner, ended it, in the middle of its task.
func midTask(logged func() string, id string) bool {
	for range 100 {
		pool := logged()
		if end := strings.Index(pool, "worker "+id+" (pid"); end >= 0 {
			line, _, _ := strings.Cut(pool[end:], "\n")
			return strings.Contains(line, "signal: killed") && !strings.Contains(pool[:end], "worker "+id+": stop requested")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}
