package bench

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// rssSampler reads the process's resident memory (VmRSS) every second.
type rssSampler struct {
	mu      sync.Mutex // guards samples and from
	samples []rssSample
	from    int // index of the first sample of the measured run
	done    chan struct{}
	wg      sync.WaitGroup
}

type rssSample struct {
	at  time.Time
	rss int64
}

func newRSSSampler() *rssSampler {
	s := &rssSampler{done: make(chan struct{})}
	s.sample()
	s.wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				s.sample()
			}
		}
	})
	return s
}

func (s *rssSampler) stop() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.wg.Wait()
}

func (s *rssSampler) sample() {
	v := readRSS()
	s.mu.Lock()
	s.samples = append(s.samples, rssSample{time.Now(), v})
	s.mu.Unlock()
}

// mark takes a sample now and starts the measured run there.
func (s *rssSampler) mark() {
	s.sample()
	s.mu.Lock()
	s.from = len(s.samples) - 1
	s.mu.Unlock()
}

// since returns the samples taken at or after t.
func (s *rssSampler) since(t time.Time) []rssSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []rssSample
	for _, x := range s.samples {
		if !x.at.Before(t) {
			out = append(out, x)
		}
	}
	return out
}

// memoryLimit is the resident-memory target: the configured caches and
// bound on answers in flight + 150 MiB.
func (be *env) memoryLimit() int64 {
	return be.cacheSize + be.answerSize + be.inflightSize + targetRSSMargin
}

func (s *rssSampler) report(be *env) Memory {
	s.sample()
	s.mu.Lock()
	run := append([]rssSample(nil), s.samples[s.from:]...)
	s.mu.Unlock()
	var m Memory
	for _, x := range run {
		m.PeakMiB = max(m.PeakMiB, mib(x.rss))
	}
	m.StartMiB, m.EndMiB = mib(run[0].rss), mib(run[len(run)-1].rss)
	m.SampleSeconds = len(run)
	m.CacheMiB, m.AnswerCacheMiB = mib(be.cacheSize), mib(be.answerSize)
	m.CacheUsedMiB = mib(be.win.Stats().CacheUsedBytes)
	m.LimitMiB = mib(be.memoryLimit())
	m.WithinLimit = m.PeakMiB <= m.LimitMiB
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.HeapInuseMiB, m.GoSysMiB = mib(int64(ms.HeapInuse)), mib(int64(ms.Sys))
	return m
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// readRSS returns VmRSS from /proc/self/status in bytes, 0 if unknown.
func readRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				return 0
			}
			kb, _ := strconv.ParseInt(f[0], 10, 64)
			return kb << 10
		}
	}
	return 0
}
