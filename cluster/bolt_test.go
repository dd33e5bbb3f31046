package cluster

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/winnow-search/winnow/cluster/client"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// diskStore is an embedded store under test.
type diskStore struct {
	name string
	open func(path string) (Store, error)
}

var diskStores = []diskStore{
	{"bolt", func(path string) (Store, error) { return OpenBolt(path) }},
	{"pebble", func(path string) (Store, error) {
		return OpenPebble(path, PebbleOptions{Logger: slog.New(slog.DiscardHandler)})
	}},
}

func diskStoreNamed(name string) (diskStore, bool) {
	for _, d := range diskStores {
		if d.name == name {
			return d, true
		}
	}
	return diskStore{}, false
}

const (
	crashEnv      = "WINNOW_BACKEND_CRASH_STORE"
	crashKindEnv  = "WINNOW_BACKEND_CRASH_KIND"
	crashAckCount = 20
)

// TestCrashHelper is the subprocess of TestBoltCrash and TestPebbleCrash:
// it ingests batches into the store named by crashKindEnv and prints each
// acknowledged URL until it is killed.
func TestCrashHelper(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("helper of TestBoltCrash and TestPebbleCrash")
	}
	s := helperService(path)
	sig := signedSample(t)[0].sig
	for i := 0; ; i++ {
		u := fmt.Sprintf("https://crash.example/%d", i)
		if _, err := s.Ingest([]client.Page{{URL: u, Signature: sig}}); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("ack", u)
	}
}

// helperService opens the store at path of the kind crashKindEnv names
// and a service over it, for a helper subprocess, which prints an error
// line and exits when it cannot.
func helperService(path string) *Service {
	d, ok := diskStoreNamed(os.Getenv(crashKindEnv))
	if !ok {
		fmt.Println("error: unknown store", os.Getenv(crashKindEnv))
		os.Exit(1)
	}
	st, err := d.open(path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	s, err := New(st, Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	return s
}

// testCrash kills a process that ingests into store d with SIGKILL after
// crashAckCount acknowledged batches, and checks that every acknowledged
// page is in the reopened store.
func testCrash(t *testing.T, d diskStore) {
	path := filepath.Join(t.TempDir(), "store")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path, crashKindEnv+"="+d.name)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	buf := make([]byte, 0, 4096)
	chunk := make([]byte, 1024)
	for len(acked) < crashAckCount {
		n, err := out.Read(chunk)
		if err != nil {
			t.Fatalf("helper output: %v (%s)", err, buf)
		}
		buf = append(buf, chunk[:n]...)
		lines := strings.Split(string(buf), "\n")
		acked = acked[:0]
		for _, l := range lines[:len(lines)-1] {
			if u, ok := strings.CutPrefix(l, "ack "); ok {
				acked = append(acked, u)
			}
		}
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	st, err := d.open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Lookup(acked)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Known || r.Group == "" {
			t.Errorf("acknowledged page %s lost after kill -9: %+v", r.URL, r)
		}
	}
}

func TestBoltCrash(t *testing.T) { testCrash(t, diskStores[0]) }

// testReopen ingests the sample into store d, closes and reopens it, and
// checks the groups, the redirect index and the rebuilt candidate tables.
func testReopen(t *testing.T, d diskStore) {
	path := filepath.Join(t.TempDir(), "store")
	st, err := d.open(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var pages []client.Page
	var urls []string
	for _, p := range signedSample(t) {
		pages = append(pages, client.Page{URL: p.url, Signature: p.sig})
		urls = append(urls, p.url)
	}
	pages = append(pages, client.Page{URL: "https://r.example/", RedirectTo: pages[0].URL})
	mustIngest(t, s, pages...)
	want := groupsOf(t, s, urls)
	wantStats := s.Stats()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened, the service finds the same groups and still matches
	// re-ingested pages against the rebuilt candidate tables.
	st, err = d.open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err = New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := groupsOf(t, s, urls); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("groups after reopening = %q, want %q", got, want)
	}
	if got := s.Stats(); got != wantStats {
		t.Errorf("Stats after reopening = %+v, want %+v", got, wantStats)
	}
	if r, _ := st.Redirectors(pages[0].URL); len(r) != 1 || r[0] != "https://r.example/" {
		t.Errorf("Redirectors = %q, want [https://r.example/]", r)
	}
	lr, _ := s.Lookup([]string{pages[0].URL})
	res := mustIngest(t, s, client.Page{URL: "https://copy.example/x", Signature: pages[0].Signature})
	if res[0].Group != lr[0].Group {
		t.Errorf("copy after reopening: %+v, want in group %s", res[0], lr[0].Group)
	}
}

func TestBoltStore(t *testing.T) { testReopen(t, diskStores[0]) }

// TestStoreFormat checks that each embedded store refuses a store of
// another format at open and reports a record of another version.
func TestStoreFormat(t *testing.T) {
	for _, d := range diskStores {
		t.Run(d.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store")
			st, err := d.open(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Apply(&Batch{Pages: map[string]*PageRecord{"https://a.example/": {Group: "g1", Verified: true}}}); err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			// The format written at creation is accepted.
			if st, err = d.open(path); err != nil {
				t.Fatalf("reopen: %v", err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			setRaw(t, d.name, path, "format", []byte("winnow-store/0"))
			if _, err := d.open(path); !errors.Is(err, ErrFormat) {
				t.Errorf("open of format winnow-store/0: error %v, want ErrFormat", err)
			}
			setRaw(t, d.name, path, "format", []byte(storeFormat))
			rec := encodePage(&PageRecord{Group: "g1", Verified: true})
			rec[0] = recordVersion + 1
			setRaw(t, d.name, path, "page", rec)
			st, err = d.open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, _, err := st.Page("https://a.example/"); !errors.Is(err, errRecord) {
				t.Errorf("Page of a version %d record: error %v, want errRecord", recordVersion+1, err)
			}
		})
	}
}

// setRaw writes, below the store's API, its meta key "format" or the
// record of page https://a.example/.
func setRaw(t *testing.T, kind, path, what string, v []byte) {
	t.Helper()
	switch kind {
	case "bolt":
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		err = db.Update(func(tx *bolt.Tx) error {
			if what == "format" {
				return tx.Bucket(bucketMeta).Put(keyFormat, v)
			}
			return tx.Bucket(bucketPages).Put([]byte("https://a.example/"), v)
		})
		if err != nil {
			t.Fatal(err)
		}
	case "pebble":
		setPebbleRaw(t, path, what, v)
	}
}
