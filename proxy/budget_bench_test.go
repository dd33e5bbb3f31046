package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/internal/demo"
)

// BenchmarkLargeAnswers sends concurrent requests for large answers
// (with a Content-Length) through a proxy with the default bound on
// answers in flight (128 MiB), and reports the process's peak resident
// memory over the run (VmHWM, reset after set-up) beside the RSS then,
// and the bound; engine, proxy and clients share the process, the engine
// generating its answers as it writes them and the clients hashing
// theirs as they read. "41MBx8": eight 41 MB answers read at full speed;
// "mixed-slow": eight of 41, 20, 10 and 3 MB, half of them read at
// 16 MB/s by clients with small receive windows, so refined answers wait
// in winnow for their clients; "mixed-32-slow": 32 of 41 MB down to
// 1 KB, half of them slow; "small-64-slow": 64 of 1 MB down to 1 KB,
// half slow. over-start-MiB, the peak less the start, is what to hold
// against bound-MiB. Run each mix alone, in a process of its own:
//
//	go test -run '^$' -bench 'LargeAnswers/41MBx8$' -benchtime 3x ./proxy
func BenchmarkLargeAnswers(b *testing.B) {
	for _, c := range []struct {
		name string
		pads []int
		slow bool
	}{
		{"41MBx8", []int{41e6, 41e6, 41e6, 41e6, 41e6, 41e6, 41e6, 41e6}, false},
		{"mixed-slow", []int{41e6, 20e6, 10e6, 3e6, 41e6, 20e6, 10e6, 3e6}, true},
		{"mixed-32-slow", spread(32, 41e6), true},
		{"small-64-slow", spread(64, 1e6), true},
	} {
		b.Run(c.name, func(b *testing.B) {
			eng := startLargeEngine(b)
			s, base := startProxy(b, Options{Engines: []Engine{largeEngine(eng.URL)}})
			// The collector as winnow serve runs it: GOGC 400 under the
			// memory limit the proxy keeps.
			defer debug.SetGCPercent(debug.SetGCPercent(400))
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			s.LimitMemory(ctx, 100*time.Millisecond)
			debug.FreeOSMemory()
			// Reset the peak RSS of the process (Linux: clear_refs "5").
			if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
				b.Skipf("cannot reset the peak RSS: %v", err)
			}
			baseRSS := procStatus(b, "VmRSS")
			total := 0
			for _, p := range c.pads {
				total += p
			}
			b.SetBytes(int64(total))
			round := 0
			for b.Loop() {
				var wg sync.WaitGroup
				for i, pad := range c.pads {
					path := fmt.Sprintf("/%d/_search?q=r%dc%d&size=3", pad, round, i)
					rate := 0.0
					if c.slow && i%2 == 1 {
						rate = 16 << 20
					}
					wg.Go(func() {
						if n, err := benchGet(base[len("http://"):], path, rate); err != nil || n < int64(pad) {
							b.Errorf("GET %s: %d bytes, %v", path, n, err)
						}
					})
				}
				wg.Wait()
				round++
			}
			b.ReportMetric(float64(baseRSS)/(1<<20), "start-RSS-MiB")
			peak := procStatus(b, "VmHWM")
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
			b.ReportMetric(float64(peak-baseRSS)/(1<<20), "over-start-MiB")
			b.ReportMetric(float64(s.o.AnswerBytesInFlight)/(1<<20), "bound-MiB")
			b.ReportMetric(float64(s.MemoryLimit())/(1<<20), "limit-MiB")
			b.ReportMetric(float64(s.inflight.highWater())/(1<<20), "held-peak-MiB")
		})
	}
}

// spread is n answer sizes from largest down to 1 KB, each a quarter
// smaller than the last, starting again at largest below 1 KB; the last
// is 1 KB.
func spread(n, largest int) []int {
	sizes := make([]int, n)
	size := largest
	for i := range sizes {
		sizes[i] = size
		if size = size * 3 / 4; size < 1000 {
			size = largest
		}
	}
	sizes[n-1] = 1000
	return sizes
}

// benchGet GETs path from addr on a connection of its own and reads the
// answer's body to its end, at rate bytes a second through a 256 KiB
// receive window when rate is not zero, else as fast as it comes. It
// returns the bytes of the body.
func benchGet(addr, path string, rate float64) (int64, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	var r io.Reader = c
	if rate != 0 {
		if err := c.(*net.TCPConn).SetReadBuffer(256 << 10); err != nil {
			return 0, err
		}
		r = &throttled{r: c, rate: rate}
	}
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, addr)
	resp, err := http.ReadResponse(bufio.NewReaderSize(r, 32<<10), nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	return io.Copy(io.Discard, resp.Body)
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
