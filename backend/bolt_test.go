package backend

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/backend/client"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

const crashEnv = "WINNOW_BACKEND_CRASH_STORE"

// TestCrashHelper is the subprocess of TestBoltCrash: it ingests batches
// and prints each acknowledged URL until it is killed.
func TestCrashHelper(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("helper of TestBoltCrash")
	}
	st, err := OpenBolt(path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	s, err := New(st, Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
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

func TestBoltCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
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
	for len(acked) < 20 {
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
	st, err := OpenBolt(path)
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

func TestBoltStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	st, err := OpenBolt(path)
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
	st.Close()
	// Reopened, the service finds the same groups and still matches
	// re-ingested pages against the rebuilt candidate tables.
	st, err = OpenBolt(path)
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
	if r, _ := st.Redirectors(pages[0].URL); len(r) != 1 {
		t.Errorf("Redirectors = %q, want one", r)
	}
	lr, _ := s.Lookup([]string{pages[0].URL})
	res := mustIngest(t, s, client.Page{URL: "https://copy.example/x", Signature: pages[0].Signature})
	if res[0].Group != lr[0].Group {
		t.Errorf("copy after reopening: %+v, want in group %s", res[0], lr[0].Group)
	}
}
