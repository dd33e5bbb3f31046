// Package toxiproxy gives tests Shopify's Toxiproxy, the TCP proxy SREs
// put between a program and its servers to inject network faults:
// latency, bandwidth limits, connections that stop passing data, resets,
// answers dripped in slices or cut after some bytes.
//
// [Start] builds the pinned server ([Version]) with the go command from
// the Go module proxy, once per machine (the binary is kept in the
// user's cache directory), runs it on loopback for the test and stops it
// when the test ends. When it cannot be built (no network, no module
// proxy) the test is skipped with the reason, or fails when CI is "true".
// [Server.Proxy] puts a proxy in front of an address; [Proxy.Add] adds a
// toxic through Toxiproxy's HTTP API, spoken here with net/http (its Go
// client package would add a module for a few JSON calls).
package toxiproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Version is the Toxiproxy release the tests run (the module
// github.com/Shopify/toxiproxy/v2 at this version).
const Version = "v2.12.0"

// pkg is the server's main package.
const pkg = "github.com/Shopify/toxiproxy/v2/cmd/server"

// Server is a running Toxiproxy server.
type Server struct {
	api string // http://127.0.0.1:PORT
}

// Proxy is one proxy of a [Server]: clients connect to Listen, and it
// passes their connections on to its upstream through its toxics.
type Proxy struct {
	s    *Server
	Name string
	// Listen is the proxy's address, host:port on loopback.
	Listen string
}

// Toxic is a fault of a proxy. Stream is "downstream" (the server's
// answers; the default) or "upstream" (the client's requests); Toxicity
// is the share of connections it applies to, 1 when 0. Attributes are
// the type's own (latency: latency, jitter in ms; bandwidth: rate in
// KB/s; slow_close: delay in ms; timeout: timeout in ms, 0 never closes;
// reset_peer: timeout in ms; slicer: average_size, size_variation in
// bytes, delay in µs; limit_data: bytes).
type Toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Stream     string         `json:"stream,omitempty"`
	Toxicity   float64        `json:"toxicity,omitempty"`
	Attributes map[string]any `json:"attributes"`
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// Start runs a Toxiproxy server on loopback for t, building it first if
// need be, and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	buildOnce.Do(func() { binary, buildErr = build() })
	if buildErr != nil {
		unavailable(t, buildErr)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	var out bytes.Buffer
	cmd := exec.Command(binary, "-host", "127.0.0.1", "-port", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	s := &Server{api: fmt.Sprintf("http://127.0.0.1:%d", port)}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := s.call("GET", "/version", nil, nil); err == nil {
			return s
		}
		select {
		case <-done:
			t.Fatalf("toxiproxy exited: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("toxiproxy did not answer on port %d within 10s: %s", port, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// unavailable skips t, or fails it under CI=true.
func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("toxiproxy: %v", err)
	}
	t.Skipf("toxiproxy unavailable: %v", err)
}

// build installs the pinned server into the user's cache directory
// unless it is there, and returns its path. It is built under a
// temporary name and renamed, so test binaries building at once each get
// a whole file.
func build() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "winnow", "toxiproxy-"+Version)
	bin := filepath.Join(dir, "toxiproxy-server")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, "build")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "install", pkg+"@"+Version)
	// Outside any module and workspace, with the module proxy's
	// checksums verified as for every module.
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %v: %s", pkg, Version, err, lastLines(string(out), 5))
	}
	if err := os.Rename(filepath.Join(tmp, "server"), bin); err != nil {
		return "", err
	}
	return bin, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// call sends a request to the server's API with body as JSON and
// decodes a JSON answer into out (nil: discarded).
func (s *Server) call(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.api+path, rd)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("toxiproxy: %s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// Proxy creates a proxy named name listening on a free loopback port,
// passing connections on to upstream (host:port), without toxics.
func (s *Server) Proxy(t testing.TB, name, upstream string) *Proxy {
	t.Helper()
	var got struct {
		Listen string `json:"listen"`
	}
	err := s.call("POST", "/proxies", map[string]any{"name": name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true}, &got)
	if err != nil {
		t.Fatal(err)
	}
	return &Proxy{s: s, Name: name, Listen: got.Listen}
}

// URL is the proxy's address as an http URL.
func (p *Proxy) URL() string { return "http://" + p.Listen }

// Add adds a toxic to the proxy: it applies to the connections open now
// and to new ones.
func (p *Proxy) Add(t testing.TB, x Toxic) {
	t.Helper()
	if x.Toxicity == 0 {
		x.Toxicity = 1
	}
	if err := p.s.call("POST", "/proxies/"+p.Name+"/toxics", x, nil); err != nil {
		t.Fatal(err)
	}
}

// Remove removes the toxic named name.
func (p *Proxy) Remove(t testing.TB, name string) {
	t.Helper()
	if err := p.s.call("DELETE", "/proxies/"+p.Name+"/toxics/"+name, nil, nil); err != nil {
		t.Fatal(err)
	}
}

// Clear removes every toxic of the proxy.
func (p *Proxy) Clear(t testing.TB) {
	t.Helper()
	var toxics []Toxic
	if err := p.s.call("GET", "/proxies/"+p.Name+"/toxics", nil, &toxics); err != nil {
		t.Fatal(err)
	}
	for _, x := range toxics {
		p.Remove(t, x.Name)
	}
}
