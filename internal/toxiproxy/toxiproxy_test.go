package toxiproxy

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestProxy: a proxy passes bytes through, and a limit_data toxic cuts
// the stream after its bytes.
func TestProxy(t *testing.T) {
	s := Start(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { c.Write([]byte(strings.Repeat("x", 1000))); c.Close() }()
		}
	}()
	p := s.Proxy(t, "echo", ln.Addr().String())
	read := func() int {
		c, err := net.DialTimeout("tcp", p.Listen, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(c)
		return len(b)
	}
	if n := read(); n != 1000 {
		t.Fatalf("read %d bytes through the proxy, want 1000", n)
	}
	p.Add(t, Toxic{Name: "cut", Type: "limit_data", Attributes: map[string]any{"bytes": 100}})
	if n := read(); n != 100 {
		t.Errorf("read %d bytes with limit_data 100", n)
	}
	p.Clear(t)
	if n := read(); n != 1000 {
		t.Errorf("read %d bytes after the toxics were removed", n)
	}
}
