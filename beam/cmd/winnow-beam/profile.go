package main

import (
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// peakProfiler writes a heap profile to a file each time the live heap
// reaches a new high, so that the file ends up holding the heap at its
// peak: prism frees most of a job's state when the job ends, so a profile
// taken at exit would not show where the memory went.
type peakProfiler struct {
	path string
	stop chan struct{}
	done chan struct{}
	peak uint64
	live uint64 // the most heap live after a collection
	err  error
}

// startPeakProfile samples the heap every interval. Stop it with end.
func startPeakProfile(path string, interval time.Duration) *peakProfiler {
	p := &peakProfiler{path: path, stop: make(chan struct{}), done: make(chan struct{})}
	go p.loop(interval)
	return p
}

func (p *peakProfiler) loop(interval time.Duration) {
	defer close(p.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			if p.peak == 0 {
				// A run shorter than the interval still gets its profile,
				// taken at its end.
				p.sample()
			}
			return
		case <-t.C:
			p.sample()
		}
	}
}

// sample reads the heap and writes the profile at a new high.
func (p *peakProfiler) sample() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		p.live = max(p.live, s[0].Value.Uint64())
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	// A new high by 5 % is worth the write; smaller steps are noise.
	if ms.HeapAlloc > p.peak+p.peak/20 {
		p.peak = ms.HeapAlloc
		if err := p.write(); err != nil && p.err == nil {
			p.err = err
		}
	}
}

func (p *peakProfiler) write() error {
	f, err := os.Create(p.path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// end stops sampling and returns the highest heap seen and the highest
// heap live after a collection, in bytes.
func (p *peakProfiler) end() (peak, live uint64, err error) {
	close(p.stop)
	<-p.done
	return p.peak, p.live, p.err
}

// startCPUProfile starts a CPU profile written to path, or nothing when
// path is empty; stop ends it and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
