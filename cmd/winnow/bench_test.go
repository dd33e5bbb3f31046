package main

import (
	"encoding/json"
	"testing"
)

func TestBench(t *testing.T) {
	if testing.Short() {
		t.Skip("loads loopback servers for 2s")
	}
	code, out, errs := winnow(t, "", "bench", "-duration", "2s", "-conns", "4", "-json")
	if code != 0 {
		t.Fatalf("winnow bench = %d, stderr:\n%s", code, errs)
	}
	var r benchReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bench -json output: %v\n%s", err, out)
	}
	for _, p := range []struct {
		name string
		p    phaseReport
	}{{"passthrough", r.Passthrough}, {"winnow", r.Winnow}} {
		if p.p.RPS <= 0 || p.p.Requests == 0 || p.p.Errors != 0 || p.p.Non2xx != 0 || p.p.P99Ms <= 0 {
			t.Errorf("%s = %+v, want requests, no errors", p.name, p.p)
		}
	}
	if want := len(benchQueries) * 50; r.MarkedHits != want {
		t.Errorf("marked results = %d of %d, want %d (the top 50 of each query)", r.MarkedHits, r.CheckedHits, want)
	}
	if r.Signatures["cached"] == 0 || r.Signatures["fetched"] != 0 {
		t.Errorf("signatures during the run = %v, want all cached", r.Signatures)
	}
	if r.Memory.PeakMiB <= 0 || r.Memory.CacheMiB != 256 {
		t.Errorf("memory = %+v, want RSS samples and the default 256 MiB cache", r.Memory)
	}
}

func TestBenchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "-results", "60"},
		{"bench", "-duration", "0s"},
		{"bench", "extra"},
	} {
		if code, _, errs := winnow(t, "", args...); code != 2 {
			t.Errorf("winnow %q = %d, want 2 (stderr %q)", args, code, errs)
		}
	}
}

// TestBenchChurnSoak runs a short soak in which every page shows under
// many URLs: signatures are fetched throughout, the 1 MiB cache fills and
// stays within its size, and no request fails.
func TestBenchChurnSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("loads loopback servers for 4s")
	}
	code, out, errs := winnow(t, "", "-set", "serve.cache_bytes=1048576", "bench", "-duration", "1s", "-conns", "4",
		"-soak", "3s", "-churn", "50", "-json")
	if code != 0 {
		t.Fatalf("winnow bench -churn = %d, stderr:\n%s", code, errs)
	}
	var r benchReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bench -json output: %v\n%s", err, out)
	}
	s := r.Soak
	if s == nil {
		t.Fatalf("no soak in the report:\n%s", out)
	}
	if s.URLs != len(benchQueries)*50 || s.SigsFetched == 0 || s.Winnow.Requests == 0 || s.Winnow.Errors+s.Winnow.Non2xx != 0 {
		t.Errorf("soak = %d URLs, %v fetched, %+v; want %d URLs, fetches, no errors", s.URLs, s.SigsFetched, s.Winnow, len(benchQueries)*50)
	}
	if s.CacheMiB != 1 || s.CacheUsedMiB <= 0 || s.CacheUsedMiB > 1 {
		t.Errorf("cache %.2f of %.2f MiB used, want a full 1 MiB cache", s.CacheUsedMiB, s.CacheMiB)
	}
}
