package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/internal/demo"
)

// BenchmarkLargeAnswers sends eight concurrent requests for 50 MB
// answers (with a Content-Length) through a proxy with the default bound
// on answers in flight, and reports the process's peak resident memory
// over the run (VmHWM, reset after set-up, beside the RSS then; engine, proxy and clients share
// the process, the engine generating its answers as it writes them and
// the clients hashing theirs as they read). Run it alone:
//
//	go test -run '^$' -bench LargeAnswers -benchtime 3x ./proxy
func BenchmarkLargeAnswers(b *testing.B) {
	const clients, pad = 8, 50_000_000
	eng := startLargeEngine(b)
	_, base := startProxy(b, Options{Engines: []Engine{largeEngine(eng.URL)}})
	// Reset the peak RSS of the process (Linux: clear_refs "5").
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
	baseRSS := procStatus(b, "VmRSS")
	b.SetBytes(clients * pad)
	round := 0
	for b.Loop() {
		var wg sync.WaitGroup
		for i := range clients {
			url := fmt.Sprintf("%s/%d/_search?q=r%dc%d&size=3", base, pad, round, i)
			wg.Go(func() {
				req, _ := http.NewRequest("GET", url, nil)
				req.Header.Set("Accept-Encoding", "identity") // no gzip on either side
				resp, err := http.DefaultTransport.RoundTrip(req)
				if err != nil {
					b.Error(err)
					return
				}
				defer resp.Body.Close()
				if n, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != 200 || n < pad {
					b.Errorf("GET %s: %d, %d bytes, %v", url, resp.StatusCode, n, err)
				}
			})
		}
		wg.Wait()
		round++
	}
	b.ReportMetric(float64(baseRSS)/(1<<20), "start-RSS-MiB")
	b.ReportMetric(float64(procStatus(b, "VmHWM"))/(1<<20), "peak-RSS-MiB")
}

// procStatus returns a size in bytes from /proc/self/status.
func procStatus(b *testing.B, key string) int64 {
	b.Helper()
	f, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(f))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if ok && string(k) == key {
			kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc/self/status", key)
	return 0
}

// BenchmarkTransparentHTTP50 is a warm search of 50 results through the
// proxy over loopback HTTP, end to end (demo engine, proxy and a fasthttp
// client in one process): what streaming and admitting engine answers
// add, or save, for normal small answers. "cached" answers from the
// answer cache; "refined" has it off, so every answer is read, parsed,
// refined and rendered.
func BenchmarkTransparentHTTP50(b *testing.B) {
	d := startDemo(b, demo.Options{})
	for _, c := range []struct {
		name  string
		bytes int64
	}{{"cached", 0}, {"refined", -1}} {
		b.Run(c.name, func(b *testing.B) {
			s, base := startProxy(b, Options{Engines: []Engine{esEngine(d.URL())}, AnswerCacheBytes: c.bytes})
			url := base + "/llvm/_search?q=the&size=50"
			for range 3 { // signatures cached, answer seen twice
				if code, body := get(b, url); code != http.StatusOK {
					b.Fatalf("warm-up GET = %d %s", code, body)
				}
				s.ref.wait()
			}
			client := &fasthttp.Client{}
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.SetRequestURI(url)
			b.ReportAllocs()
			for b.Loop() {
				if err := client.Do(req, resp); err != nil || resp.StatusCode() != 200 {
					b.Fatalf("GET: %d %v", resp.StatusCode(), err)
				}
			}
			b.SetBytes(int64(len(resp.Body())))
		})
	}
}
