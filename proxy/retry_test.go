package proxy

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/winnow-search/winnow/proxy/engine"
)

// TestRetryNotForCursors: a request the engine read and then dropped the
// connection of (a cut, an engine restart) is sent again only when a
// second run does no harm. A plain search is; a request that opens or
// moves a cursor is not: a second scroll or point in time opened would
// stay open on the engine until its keep-alive ends, and a scroll
// continuation sent twice skips a page. Before, such requests were sent
// again, the continuation only by accident (its engine-side ID failed
// the gate's check in the retry hook).
func TestRetryNotForCursors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	seen := map[string]int{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				// Read one request head, count it, and drop the
				// connection without an answer: the engine may have
				// acted on it.
				r := bufio.NewReader(c)
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				for {
					h, err := r.ReadString('\n')
					if err != nil || h == "\r\n" {
						break
					}
				}
				mu.Lock()
				seen[strings.Fields(line)[1]]++
				mu.Unlock()
			}()
		}
	}()
	_, base := startProxy(t, Options{Engines: []Engine{{Name: "es", URL: "http://" + ln.Addr().String(),
		Adapter: engine.Config{Kind: "elasticsearch"}}}})
	for _, tc := range []struct {
		method, path string
		again        bool
	}{
		{"GET", "/i/_search?q=x&winnow_mode=off", true},
		{"GET", "/i/_search?q=x&scroll=1m&winnow_mode=off", false},
		{"POST", "/i/_pit?keep_alive=1m", false},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Errorf("%s %s: %d, want 502 (the engine answered nothing)", tc.method, tc.path, resp.StatusCode)
		}
		mu.Lock()
		n := 0
		for p, k := range seen {
			if strings.HasPrefix(p, strings.SplitN(tc.path, "&winnow_mode", 2)[0]) {
				n += k
			}
		}
		mu.Unlock()
		if again := n > 1; again != tc.again {
			t.Errorf("%s %s reached the engine %d times; sent again: %v, want %v", tc.method, tc.path, n, again, tc.again)
		}
	}
}
