package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/proxy/engine"
)

// deadlineTimeout is the engine timeout of the deadline tests. The old
// behaviour these tests catch took twice it (a hanging engine) or
// without bound (a dripping one); the tests allow deadlineSlack over it
// on a loaded machine.
const (
	deadlineTimeout = 2 * time.Second
	deadlineSlack   = 5 * time.Second
)

// badEngine is an engine on loopback that reads each request's head and
// then either says nothing (hang) or sends a status line and one byte of
// a header every drip, never finishing the head. It counts the requests
// it was sent and stops when the test ends.
type badEngine struct {
	ln    net.Listener
	asked atomic.Int32
	// first and last are when the first and the last request came, in
	// Unix nanoseconds.
	first, last atomic.Int64
}

func startBadEngine(t *testing.T, drip time.Duration) *badEngine {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &badEngine{ln: ln}
	stop := make(chan struct{})
	done := make(chan struct{})
	var conns atomic.Int32
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					// One request head (these requests carry no body).
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if line == "\r\n" {
						break
					}
				}
				now := time.Now().UnixNano()
				e.first.CompareAndSwap(0, now)
				e.last.Store(now)
				e.asked.Add(1)
				if drip > 0 {
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Drip: ")
				}
				for {
					var tick <-chan time.Time
					if drip > 0 {
						tick = time.After(drip)
					}
					select {
					case <-stop:
						return
					case <-tick:
						if _, err := io.WriteString(c, "a"); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		close(stop)
		ln.Close()
		<-done
	})
	return e
}

func (e *badEngine) URL() string { return "http://" + e.ln.Addr().String() }

// badEngines are the two engines that hold an answer: one that never
// answers, one that sends its head a byte every 0.3 s.
var badEngines = []struct {
	name string
	drip time.Duration
}{{"hang", 0}, {"drip", 300 * time.Millisecond}}

// TestMetasearchEngineDeadline: the metasearch with a good engine and a
// bad one answers within the bad engine's timeout (plus slack for a
// loaded machine), with the good engine's results and the bad engine's
// error. An engine dripping its head a byte at a time held the whole
// page for as long as it dripped.
func TestMetasearchEngineDeadline(t *testing.T) {
	d := startDemo(t, demo.Options{})
	for _, be := range badEngines {
		t.Run(be.name, func(t *testing.T) {
			bad := startBadEngine(t, be.drip)
			slow := Engine{Name: "bad", URL: bad.URL(), Adapter: engine.Config{Kind: "elasticsearch"}, Timeout: deadlineTimeout}
			good := esEngine(d.URL())
			good.Timeout = deadlineTimeout
			_, base := startProxy(t, Options{Engines: []Engine{good, slow}})
			client := &http.Client{Timeout: deadlineTimeout + 2*deadlineSlack}
			start := time.Now()
			resp, err := client.Get(base + "/_winnow/search.json?q=benchmark")
			took := time.Since(start)
			t.Logf("metasearch with a %s engine (timeout %s): %s", be.name, deadlineTimeout, took.Round(time.Millisecond))
			if err != nil {
				t.Fatalf("the search page: %v after %s (winnow waited for the %s engine)", err, took, be.name)
			}
			groups, errs := searchPageEngines(t, resp)
			if groups == 0 || errs["bad"] == "" || errs["es"] != "" {
				t.Errorf("%d groups, engine errors %q; want the demo's results and the bad engine's error", groups, errs)
			}
			if took > deadlineTimeout+deadlineSlack {
				t.Errorf("the page took %s; want it within the engine timeout %s (plus %s slack)", took, deadlineTimeout, deadlineSlack)
			}
		})
	}
}

// TestTransparentEngineDeadline: in transparent mode a bad engine gets a
// 504 after about one timeout: the rewritten request and the client's
// own request passed through share one deadline, so once the first has
// used it the second is not even sent. Each waited a timeout of its own,
// so the client waited two. The same holds for SearXNG's pages.
func TestTransparentEngineDeadline(t *testing.T) {
	for _, kind := range []struct{ kind, path string }{
		{"elasticsearch", "/_search?q=deadline&size=3"},
		{"searxng", "/search?q=deadline&format=json"},
	} {
		for _, be := range badEngines {
			t.Run(kind.kind+"/"+be.name, func(t *testing.T) {
				bad := startBadEngine(t, be.drip)
				e := Engine{Name: "bad", URL: bad.URL(), Adapter: engine.Config{Kind: kind.kind}, Timeout: deadlineTimeout}
				_, base := startProxy(t, Options{Engines: []Engine{e}})
				client := &http.Client{Timeout: deadlineTimeout + 2*deadlineSlack}
				start := time.Now()
				resp, err := client.Get(base + kind.path)
				took := time.Since(start)
				t.Logf("transparent %s with a %s engine (timeout %s): %s", kind.kind, be.name, deadlineTimeout, took.Round(time.Millisecond))
				if err != nil {
					t.Fatalf("GET: %v after %s", err, took)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusGatewayTimeout {
					t.Errorf("GET: %d, want 504", resp.StatusCode)
				}
				// The rewritten request is one (SearXNG: a few pages sent
				// at once); the fallback would come a timeout later.
				if n, spread := bad.asked.Load(), time.Duration(bad.last.Load()-bad.first.Load()); n == 0 || spread > deadlineTimeout/2 {
					t.Errorf("the engine was sent %d requests over %s; want those of the rewritten request only: a fallback past the deadline is not sent", n, spread)
				}
				if took > deadlineTimeout+deadlineSlack {
					t.Errorf("the 504 took %s; want it after about the engine timeout %s (plus %s slack)", took, deadlineTimeout, deadlineSlack)
				}
			})
		}
	}
}

// TestSearchContext: a search's context, made when first asked for,
// ends at the search's deadline and gives its engine requests the
// engine deadline; engineDeadline takes whichever of a context's
// deadline and the engine deadline it carries comes first.
func TestSearchContext(t *testing.T) {
	now := time.Now()
	r := &search{deadline: now.Add(3 * time.Second), engineDeadline: now.Add(2 * time.Second)}
	ctx := r.context()
	if d, ok := ctx.Deadline(); !ok || !d.Equal(r.deadline) {
		t.Errorf("context deadline %v, %v; want the search's %v", d, ok, r.deadline)
	}
	if d := engineDeadline(ctx); !d.Equal(r.engineDeadline) {
		t.Errorf("engineDeadline = %v, want the search's %v", d, r.engineDeadline)
	}
	if r.context() != ctx {
		t.Error("a second context() made a second context")
	}
	r.cancel()
	if ctx.Err() != context.Canceled {
		t.Errorf("after cancel: %v, want %v", ctx.Err(), context.Canceled)
	}
	if d := engineDeadline(context.Background()); !d.IsZero() {
		t.Errorf("engineDeadline(Background) = %v, want none", d)
	}
	early, cancel := context.WithDeadline(context.Background(), now.Add(time.Second))
	defer cancel()
	if d := engineDeadline(withEngineDeadline(early, now.Add(2*time.Second))); !d.Equal(now.Add(time.Second)) {
		t.Errorf("engineDeadline = %v, want the context's own, earlier, %v", d, now.Add(time.Second))
	}
}
