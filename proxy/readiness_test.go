package proxy

import (
	"net"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/internal/demo"
)

// TestReadyzProbesEngines: /readyz is ready only while the transparent
// engine accepts connections, and names each engine's state; a
// metasearch engine that is down leaves the proxy ready.
func TestReadyzProbesEngines(t *testing.T) {
	// An address nothing listens on: a listener opened and closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()

	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(dead)}})
	code, body := get(t, base+"/readyz")
	if code != 503 || !strings.Contains(body, "engine es: unreachable") {
		t.Errorf("transparent engine down: /readyz = %d %q, want 503 naming es unreachable", code, body)
	}
	if code, _ := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz = %d with the engine down, want 200 (the process lives)", code)
	}

	down := esEngine(dead)
	down.Name = "down"
	_, base = startProxy(t, Options{Engines: []Engine{esEngine(d.URL()), down}})
	code, body = get(t, base+"/readyz")
	if code != 200 || !strings.Contains(body, "engine es: reachable") || !strings.Contains(body, "engine down: unreachable") {
		t.Errorf("one of two engines down: /readyz = %d %q, want 200 naming both", code, body)
	}
}
