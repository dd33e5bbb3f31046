//go:build linux

package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const fullDiskEnv = "WINNOW_FULL_DISK_STORE"

// fullDiskLimit is the file size limit (RLIMIT_FSIZE) of
// TestFullDiskHelper: Pebble's write-ahead log reaches it long before its
// 16 MiB memtable is flushed, and a write past it fails (EFBIG) as a
// write to a full disk does.
const fullDiskLimit = 2 << 20

// TestFullDiskHelper is the subprocess of TestFullDisk: under a file size
// limit it ingests batches into the store named by crashKindEnv until one
// fails, prints each acknowledged URL, then checks that the service
// refuses the next batch at once and still answers lookups.
func TestFullDiskHelper(t *testing.T) {
	path := os.Getenv(fullDiskEnv)
	if path == "" {
		t.Skip("helper of TestFullDisk")
	}
	s := helperService(path)
	lim := syscall.Rlimit{Cur: fullDiskLimit, Max: fullDiskLimit}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	pages := synthPages(t, 20_000, 3)
	var acked []string
	for start := 0; ; start += 100 {
		if start == len(pages) {
			fmt.Println("error: no write failed")
			os.Exit(1)
		}
		batch := pages[start : start+100]
		if _, err := s.Ingest(batch); err != nil {
			fmt.Println("failed", err)
			break
		}
		for _, p := range batch {
			acked = append(acked, p.URL)
			fmt.Println("ack", p.URL)
		}
	}
	// bbolt may take a small batch in the pages it freed; Pebble refuses
	// every write after a failed one.
	next := pages[len(pages)-1:]
	if _, err := s.Ingest(next); err == nil {
		fmt.Println("ack", next[0].URL)
	} else {
		fmt.Println("refused", err)
	}
	res, err := s.Lookup(acked[len(acked)-100:])
	if err != nil {
		fmt.Println("error: lookup", err)
		os.Exit(1)
	}
	for _, r := range res {
		if !r.Known {
			fmt.Println("error: lookup of acknowledged", r.URL, "unknown")
		}
	}
	fmt.Println("lookups answered")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	fmt.Println("healthz", rec.Code)
	os.Exit(0) // the process ends as a service killed after the failure
}

// TestFullDisk fills the disk under an embedded store while batches are
// ingested: the failing batch and the next ones fail with an error (no
// panic, no hang), lookups go on, and after a restart every acknowledged
// page is there and the groups are consistent.
func TestFullDisk(t *testing.T) {
	for _, d := range diskStores {
		t.Run(d.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFullDiskHelper$")
			cmd.Env = append(os.Environ(), fullDiskEnv+"="+path, crashKindEnv+"="+d.name)
			out, err := cmd.Output()
			if ctx.Err() != nil {
				t.Fatalf("helper hung after the write failure: %s", tail(out))
			}
			if err != nil {
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					t.Fatalf("helper: %v\n%s\n%s", err, tail(out), tail(ee.Stderr))
				}
				t.Fatal(err)
			}
			var acked []string
			saw := map[string]bool{}
			sc := bufio.NewScanner(strings.NewReader(string(out)))
			for sc.Scan() {
				word, rest, _ := strings.Cut(sc.Text(), " ")
				saw[word] = true
				switch word {
				case "ack":
					acked = append(acked, rest)
				case "error":
					t.Error(sc.Text())
				case "failed", "refused":
					t.Log(sc.Text())
				case "healthz":
					// Pebble, which takes no more writes, is not healthy;
					// bbolt goes on with what fits.
					want := "200"
					if d.name == "pebble" {
						want = "503"
					}
					if rest != want {
						t.Errorf("/healthz after the write failure: %s, want %s", rest, want)
					}
				}
			}
			if !saw["failed"] || !saw["lookups"] || d.name == "pebble" && !saw["refused"] {
				t.Fatalf("helper output lacks a failed batch, lookups or (Pebble) a refused batch:\n%s", tail(out))
			}
			st, err := d.open(path)
			if err != nil {
				t.Fatalf("reopening after the full disk: %v", err)
			}
			defer st.Close()
			s, err := New(st, Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Lookup(acked[len(acked)-min(len(acked), 1000):])
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if !r.Known || r.Group == "" {
					t.Errorf("acknowledged page %s lost after the full disk: %+v", r.URL, r)
				}
			}
			checkConsistent(t, st)
		})
	}
}

// tail returns the last lines of a helper's output.
func tail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-8):], "\n")
}

const fullDiskOpenEnv = "WINNOW_FULL_DISK_OPEN"

// TestFullDiskOpenHelper is the subprocess of TestPebbleOpenFullDisk: it
// opens the Pebble store at fullDiskOpenEnv under a file size limit that
// the flush of its write-ahead log exceeds, and prints the outcome.
func TestFullDiskOpenHelper(t *testing.T) {
	path := os.Getenv(fullDiskOpenEnv)
	if path == "" {
		t.Skip("helper of TestPebbleOpenFullDisk")
	}
	lim := syscall.Rlimit{Cur: 1 << 20, Max: 1 << 20}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	st, err := OpenPebble(path, PebbleOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println("refused", err)
		os.Exit(0)
	}
	st.Close()
	fmt.Println("opened")
	os.Exit(0)
}

// TestPebbleOpenFullDisk opens a Pebble store whose write-ahead log holds
// more than the disk can take when Pebble flushes it at open (a full
// disk): OpenPebble must fail with the disk's error, not wait forever
// while Pebble retries the flush (the service never listened, and
// ignored SIGTERM). Reopened with room, the store holds every page.
func TestPebbleOpenFullDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	st, err := OpenPebble(path, PebbleOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pages := synthPages(t, 5000, 4) // a few MB of log, under the memtable
	ingestAll(t, s, pages)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFullDiskOpenHelper$")
	cmd.Env = append(os.Environ(), fullDiskOpenEnv+"="+path)
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("OpenPebble on a full disk hung: %s", tail(out))
	}
	if err != nil || !strings.Contains(string(out), "refused") || !strings.Contains(string(out), "file too large") {
		t.Fatalf("OpenPebble on a full disk: %v\n%s", err, tail(out))
	}
	t.Log(tail(out))
	st, err = OpenPebble(path, PebbleOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err = New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, p := range pages[len(pages)-1000:] {
		urls = append(urls, p.URL)
	}
	res, err := s.Lookup(urls)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Known {
			t.Errorf("%s lost", r.URL)
		}
	}
}
