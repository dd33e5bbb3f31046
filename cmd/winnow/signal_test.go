package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildWinnow builds the command into a temporary directory: signals are
// tested on the real process.
func buildWinnow(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "winnow")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// waitFor polls cond every 10 ms until it holds or the bound passes.
func waitFor(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(bound); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s not seen in %v", what, bound)
}

// catchesSignals reports whether the process pid has installed its own
// handler of SIGINT and SIGTERM (/proc/PID/status SigCgt).
func catchesSignals(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if hex, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			var mask uint64
			for _, c := range strings.TrimSpace(hex) {
				mask = mask<<4 | uint64(strings.IndexRune("0123456789abcdef", c))
			}
			return mask&(1<<(syscall.SIGINT-1)) != 0 && mask&(1<<(syscall.SIGTERM-1)) != 0
		}
	}
	return false
}

// wchanShown reports whether the kernel shows where a thread sleeps: a
// thread of this process sleeps somewhere (a futex), and /proc shows "0"
// for every thread where kernel symbols are hidden.
func wchanShown() bool {
	tasks, _ := filepath.Glob("/proc/self/task/*/wchan")
	for _, p := range tasks {
		if b, _ := os.ReadFile(p); len(b) > 0 && string(b) != "0" {
			return true
		}
	}
	return false
}

// blockedIn reports whether a thread of pid sleeps in the kernel function
// fn (/proc/PID/task/*/wchan).
func blockedIn(pid int, fn string) bool {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/wchan")
	for _, p := range tasks {
		if b, _ := os.ReadFile(p); string(b) == fn {
			return true
		}
	}
	return false
}

// stopWithin signals cmd and waits for it to exit within the bound; it
// checks status 130, the summary line that begins with stopped and the
// absence of any file at the output's name or beside it.
func stopWithin(t *testing.T, cmd *exec.Cmd, exited chan error, sig syscall.Signal, stderr *bytes.Buffer, stopped, out string) {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-exited:
		exited <- err // for the deferred wait
	case <-time.After(10 * time.Second):
		t.Fatalf("still running 10 s after %v; stderr:\n%s", sig, stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit: %v, want status 130; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "winnow dedup: "+stopped) ||
		!strings.Contains(stderr.String(), filepath.Base(out)+" not written") {
		t.Errorf("stderr has no summary of the interrupted run (%q):\n%s", stopped, stderr.String())
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*"+filepath.Base(out)+"*")); len(left) > 0 {
		t.Errorf("output files left after the signal: %v", left)
	}
}

// TestDedupStopsOnSignal: winnow dedup stops within the bound of a
// SIGINT or SIGTERM wherever it waits: opening a named pipe no program
// writes to, reading a pipe whose writer is silent, skipping an endless
// run of blank lines. It exits with status 130, prints what it did, and
// leaves no file at the output's name (nor its temporary file).
func TestDedupStopsOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := buildWinnow(t)
	page := `{"id": "a", "text": "one small page of text that is long enough to be signed by the job"}` + "\n"
	for _, tt := range []struct {
		name string
		sig  syscall.Signal
		// feed writes to the pipe until it fails (the reader went away).
		feed func(w *os.File)
		// wchan is where the process is seen to wait before the signal.
		wchan string
	}{
		{"open without writer", syscall.SIGINT, nil, "wait_for_partner"},
		{"silent writer", syscall.SIGTERM, func(w *os.File) { w.WriteString(page) }, ""},
		{"endless blank lines", syscall.SIGINT, func(w *os.File) {
			blank := bytes.Repeat([]byte("\n"), 64<<10)
			for {
				if _, err := w.Write(blank); err != nil {
					return
				}
			}
		}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "p.jsonl")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "good.jsonl")
			var stderr bytes.Buffer
			cmd := exec.Command(bin, "-set", "dedup.progress=never", "dedup", "-o", out, fifo)
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer func() {
				cmd.Process.Kill()
				<-exited
			}()
			if tt.feed != nil {
				// Opening for writing returns once the job opened the pipe.
				w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				go tt.feed(w)
			}
			waitFor(t, 30*time.Second, "the signal handlers", func() bool { return catchesSignals(cmd.Process.Pid) })
			if tt.wchan != "" && wchanShown() {
				waitFor(t, 30*time.Second, "a thread in "+tt.wchan, func() bool { return blockedIn(cmd.Process.Pid, tt.wchan) })
			}
			stopWithin(t, cmd, exited, tt.sig, &stderr, "stopped while reading and signing", out)
		})
	}
}

// TestDedupClusterStopsOnSignal: winnow dedup -cluster stops within the
// bound of a SIGINT while the cluster service it loads into holds its
// request without an answer.
func TestDedupClusterStopsOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := buildWinnow(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never answered
		}
	}()
	dir := t.TempDir()
	in := filepath.Join(dir, "pages.jsonl")
	page := `{"id": "a", "url": "https://example.org/a", "text": "one small page of text that is long enough to be signed by the job and loaded"}` + "\n"
	if err := os.WriteFile(in, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "good.jsonl")
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "-set", "dedup.progress=never", "dedup", "-cluster", "http://"+ln.Addr().String(), "-o", out, in)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	select {
	case c := <-accepted:
		defer c.Close()
	case err := <-exited:
		t.Fatalf("exited before loading: %v\n%s", err, stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("no connection to the cluster service in 60 s; stderr:\n%s", stderr.String())
	}
	stopWithin(t, cmd, exited, syscall.SIGINT, &stderr, "stopped while loading into the cluster service", out)
}
