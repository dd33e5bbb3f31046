package cluster

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/internal/chromiumtest"
)

// TestCrossOriginPost: a web page of another origin, open in a browser
// that can reach the service, makes the browser POST deletes to
// /v1/ingest as the requests any page may send without asking the
// service (CORS simple requests: a text/plain body, a form-encoded one,
// one without a type). The service must apply none of them.
func TestCrossOriginPost(t *testing.T) {
	ctx := chromiumtest.Start(t, 60*time.Second, 800, 600)
	s := newTestService(t, Options{})
	sig := byPage(t, "Benchmarking")[0].sig
	urls := []string{"https://a.example/text", "https://a.example/form", "https://a.example/none"}
	for _, u := range urls {
		mustIngest(t, s, client.Page{URL: u, Signature: sig})
	}
	svc := httptest.NewServer(s.Handler())
	defer svc.Close()
	del := func(u string) string { return fmt.Sprintf(`'{"pages":[{"url":"%s","deleted":true}]}'`, u) }
	page := fmt.Sprintf(`<!doctype html><title>loading</title><script>
const post = body => fetch(%q, {method: 'POST', mode: 'no-cors', body}).catch(() => {});
Promise.all([
	post(%s),
	post(new Blob([%s], {type: 'application/x-www-form-urlencoded'})),
	post(new Blob([%s])),
]).then(() => { document.title = 'done'; });
</script>`, svc.URL+"/v1/ingest", del(urls[0]), del(urls[1]), del(urls[2]))
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	}))
	defer other.Close()
	if _, err := chromedp.Run(ctx, chromedp.Navigate(other.URL)); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.title`))
		if err != nil {
			t.Fatal(err)
		}
		if title == "done" {
			break
		}
		if i == 200 {
			t.Fatal("the page's requests never settled")
		}
		time.Sleep(50 * time.Millisecond)
	}
	lr, err := s.Lookup(urls)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lr {
		if !r.Known {
			t.Errorf("%s deleted by a cross-origin page's request", r.URL)
		}
	}
}
