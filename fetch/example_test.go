package fetch_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"

	"github.com/winnow-search/winnow/fetch"
)

func Example() {
	// A result page served on loopback; real use keeps the SSRF guard
	// closed and fetches public pages.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		io.WriteString(w, "<p>Hello, winnow.</p>")
	}))
	defer srv.Close()

	c, err := fetch.New(fetch.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	ctx := context.Background()
	p, err := c.Get(ctx, srv.URL+"/old", fetch.Validators{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Status, p.ContentType, string(p.Body))
	for _, h := range p.Chain {
		fmt.Println(h.Status, h.URL[len(srv.URL):])
	}

	// Revalidate with the validators the page came with.
	p, err = c.Get(ctx, srv.URL+"/new", fetch.Validators{ETag: p.ETag, LastModified: p.LastModified})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("not modified:", p.NotModified)

	// Internal addresses are refused, however they are spelled.
	_, err = c.Get(ctx, "http://0xa9.0xfe.0xa9.0xfe/latest/meta-data/", fetch.Validators{})
	fmt.Println(err)
	// Output:
	// 200 text/html; charset=utf-8 <p>Hello, winnow.</p>
	// 301 /old
	// 200 /new
	// not modified: true
	// fetch: refused by SSRF guard: 169.254.169.254 is cloud metadata (AWS, GCP, Azure, OpenStack)
}
