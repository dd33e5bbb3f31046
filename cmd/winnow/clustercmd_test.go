package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/similarity"
)

// startClusterService runs winnow cluster with args until the returned stop
// function is called; stop returns its exit code and stderr.
func startClusterService(t *testing.T, args ...string) (base string, stop func() (int, string)) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		args := append(args, "cluster", "-listen", addr)
		done <- run(ctx, args, strings.NewReader(""), &out, &errb, nil)
	}()
	base = "http://" + addr
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case c := <-done:
			t.Fatalf("winnow cluster exit %d: %s", c, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("winnow cluster did not come up: %v; %s", err, errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return base, func() (int, string) {
		cancel()
		return <-done, errb.String()
	}
}

// testSignature returns the encoding of a made-up signature, enough for
// a page that the service groups with its copies.
func testSignature(t *testing.T) []byte {
	t.Helper()
	sig := similarity.Signature{Tokens: 500, Simhash: 0x0123456789abcdef, MinHash: make([]uint16, 84), Lengths: []uint32{200, 150, 150}}
	for i := range sig.MinHash {
		sig.MinHash[i] = uint16(i * 7919)
	}
	enc, err := sig.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// TestBackendPebble runs the cluster service on the Pebble store, ingests
// a page and its copy, restarts it on the same directory and finds them
// in one group.
func TestBackendPebble(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "groups.pebble")
	enc := testSignature(t)
	urls := []string{"https://a.example/page", "https://b.example/copy"}
	sets := []string{"-set", "cluster.store=pebble", "-set", "cluster.path=" + dir}

	base, stop := startClusterService(t, sets...)
	cl, err := client.New(base, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cl.Ingest(context.Background(), []client.Page{{URL: urls[0], Signature: enc}, {URL: urls[1], Signature: enc}})
	if err != nil || len(res) != 2 || res[0].Group == "" || res[0].Group != res[1].Group {
		t.Fatalf("ingest: %+v, %v; want both pages in one group", res, err)
	}
	if code, errs := stop(); code != 0 {
		t.Fatalf("winnow cluster exit %d: %s", code, errs)
	}

	base, stop = startClusterService(t, sets...)
	defer stop()
	cl, err = client.New(base, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lr, err := cl.Lookup(context.Background(), urls)
	if err != nil || len(lr) != 2 || !lr[0].Known || lr[0].Group != res[0].Group || lr[1].Group != res[0].Group {
		t.Errorf("lookup after restart: %+v, %v; want both in group %s", lr, err, res[0].Group)
	}
}

// TestFormerCommandName: winnow backend, the cluster service's former
// name, still runs it, and says to use winnow cluster.
func TestFormerCommandName(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-set", "backend.store=memory", "backend", "-h"}, strings.NewReader(""), &out, &errb, nil)
	if code != 0 {
		t.Fatalf("winnow backend -h = exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"deprecated command name", "use=cluster", "usage: winnow cluster", "backend.* is now cluster.*"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr %q: no %q", errb.String(), want)
		}
	}
}

// TestClusterVersionsHTTP runs winnow cluster and speaks its HTTP API
// as a crawler would, in JSON: an older version of a page sent after a
// newer one is answered "stale" with the stored version and not applied,
// /metrics counts it, and a batch naming other signing settings than
// the first batch's is refused with 409, naming both.
func TestClusterVersionsHTTP(t *testing.T) {
	enc := testSignature(t)
	base, stop := startClusterService(t, "-set", "cluster.store=memory")
	defer stop()
	post := func(body string) (int, string) {
		t.Helper()
		resp, err := http.Post(base+"/v1/ingest", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	page := func(version int, deleted bool) string {
		if deleted {
			return fmt.Sprintf(`{"url":"https://a.example/p","deleted":true,"version":%d}`, version)
		}
		return fmt.Sprintf(`{"url":"https://a.example/p","signature":%q,"version":%d}`, base64.StdEncoding.EncodeToString(enc), version)
	}
	const mine, theirs = "0123456789abcdef", "fedcba9876543210"
	for _, c := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"newer", `{"signer_fingerprint":"` + mine + `","pages":[` + page(1700000000000000002, false) + `]}`, 200, `"status":"new","version":1700000000000000002`},
		{"older", `{"signer_fingerprint":"` + mine + `","pages":[` + page(1700000000000000001, false) + `]}`, 200, `"status":"stale","version":1700000000000000002`},
		{"newer delete", `{"pages":[` + page(1700000000000000003, true) + `]}`, 200, `"status":"deleted","version":1700000000000000003`},
		{"older after the delete", `{"pages":[` + page(1700000000000000002, false) + `]}`, 200, `"status":"stale","version":1700000000000000003`},
		{"other signer", `{"signer_fingerprint":"` + theirs + `","pages":[` + page(1700000000000000009, false) + `]}`, 409, "signed with settings " + theirs + ", the store's signatures with " + mine},
	} {
		status, body := post(c.body)
		if status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want %d with %s", c.name, status, body, c.status, c.want)
		}
	}
	cl, err := client.New(base, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if lr, err := cl.Lookup(context.Background(), []string{"https://a.example/p"}); err != nil || lr[0].Known {
		t.Errorf("lookup after the versioned delete: %+v, %v; want unknown", lr, err)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`winnow_cluster_service_ingest_pages_total{status="stale"} 2`,
		`winnow_cluster_service_ingest_batches_signer_total{signer="missing"} 2`,
		`winnow_cluster_service_ingest_batches_signer_total{signer="refused"} 1`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics: no %q", want)
		}
	}
}
