package indextag_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/indextag"
	"github.com/winnow-search/winnow/internal/realengine"
	"github.com/winnow-search/winnow/internal/toxiproxy"
)

// TestNetworkFaults runs winnow index -apply through Toxiproxy in front of
// real OpenSearch (read by sliced scroll) and Elasticsearch (point in
// time). A slow, jittery network that also resets a third of the
// connections when their first answer comes (after the engine acted on
// the request: a bulk write applied, its answer lost): every document
// tagged as winnow dedup groups it, none lost or doubled. An engine whose
// every read answer is cut after 20 KB: retried for RetryFor, saying so
// in the log while it retries (it said nothing: a run retrying for the
// default 10 minutes was silent), then an error naming the cut, with
// nothing written.
func TestNetworkFaults(t *testing.T) {
	tp := toxiproxy.Start(t)
	for _, kind := range []string{"opensearch", "elasticsearch"} {
		t.Run(kind, func(t *testing.T) {
			through := func(t *testing.T, e *engine, toxics ...toxiproxy.Toxic) (*engine, *bytes.Buffer) {
				u, _ := url.Parse(e.base)
				p := tp.Proxy(t, strings.ReplaceAll(t.Name(), "/", "-"), u.Host)
				for _, x := range toxics {
					p.Add(t, x)
				}
				proxied := *e
				proxied.base = p.URL() + u.Path
				return &proxied, new(bytes.Buffer)
			}
			t.Run("flaky", func(t *testing.T) {
				e := load(t, kind)
				pe, logs := through(t, e,
					toxiproxy.Toxic{Name: "latency", Type: "latency", Attributes: map[string]any{"latency": 30, "jitter": 30}},
					toxiproxy.Toxic{Name: "latency-up", Type: "latency", Stream: "upstream", Attributes: map[string]any{"latency": 10, "jitter": 10}},
					toxiproxy.Toxic{Name: "reset", Type: "reset_peer", Toxicity: 0.3, Attributes: map[string]any{"timeout": 0}})
				o := options(t, pe)
				o.Apply, o.Batch = true, 20
				o.Logger = slog.New(slog.NewTextHandler(logs, nil))
				rep, err := indextag.Run(context.Background(), o)
				if err != nil {
					t.Fatalf("%v\n%s", err, logs)
				}
				if n := realengine.DocCount(t, kind, e.base, e.index); n != len(e.docs) {
					t.Errorf("%d documents after the run, want %d", n, len(e.docs))
				}
				st := e.state(t)
				checkGroups(t, e, st, dedupGroups(t, e, st))
				t.Logf("written %d, already tagged %d, re-read %d, retries %v", rep.Writes.Written, rep.Writes.Unchanged, rep.Writes.Reread, rep.Writes.Retries)
			})
			t.Run("cut", func(t *testing.T) {
				e := load(t, kind)
				pe, logs := through(t, e, toxiproxy.Toxic{Name: "cut", Type: "limit_data", Attributes: map[string]any{"bytes": 20000}})
				o := options(t, pe)
				o.Apply, o.RetryFor, o.MaxBackoff = true, 2*time.Second, 200*time.Millisecond
				o.Logger = slog.New(slog.NewTextHandler(logs, nil))
				start := time.Now()
				_, err := indextag.Run(context.Background(), o)
				took := time.Since(start)
				if err == nil || !strings.Contains(err.Error(), "gave up after 2s") || !strings.Contains(err.Error(), "unexpected EOF") {
					t.Fatalf("every answer cut: err = %v; want the retries given up, naming the cut", err)
				}
				if took > 30*time.Second {
					t.Errorf("gave up after %v, RetryFor 2s", took)
				}
				if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "retrying") || !strings.Contains(logs.String(), "unexpected EOF") {
					t.Errorf("nothing logged while retrying cut answers for %v:\n%s", took, logs)
				}
				for id, s := range e.state(t) {
					if s.group != "" {
						t.Errorf("%s tagged %q by a run that failed reading", id, s.group)
					}
				}
			})
		})
	}
}
