// Package crawltest makes WARC files the way crawlers write them, for the
// tests of the offline job: [Site] serves real pages on loopback the way a
// web server does (gzip Content-Encoding and chunked transfer when the
// client asks for gzip, a redirect, a missing page, an image), and [Wget]
// crawls it with Debian's GNU Wget into a WARC file.
//
// Tests that call [Wget] fail when wget is missing and CI is "true" (CI
// installs it, see .ci/run), and are skipped otherwise.
package crawltest

import (
	"compress/gzip"
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// PNG is a one-pixel PNG image that [Site] serves as /logo.png.
var PNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
	"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// Site is a web site on loopback. Its root "/" is an index page that
// links every page, "/logo.png", "/missing.html" (404) and "/moved.html"
// (a 301 redirect to the first page); every page is served as text/html,
// gzip-encoded and chunked when the request accepts gzip.
type Site struct {
	*httptest.Server
	// Paths are the pages' paths, sorted, each starting with "/".
	Paths []string
}

// NewSite serves pages (path without the leading slash → HTML) on
// loopback until the test ends.
func NewSite(t testing.TB, pages map[string][]byte) *Site {
	t.Helper()
	s := &Site{}
	for p := range pages {
		s.Paths = append(s.Paths, "/"+p)
	}
	slices.Sort(s.Paths)
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString("<!doctype html><html><head><title>index</title></head><body><ul>\n")
		for _, p := range s.Paths {
			fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", html.EscapeString(p), html.EscapeString(p))
		}
		b.WriteString(`<li><a href="/missing.html">gone</a></li><li><a href="/moved.html">moved</a></li><li><img src="/logo.png" alt="logo"></li></ul></body></html>`)
		serve(w, r, "text/html; charset=utf-8", []byte(b.String()))
	})
	mux.HandleFunc("/logo.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(PNG)
	})
	mux.HandleFunc("/moved.html", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s.Paths[0], http.StatusMovedPermanently)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		serve(w, r, "text/html; charset=utf-8", body)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// serve writes body, gzip-encoded without a Content-Length (so chunked)
// when the request accepts gzip.
func serve(w http.ResponseWriter, r *http.Request, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Write(body)
		return
	}
	w.Header().Set("Content-Encoding", "gzip")
	zw := gzip.NewWriter(w)
	zw.Write(body)
	zw.Close()
}

// Wget runs wget in dir with args and returns its combined output. It
// fails the test if wget is missing under CI=true (skips it otherwise) or
// exits with a status other than 0 or 8 (8: some page was not found,
// which [Site] arranges on purpose).
func Wget(t testing.TB, dir string, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("wget")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("wget not installed (apt-get install wget; .ci/run does)")
		}
		t.Skip("wget not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--no-config", "--tries=1", "--no-verbose"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "no_proxy=*", "http_proxy=", "https_proxy=")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 8) {
		t.Fatalf("wget %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Crawl crawls site recursively with wget into dir/name.warc.gz and
// returns that path. With cdx true wget also writes dir/name.cdx; dedup,
// if not "", names a CDX file of an earlier crawl, whose unchanged pages
// wget then stores as revisit records.
func Crawl(t testing.TB, site *Site, dir, name string, cdx bool, dedup string, extra ...string) string {
	t.Helper()
	args := []string{"--recursive", "--level=2", "--page-requisites", "--compression=auto",
		"--warc-file=" + name, "--directory-prefix=" + filepath.Join(dir, name+".files")}
	if cdx {
		args = append(args, "--warc-cdx")
	}
	if dedup != "" {
		args = append(args, "--warc-dedup="+dedup)
	}
	args = append(args, extra...)
	Wget(t, dir, append(args, site.URL+"/")...)
	return filepath.Join(dir, name+".warc.gz")
}
