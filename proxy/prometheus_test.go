package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	service "github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/internal/demo"
)

// needTool returns the path of a Debian tool the test needs: it skips
// when the tool is missing, or fails under CI (CI=true), where .ci/run
// installs it.
func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found on CI: install Debian's %s package", name, pkg)
		}
		t.Skipf("%s not installed (Debian package %s)", name, pkg)
	}
	return p
}

// metricsService starts the cluster service on loopback.
func metricsService(t *testing.T) (*service.Service, string) {
	svc, err := service.New(service.NewMemStore(), service.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(srv.Close)
	return svc, srv.URL
}

// TestMetricsPromtool checks the proxy's and the cluster service's
// /metrics with promtool: HELP and TYPE on every metric, histograms with
// le buckets, names and units as Prometheus lints them.
func TestMetricsPromtool(t *testing.T) {
	promtool := needTool(t, "promtool", "prometheus")
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, Budget: 2 * time.Second})
	get(t, base+"/llvm/_search?q=benchmark&size=5")
	get(t, base+"/_winnow/search?q=benchmark")
	_, svcURL := metricsService(t)
	cl, err := client.New(svcURL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Lookup(context.Background(), []string{"https://example.org/a"}); err != nil {
		t.Fatal(err)
	}
	for name, u := range map[string]string{"proxy": base + "/metrics", "cluster service": svcURL + "/metrics"} {
		code, text := get(t, u)
		if code != 200 {
			t.Fatalf("%s: GET /metrics = %d", name, code)
		}
		if !strings.Contains(text, `_bucket{le="0.001"}`) && !strings.Contains(text, `,le="0.001"}`) {
			t.Errorf("%s: no le buckets in /metrics:\n%s", name, text)
		}
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("%s: promtool check metrics: %v\n%s", name, err, out)
		}
	}
}

// TestPrometheus starts Debian's prometheus on loopback, scraping winnow
// and the cluster service every second while both are under load, and
// asks it what an operator's dashboard asks: a p99 latency from
// histogram_quantile over the le buckets, and a request rate.
func TestPrometheus(t *testing.T) {
	bin := needTool(t, "prometheus", "prometheus")
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, Budget: 2 * time.Second})
	_, svcURL := metricsService(t)
	cl, err := client.New(svcURL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n"+
		"  - job_name: winnow\n    static_configs: [{targets: [%q]}]\n"+
		"  - job_name: cluster\n    static_configs: [{targets: [%q]}]\n",
		strings.TrimPrefix(base, "http://"), strings.TrimPrefix(svcURL, "http://"))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr, "--log.level=warn")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })

	// Load both until Prometheus can answer, or a generous deadline.
	load := func() {
		get(t, base+"/llvm/_search?q=benchmark&size=5")
		get(t, base+"/llvm/_search?q=code+review&size=5&winnow_mode=remove")
		if _, err := cl.Lookup(context.Background(), []string{"https://example.org/a", "https://example.org/b"}); err != nil {
			t.Fatal(err)
		}
	}
	queries := map[string]string{
		"proxy p99":           `histogram_quantile(0.99, sum by (le) (rate(winnow_request_duration_seconds_bucket{job="winnow"}[1m])))`,
		"proxy rate":          `sum(rate(winnow_requests_total{job="winnow",route="proxy"}[1m]))`,
		"cluster lookup p99":  `histogram_quantile(0.99, sum by (le) (rate(winnow_cluster_service_lookup_batch_duration_seconds_bucket{job="cluster"}[1m])))`,
		"cluster lookup rate": `sum(rate(winnow_cluster_service_lookup_urls_total{job="cluster"}[1m]))`,
	}
	got := map[string]float64{}
	deadline := time.Now().Add(90 * time.Second)
	for len(got) < len(queries) && time.Now().Before(deadline) {
		for range 20 {
			load()
		}
		time.Sleep(200 * time.Millisecond)
		for name, q := range queries {
			if v, ok := promQuery(t, promAddr, q); ok && v > 0 && !math.IsInf(v, 0) {
				got[name] = v
			}
		}
	}
	for name, q := range queries {
		if _, ok := got[name]; !ok {
			t.Errorf("%s: Prometheus has no value for %s\nprometheus log:\n%s", name, q, logs.String())
		}
	}
	if p99 := got["proxy p99"]; p99 > 10 {
		t.Errorf("proxy p99 %.3fs: beyond the largest bucket", p99)
	}
	t.Logf("from Prometheus: %v", got)
}

// freeAddr returns a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// promQuery runs an instant query and returns its single scalar value.
func promQuery(t *testing.T, addr, q string) (float64, bool) {
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, false // not up yet
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" || len(r.Data.Result) != 1 {
		return 0, false
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && !math.IsNaN(v)
}
