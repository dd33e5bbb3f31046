package offline

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// TestLoader loads 600 signed pages and three bad ones into a cluster
// service on loopback: the pages go in two batches, a page without an
// http(s) URL and one too short to compare are left out before sending, a
// page whose signature the service refuses is left out of its batch and
// the rest of the batch is sent again; each is counted by reason and
// reported to OnSkip. The batches name the signer's fingerprint, which
// the store records.
func TestLoader(t *testing.T) {
	// In the client's batches, and in batches of 20, where the refused
	// page is named by its place in the loader's batch past the
	// batches the service took.
	for _, maxBatch := range []int{0, 20} {
		t.Run(fmt.Sprint("max_batch=", maxBatch), func(t *testing.T) { testLoader(t, maxBatch) })
	}
}

func testLoader(t *testing.T, maxBatch int) {
	st := cluster.NewMemStore()
	svc, err := cluster.New(st, cluster.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.Handler())
	defer srv.Close()
	signer := page.Signer{Signature: similarity.Options{}.WithDefaults()}
	l, err := NewLoader(srv.URL, maxBatch, signer.Fingerprint())
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	l.OnSkip = func(page, reason string, err error) {
		skipped = append(skipped, fmt.Sprintf("%s: %s: %v", page, reason, err != nil))
	}
	sign := func(text string) []byte {
		r, err := signer.Sign([]byte(text), "text/plain")
		if err != nil {
			t.Fatal(err)
		}
		b, err := r.Sig.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ctx := context.Background()
	add := func(key, url string, sig []byte, empty bool) {
		t.Helper()
		if err := l.Add(ctx, key, url, sig, empty); err != nil {
			t.Fatal(err)
		}
	}
	add("ftp", "ftp://files.example/a.txt", sign("a page served over ftp, which the service does not take as a page URL"), false)
	add("short", "https://short.example/", nil, true)
	for i := range 600 {
		url := ""
		if i%2 == 0 {
			url = fmt.Sprintf("https://pages.example/%d", i)
		}
		add(fmt.Sprintf("p%d", i), url, sign(fmt.Sprintf("page number %d of the loader test, with words enough to sign: %s", i, strings.Repeat(fmt.Sprint(" w", i), 20))), false)
		if i == 550 {
			add("garbage", "https://garbage.example/", []byte("not a signature"), false)
		}
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	loaded := 0
	for _, n := range l.Result.Statuses {
		loaded += n
	}
	if loaded != 600 {
		t.Errorf("loaded %d pages (%v), want 600", loaded, l.Result.Statuses)
	}
	for reason, want := range map[string]int{"not an absolute http(s) URL": 1, "too short to compare": 1, "refused by the service": 1} {
		if l.Result.Skipped[reason] != want {
			t.Errorf("skipped %v, want %d %q", l.Result.Skipped, want, reason)
		}
	}
	want := []string{"ftp://files.example/a.txt: not an absolute http(s) URL: false", "short: too short to compare: false",
		"https://garbage.example/: refused by the service: true"}
	if strings.Join(skipped, "\n") != strings.Join(want, "\n") {
		t.Errorf("OnSkip got\n%s\nwant\n%s", strings.Join(skipped, "\n"), strings.Join(want, "\n"))
	}
	for _, u := range []string{"https://pages.example/0", "http://dedup.invalid/p1", "http://dedup.invalid/p599"} {
		if _, ok, err := st.Page(u); err != nil || !ok {
			t.Errorf("page %s not in the store (%v)", u, err)
		}
	}
	if m, err := st.Meta(); err != nil || m.SignerFingerprint != signer.Fingerprint() {
		t.Errorf("store's signer fingerprint %q (%v), want the loader's %s", m.SignerFingerprint, err, signer.Fingerprint())
	}
}

// TestLoaderAnswerLost: the service applies a batch and the connection
// drops before its answer (a reset, a proxy restarting). Ingest is
// idempotent, so the loader sends the batch again and the load goes on;
// it ended with an error, its pages counted as never loaded although
// the service held them.
func TestLoaderAnswerLost(t *testing.T) {
	st := cluster.NewMemStore()
	svc, err := cluster.New(st, cluster.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	h := svc.Handler()
	var dropped atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/ingest" && dropped.Add(1) == 1 {
			h.ServeHTTP(httptest.NewRecorder(), r) // applied, its answer lost
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	signer := page.Signer{Signature: similarity.Options{}.WithDefaults()}
	l, err := NewLoader(srv.URL, 0, signer.Fingerprint())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 20 {
		r, err := signer.Sign([]byte(fmt.Sprintf("page %d of the lost answer test, with words enough to sign: %s", i, strings.Repeat(fmt.Sprint(" w", i), 20))), "text/plain")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := r.Sig.MarshalBinary()
		if err := l.Add(ctx, fmt.Sprint(i), fmt.Sprintf("https://lost.example/%d", i), b, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatalf("a batch whose answer was lost ended the load: %v", err)
	}
	loaded := 0
	for _, n := range l.Result.Statuses {
		loaded += n
	}
	if loaded != 20 || dropped.Load() < 2 {
		t.Errorf("loaded %d pages (%v) in %d ingest calls, want 20, the batch sent again", loaded, l.Result.Statuses, dropped.Load())
	}
}
