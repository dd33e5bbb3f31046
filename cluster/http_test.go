package cluster

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/cluster/client"
)

func TestClientAgainstServer(t *testing.T) {
	s := newTestService(t, Options{MaxBatch: 10})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	c, err := client.New(srv.URL, client.Options{MaxBatch: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var pages []client.Page
	for _, p := range byPage(t, "Benchmarking") {
		pages = append(pages, client.Page{URL: p.url, Signature: p.sig})
	}
	res, err := c.Ingest(ctx, pages) // 5 pages in requests of 3 and 2
	if err != nil || len(res) != len(pages) {
		t.Fatalf("Ingest = %d results, %v", len(res), err)
	}
	lr, err := c.Lookup(ctx, []string{pages[0].URL, pages[4].URL, "https://unknown.example/"})
	if err != nil {
		t.Fatal(err)
	}
	if !lr[0].IsWinner || lr[1].Winner != pages[0].URL || lr[1].Size != 5 || lr[2].Known {
		t.Errorf("Lookup = %+v", lr)
	}
	g, err := c.Group(ctx, lr[0].Group)
	if err != nil || len(g.Members) != 5 || g.Winner != pages[0].URL {
		t.Errorf("Group = %+v, %v", g, err)
	}
	if _, err := c.Group(ctx, "nope"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("Group(nope) error = %v, want ErrNotFound", err)
	}
	_, err = c.Ingest(ctx, []client.Page{pages[0], {URL: "https://a.example/", Signature: []byte{1, 2}}, pages[1], pages[2], {URL: "bad"}})
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Item != 1 || ae.URL != "https://a.example/" {
		t.Errorf("Ingest(bad signature) error = %v, want APIError for item 1", err)
	}
	srv.Close()
	if _, err := c.Lookup(ctx, []string{"https://a.example/"}); !errors.Is(err, client.ErrUnavailable) {
		t.Errorf("Lookup on a closed server error = %v, want ErrUnavailable", err)
	}
}

func TestHTTPErrors(t *testing.T) {
	s := newTestService(t, Options{MaxBatch: 2})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	sig := `"` + b64(signedSample(t)[0].sig) + `"`
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"invalid JSON", "POST", "/v1/ingest", `{"pages":[`, 400, "invalid JSON"},
		{"unknown field", "POST", "/v1/ingest", `{"pages":[],"x":1}`, 400, "unknown field"},
		{"trailing", "POST", "/v1/ingest", `{"pages":[]} {}`, 400, "trailing"},
		{"invalid URL", "POST", "/v1/ingest", `{"pages":[{"url":"https://ok.example/","signature":` + sig + `},{"url":"nope","signature":` + sig + `}]}`, 400, `"item":1,"url":"nope"`},
		{"corrupt signature", "POST", "/v1/ingest", `{"pages":[{"url":"https://a.example/","signature":"AwEC"}]}`, 400, `corrupt`}, // version 3, then a truncated body,
		{"oversized batch", "POST", "/v1/ingest", `{"pages":[{"url":"https://a.example/","deleted":true},{"url":"https://b.example/","deleted":true},{"url":"https://c.example/","deleted":true}]}`, 413, "batch too large"},
		{"oversized lookup", "POST", "/v1/lookup", `{"urls":["a","b","c"]}`, 413, "batch too large"},
		{"unknown group", "GET", "/v1/groups/g99", "", 404, "no group"},
		{"wrong method", "GET", "/v1/ingest", "", 405, ""},
		{"health", "GET", "/healthz", "", 200, "ok"},
		{"metrics", "GET", "/metrics", "", 200, "winnow_cluster_service_ingest_rejected_total"},
		{"metrics, deprecated alias", "GET", "/metrics", "", 200, "# HELP winnow_backend_ingest_rejected_total Deprecated alias of winnow_cluster_service_ingest_rejected_total"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
			if tt.method == "POST" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.want) {
				t.Errorf("%s %s = %d %s, want %d with %q", tt.method, tt.path, resp.StatusCode, body, tt.status, tt.want)
			}
		})
	}
	if lr, _ := s.Lookup([]string{"https://ok.example/"}); lr[0].Known {
		t.Error("a rejected batch was partly applied")
	}
	// A POST body must be declared JSON (a browser sends the others for
	// a page of any origin: TestCrossOriginPost).
	ingest := `{"pages":[{"url":"https://ok.example/","signature":` + sig + `}]}`
	for _, ct := range []string{"", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=utf-8"} {
		resp, err := http.Post(srv.URL+"/v1/ingest", ct, strings.NewReader(ingest))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := http.StatusUnsupportedMediaType
		if strings.HasPrefix(ct, "application/json") {
			want = http.StatusOK
		}
		if resp.StatusCode != want {
			t.Errorf("POST /v1/ingest with Content-Type %q = %d %s, want %d", ct, resp.StatusCode, body, want)
		}
	}
	if lr, _ := s.Lookup([]string{"https://ok.example/"}); !lr[0].Known {
		t.Error("the batch declared JSON was not applied")
	}
}

// pageFailing is a store whose Page fails after ok calls (never when ok
// is negative), and whose Groups fails when groupsErr is set.
type pageFailing struct {
	Store
	ok        int
	groupsErr bool
}

func (p *pageFailing) Page(url string) (PageRecord, bool, error) {
	if p.ok == 0 {
		return PageRecord{}, false, errors.New("disk gone")
	}
	p.ok--
	return p.Store.Page(url)
}

func (p *pageFailing) Groups(fn func(id string, g GroupRecord) error) error {
	if p.groupsErr {
		return errors.New("disk gone")
	}
	return p.Store.Groups(fn)
}

// TestWinnersHTTP: GET /v1/winners sends ExportWinners' lines; a store
// failing before the first line is a 500, after it an aborted transfer,
// never a list that looks whole.
func TestWinnersHTTP(t *testing.T) {
	st, s, _ := ingestedSample(t)
	var want strings.Builder
	if err := ExportWinners(st, &want); err != nil {
		t.Fatal(err)
	}
	if strings.Count(want.String(), "\n") < 2 {
		t.Fatalf("the sample makes %d groups, want several", strings.Count(want.String(), "\n"))
	}
	get := func(h http.Handler) (*http.Response, []byte, error) {
		srv := httptest.NewServer(h)
		defer srv.Close()
		resp, err := http.Get(srv.URL + "/v1/winners")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, b, err
	}
	resp, got, err := get(s.Handler())
	// The memory store's groups come in no set order.
	sorted := func(b string) string {
		l := strings.Split(b, "\n")
		slices.Sort(l)
		return strings.Join(l, "\n")
	}
	if err != nil || resp.StatusCode != 200 || sorted(string(got)) != sorted(want.String()) {
		t.Errorf("GET /v1/winners = %d, %d bytes, %v; want 200 and ExportWinners' %d bytes", resp.StatusCode, len(got), err, want.Len())
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/jsonl" {
		t.Errorf("Content-Type %q", ct)
	}

	quiet := Options{SampleSize: 20, Logger: slog.New(slog.DiscardHandler)}
	failing := &pageFailing{Store: st, ok: -1}
	broken, err := New(failing, quiet)
	if err != nil {
		t.Fatal(err)
	}
	failing.groupsErr = true
	if resp, b, _ := get(broken.Handler()); resp.StatusCode != 500 || !strings.Contains(string(b), "disk gone") {
		t.Errorf("store failing at once: %d %s, want 500 naming the error", resp.StatusCode, b)
	}
	// Failing after enough lines to flush the writer's buffer: the
	// client must see the transfer fail.
	lines := strings.Count(want.String(), "\n")
	perLine := want.Len() / lines
	cut := &pageFailing{Store: st, ok: -1}
	late, err := New(cut, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if cut.ok = lines / 2; cut.ok*perLine < 16<<10 {
		t.Fatalf("half the sample's %d winner lines of ~%d bytes do not fill the writers' buffers", lines, perLine)
	}
	resp, b, err := get(late.Handler())
	if err == nil {
		t.Errorf("store failing mid-list: %d, %d bytes read without error; want the transfer aborted", resp.StatusCode, len(b))
	}
}

// TestCanonicalURLs: the service keys pages by canon.URL, as the proxy
// asks it (serve.cluster looks up canonical URLs): spellings of one page
// that an index pipeline sends as its crawler wrote them (host case,
// default port, tracking parameters, parameter order, a fragment, no
// path) meet in one page, found under each spelling; http and https, and
// a trailing slash, stay two pages, as canon.URL keeps them apart.
func TestCanonicalURLs(t *testing.T) {
	s := newTestService(t, Options{})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	c, err := client.New(srv.URL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sig := byPage(t, "Benchmarking")[0].sig
	const (
		crawled = "https://Docs.Example.COM:443/guide?utm_source=news&b=2&a=1#intro"
		key     = "https://docs.example.com/guide?a=1&b=2" // canon.URL(crawled)
	)
	res, err := c.Ingest(ctx, []client.Page{
		{URL: crawled, Signature: sig, Popularity: 1},
		{URL: "https://llvm.example", Signature: sig},
		{URL: "http://OLD.example/guide", RedirectTo: "HTTPS://DOCS.EXAMPLE.COM/guide?b=2&a=1&fbclid=x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].URL != crawled || res[0].Winner != key || res[2].Winner != key {
		t.Errorf("Ingest = %+v, want results under the URLs sent, winner %s", res, key)
	}
	lr, err := c.Lookup(ctx, []string{key, crawled, "https://llvm.example/", "http://old.example/guide"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lr {
		if !r.Known || r.Group != res[0].Group || r.Size != 3 {
			t.Errorf("Lookup(%s) = %+v, want known in group %s of 3", r.URL, r, res[0].Group)
		}
	}
	if lr[0].URL != key || lr[1].URL != crawled || !lr[0].IsWinner || !lr[1].IsWinner {
		t.Errorf("Lookup = %+v, want results under the URLs asked, both the winner", lr)
	}
	// The canonical spelling is the same page: it stays.
	res, err = c.Ingest(ctx, []client.Page{{URL: key, Signature: sig, Popularity: 1}})
	if err != nil || res[0].Status != client.StatusStayed {
		t.Errorf("Ingest(%s) = %+v, %v, want stayed", key, res, err)
	}
	// http, and a trailing slash, are other pages.
	res, err = c.Ingest(ctx, []client.Page{
		{URL: "http://docs.example.com/guide?a=1&b=2", Signature: sig},
		{URL: "https://llvm.example//", Signature: sig},
	})
	if err != nil || res[0].Status != client.StatusJoined || res[1].Status != client.StatusJoined {
		t.Errorf("Ingest(http, trailing slash) = %+v, %v, want both joined", res, err)
	}
	// A delete under another spelling deletes the page.
	if _, err := c.Ingest(ctx, []client.Page{{URL: "https://DOCS.example.com/guide?b=2&a=1&utm_medium=x", Deleted: true}}); err != nil {
		t.Fatal(err)
	}
	if lr, _ := c.Lookup(ctx, []string{key}); lr[0].Known {
		t.Errorf("Lookup(%s) after its delete = %+v", key, lr[0])
	}
	// A redirect to another spelling of itself is refused.
	_, err = c.Ingest(ctx, []client.Page{{URL: "https://a.example", RedirectTo: "https://a.example/#top"}})
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(ae.Message, "itself") {
		t.Errorf("redirect to itself: %v, want a 400 naming it", err)
	}
}

// TestCanonicalURLsOldStore: a page that an earlier version stored under
// the spelling it was sent with is still found and deleted under it.
func TestCanonicalURLsOldStore(t *testing.T) {
	st := NewMemStore()
	s, err := New(st, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	sig := byPage(t, "Benchmarking")[0].sig
	const old = "https://Old.example/p?utm_source=x"
	res := mustIngest(t, s, client.Page{URL: "https://new.example/p", Signature: sig})
	// As an earlier version wrote it: the page under the URL sent.
	g, _, _ := st.Group(res[0].Group)
	g.Members = append(g.Members, old)
	slices.Sort(g.Members)
	if err := st.Apply(&Batch{Pages: map[string]*PageRecord{old: {Group: res[0].Group, Sig: sig, Verified: true}},
		Groups: map[string]*GroupRecord{res[0].Group: &g}}); err != nil {
		t.Fatal(err)
	}
	if lr, _ := s.Lookup([]string{old}); !lr[0].Known || lr[0].Group != res[0].Group {
		t.Errorf("Lookup(%s) = %+v, want known in %s", old, lr[0], res[0].Group)
	}
	mustIngest(t, s, client.Page{URL: old, Deleted: true})
	if lr, _ := s.Lookup([]string{old}); lr[0].Known {
		t.Errorf("Lookup(%s) after its delete = %+v", old, lr[0])
	}
	checkConsistent(t, st)
}

// TestCanonicalURLsReload: re-loading a store written before pages were
// keyed by canon.URL moves each page to its canonical key; the old
// spelling's record goes, so no page is held twice.
func TestCanonicalURLsReload(t *testing.T) {
	st := NewMemStore()
	s, err := New(st, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	pages := byPage(t, "Benchmarking")
	const old, key = "https://Old.example/p?utm_source=x", "https://old.example/p"
	other := mustIngest(t, s, client.Page{URL: "https://other.example/p", Signature: pages[0].sig})
	// As an earlier version wrote it: the page under the URL sent, in
	// the other page's group.
	g, _, _ := st.Group(other[0].Group)
	g.Members = append(g.Members, old)
	slices.Sort(g.Members)
	if err := st.Apply(&Batch{Pages: map[string]*PageRecord{old: {Group: other[0].Group, Sig: pages[1].sig, Verified: true}},
		Groups: map[string]*GroupRecord{other[0].Group: &g}}); err != nil {
		t.Fatal(err)
	}
	res := mustIngest(t, s, client.Page{URL: old, Signature: pages[1].sig})
	if res[0].URL != old || res[0].Group != other[0].Group {
		t.Errorf("re-load of %s = %+v, want it under the URL sent, in group %s", old, res[0], other[0].Group)
	}
	if _, ok, _ := st.Page(old); ok {
		t.Errorf("the old spelling %s is still a page after the re-load", old)
	}
	if _, ok, _ := st.Page(key); !ok {
		t.Errorf("no page under the canonical key %s after the re-load", key)
	}
	g, _, _ = st.Group(other[0].Group)
	if slices.Contains(g.Members, old) || !slices.Contains(g.Members, key) {
		t.Errorf("group members %v, want %s and not %s", g.Members, key, old)
	}
	checkConsistent(t, st)
}
