package proxy

import (
	"context"
	"encoding/xml"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/proxy/engine"
)

// omegaPageIDs are the pages of the embedded sample (LLVM docs) the Omega
// tests index and serve: two pages in three releases and two singletons.
var omegaPageIDs = []string{
	"13/Benchmarking", "16/Benchmarking", "22/Benchmarking",
	"13/CodeReview", "16/CodeReview", "22/CodeReview",
	"22/AdminTasks", "13/FaultMaps",
}

// writeOmegaPages writes the pages ids (all the sample's when nil) into a
// temporary folder as <release>/<page>.html and returns it.
func writeOmegaPages(t testing.TB, ids []string) string {
	t.Helper()
	dir := t.TempDir()
	bodies := map[string][]byte{}
	for d, err := range sample.Docs() {
		if err != nil {
			t.Fatal(err)
		}
		bodies[strings.TrimPrefix(d.ID, "sample://llvm/")] = d.Body
	}
	if ids == nil {
		for id := range bodies {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		b, ok := bodies[id]
		if !ok {
			t.Fatalf("the sample lacks %s", id)
		}
		p := filepath.Join(dir, filepath.FromSlash(id)+".html")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// omegaTools are the Xapian Omega programs of Debian's xapian-omega
// package.
type omegaTools struct {
	omindex   string // the indexer
	cgi       string // the omega CGI binary
	templates string // the OmegaScript templates, opensearch among them
}

// findOmega finds omindex, the omega CGI binary and its templates. When
// one is missing the test is skipped, or fails when CI=true: CI installs
// xapian-omega.
func findOmega(t testing.TB) omegaTools {
	t.Helper()
	missing := func(what string) {
		t.Helper()
		msg := "xapian omega: " + what + " (apt-get install xapian-omega)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	var o omegaTools
	var err error
	if o.omindex, err = exec.LookPath("omindex"); err != nil {
		missing("omindex not found in PATH")
	}
	for _, p := range []string{"/usr/lib/cgi-bin/omega/omega", "/usr/lib/cgi-bin/omega"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			o.cgi = p
			break
		}
	}
	if o.cgi == "" {
		missing("the omega CGI binary is not in /usr/lib/cgi-bin/omega/")
	}
	o.templates = "/usr/share/xapian-omega/templates"
	if _, err := os.Stat(filepath.Join(o.templates, "opensearch")); err != nil {
		missing("no opensearch template in " + o.templates)
	}
	return o
}

// startPages serves the saved pages under /pages/ on loopback, so the
// URLs omindex records can be fetched by the proxy.
func startPages(t testing.TB, pages string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.StripPrefix("/pages/", http.FileServer(http.Dir(pages))))
	t.Cleanup(srv.Close)
	return srv
}

// buildOmegaIndex indexes the saved pages with omindex into dir/db, each
// page under baseURL, and writes dir/omega.conf for the CGI binary. It
// returns the path of omega.conf.
func buildOmegaIndex(t testing.TB, o omegaTools, dir, pages, baseURL string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.omindex, "--db", filepath.Join(dir, "db"), "--url", baseURL, "--empty-docs=skip", pages)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("omindex: %v\n%s", err, out)
	}
	if err := os.Mkdir(filepath.Join(dir, "log"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "omega.conf")
	text := "database_dir " + dir + "\n" +
		"template_dir " + o.templates + "\n" +
		"log_dir " + filepath.Join(dir, "log") + "\n" +
		"cdb_dir " + filepath.Join(dir, "cdb") + "\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

// startOmega serves the omega CGI binary on loopback with the given
// configuration file. The returned function gives the query string of
// the last request Omega got.
func startOmega(t testing.TB, o omegaTools, conf string) (*httptest.Server, func() url.Values) {
	t.Helper()
	h := &cgi.Handler{Path: o.cgi, Dir: filepath.Dir(conf), Env: []string{"OMEGA_CONFIG_FILE=" + conf}}
	var last atomic.Pointer[url.Values]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		last.Store(&q)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() url.Values {
		if q := last.Load(); q != nil {
			return *q
		}
		return nil
	}
}

// omegaEngine configures winnow in front of the Omega at url, asking for
// its OpenSearch template on database db.
func omegaEngine(url string, timeout time.Duration) Engine {
	return Engine{
		Name:    "omega",
		URL:     url,
		Adapter: engine.Config{Kind: "opensearch-rss", Path: "/", Extra: "DB=db&FMT=opensearch"},
		Timeout: timeout,
	}
}

// omegaRSS is the part of an answer of Omega's opensearch template the
// tests read, with winnow's additions.
type omegaRSS struct {
	XMLName xml.Name `xml:"rss"`
	Channel struct {
		Total        int         `xml:"http://a9.com/-/spec/opensearch/1.1/ totalResults"`
		StartIndex   int         `xml:"http://a9.com/-/spec/opensearch/1.1/ startIndex"`
		ItemsPerPage int         `xml:"http://a9.com/-/spec/opensearch/1.1/ itemsPerPage"`
		Items        []omegaItem `xml:"item"`
	} `xml:"channel"`
}

// omegaItem is one <item>: Omega's fields plus winnow's annotation or
// nested duplicates.
type omegaItem struct {
	Title      string `xml:"title"`
	Link       string `xml:"link"`
	Annotation *struct {
		Cluster  string `xml:"cluster,attr"`
		Winner   string `xml:"winner,attr"`
		Relation string `xml:"relation,attr"`
		Explain  string `xml:",chardata"`
	} `xml:"https://winnow-search.github.io/ns/1 annotation"`
	Duplicates []struct {
		Cluster  string      `xml:"cluster,attr"`
		Relation string      `xml:"relation,attr"`
		Explain  string      `xml:"explain,attr"`
		Item     []omegaItem `xml:"item"`
	} `xml:"https://winnow-search.github.io/ns/1 duplicate"`
}

func decodeRSS(t testing.TB, body string) omegaRSS {
	t.Helper()
	var r omegaRSS
	if err := xml.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("answer is not Omega's RSS: %v\n%s", err, body)
	}
	return r
}
