package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/cluster/client"
)

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServe runs winnow serve with args until the test ends and waits
// until addr answers /healthz.
func startServe(t *testing.T, addr string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append(args, "serve", "-listen", addr), strings.NewReader(""), &out, &errb, nil)
	}()
	t.Cleanup(func() {
		cancel()
		if c := <-done; c != 0 {
			t.Errorf("winnow serve exit %d: %s", c, errb.String())
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			return
		}
		select {
		case c := <-done:
			done <- c
			t.Fatalf("winnow serve exit %d: %s", c, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("winnow serve did not come up: %v; %s", err, errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWalkthrough runs the README's cluster-service walk-through: winnow
// cluster, winnow dedup -cluster (the embedded sample, under the URLs the
// demo engine serves it at), winnow serve -set serve.cluster=...; the
// proxy's lookups are then known to the service, as its /metrics count.
func TestWalkthrough(t *testing.T) {
	demoAddr, proxyAddr := freeAddr(t), freeAddr(t)
	store := filepath.Join(t.TempDir(), "groups.db")
	base, stop := startClusterService(t, "-set", "cluster.path="+store)
	defer func() {
		if c, errs := stop(); c != 0 {
			t.Errorf("winnow cluster exit %d: %s", c, errs)
		}
	}()
	code, _, errs := winnow(t, "", "-set", "dedup.progress=never", "-set", "serve.demo_listen="+demoAddr,
		"dedup", "-o", os.DevNull, "-cluster", base)
	if code != 0 || !strings.Contains(errs, "loaded into") || !strings.Contains(errs, "not loaded: none") {
		t.Fatalf("winnow dedup -cluster = exit %d: %s", code, errs)
	}
	cl, err := client.New(base, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	demo := "http://" + demoAddr + "/pages/"
	res, err := cl.Lookup(context.Background(), []string{demo + "13/Benchmarking.html", demo + "22/Benchmarking.html"})
	if err != nil || len(res) != 2 || !res[0].Known || res[0].Group == "" || res[0].Group != res[1].Group {
		t.Fatalf("lookup after loading the sample: %+v, %v; want both releases in one group", res, err)
	}
	known0, unknown0 := lookupCounts(t, base)

	startServe(t, proxyAddr, "-set", "serve.cluster="+base, "-set", "serve.demo_listen="+demoAddr)
	resp, err := http.Get("http://" + proxyAddr + "/llvm/_search?q=benchmark&size=5")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), demo+"13/Benchmarking.html") {
		t.Fatalf("search through the proxy: %s\n%.500s", resp.Status, body)
	}
	known, unknown := lookupCounts(t, base)
	if known-known0 < 2 || unknown != unknown0 {
		t.Errorf("after a search through the proxy the service counts %d known and %d unknown lookups more; want the results known, none unknown",
			known-known0, unknown-unknown0)
	}
	// The proxy's /metrics counts the same lookups from its side.
	resp, err = http.Get("http://" + proxyAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	pk := regexp.MustCompile(`(?m)^winnow_cluster_lookup_urls_total\{result="known"\} (\d+)$`).FindStringSubmatch(string(body))
	pu := regexp.MustCompile(`(?m)^winnow_cluster_lookup_urls_total\{result="unknown"\} (\d+)$`).FindStringSubmatch(string(body))
	if pk == nil || pu == nil || pk[1] == "0" || pu[1] != "0" {
		t.Errorf("proxy /metrics: known %v, unknown %v; want some known, 0 unknown", pk, pu)
	}
}

var lookupResult = regexp.MustCompile(`(?m)^winnow_cluster_service_lookup_results_total\{result="(known|unknown)"\} (\d+)$`)

// lookupCounts reads the cluster service's lookups known and unknown from
// its /metrics.
func lookupCounts(t *testing.T, base string) (known, unknown int) {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := lookupResult.FindAllStringSubmatch(string(b), -1)
	if len(m) != 2 {
		t.Fatalf("/metrics of the cluster service has no lookup results by kind:\n%s", b)
	}
	for _, g := range m {
		n, _ := strconv.Atoi(g[2])
		if g[1] == "known" {
			known = n
		} else {
			unknown = n
		}
	}
	return known, unknown
}
