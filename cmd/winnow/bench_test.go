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
