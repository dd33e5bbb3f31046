package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/config"
)

// TestServeDemoDefaultAddressBusy checks that winnow serve with no
// configuration still starts when the demo engine's fixed default address
// is taken (another winnow serve, or anything else on the port): the
// engine moves to a free port and its search API answers through winnow.
func TestServeDemoDefaultAddressBusy(t *testing.T) {
	ln, err := net.Listen("tcp", config.DefaultDemoListen)
	if err == nil { // else it is busy already, which is the case under test
		defer ln.Close()
	}
	addr := freeAddr(t)
	startServe(t, addr)
	resp, err := http.Get("http://" + addr + "/llvm/_search?q=benchmark&size=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"_id":"sample://llvm/`) {
		t.Fatalf("status %d, body %.300s: want the demo engine's hits through winnow", resp.StatusCode, body)
	}
}
