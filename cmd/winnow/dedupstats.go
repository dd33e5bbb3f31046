package main

import (
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// stageTimes are the times of dedup's stages, so a user sees where a run
// spends its time. Reading, canonicalizing and signing overlap on every
// core: their times are summed over the goroutines doing them (busy
// time). The clustering's stages (candidates, verify, cluster) and the
// writing follow one another: their times are wall times. The zero value
// is ready; add and addRead are safe for concurrent use.
type stageTimes struct {
	read, canon, sign int64 // busy nanoseconds, summed atomically
	signWall          time.Duration
	batch             similarity.BatchStats
	write             time.Duration
	seqTokens         int           // word hashes kept for the verification
	cpu0              time.Duration // the process's CPU time at the start
}

// add counts the canonicalization and signing of one page.
func (t *stageTimes) add(r *page.Result) {
	atomic.AddInt64(&t.canon, int64(r.CanonTime))
	atomic.AddInt64(&t.sign, int64(r.SignTime))
}

// addRead counts time spent reading input.
func (t *stageTimes) addRead(d time.Duration) {
	atomic.AddInt64(&t.read, int64(d))
}

// processCPU returns the user and system CPU time of the process so far;
// zero where getrusage fails.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakResident returns the process's peak resident memory in bytes, zero
// where getrusage fails (Linux reports it in KiB).
func peakResident() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Maxrss) << 10 // int32 on 32-bit Linux
}

// cpuUse returns the CPU time used since the start (cpu0) and its share
// of the elapsed time, in percent (200 % is two cores busy throughout).
func (t *stageTimes) cpuUse(elapsed time.Duration) (time.Duration, float64) {
	cpu := processCPU() - t.cpu0
	if elapsed <= 0 {
		return cpu, 0
	}
	return cpu, 100 * cpu.Seconds() / elapsed.Seconds()
}

// cpuPercent is the share of cpuUse.
func (t *stageTimes) cpuPercent(elapsed time.Duration) float64 {
	_, pct := t.cpuUse(elapsed)
	return pct
}

// report writes the stage times, the pairs that reached each stage of the
// verification, and the memory held for it.
func (t *stageTimes) report(w io.Writer, elapsed time.Duration) {
	sec := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	busy := func(ns int64) string { return sec(time.Duration(ns)) }
	cpu, pct := t.cpuUse(elapsed)
	fmt.Fprintf(w, "winnow dedup: stages: read %s, canonicalize %s, sign %s (busy time summed over the workers; %s of wall time); "+
		"candidates %s, verify %s, cluster %s, write %s (wall)\n",
		busy(t.read), busy(t.canon), busy(t.sign), sec(t.signWall),
		sec(t.batch.CandidateTime), sec(t.batch.VerifyTime), sec(t.batch.ClusterTime), sec(t.write))
	fmt.Fprintf(w, "winnow dedup: CPU %s in %s of wall time: %.0f %% (%d cores)\n", sec(cpu), sec(elapsed), pct, runtime.GOMAXPROCS(0))
	b := &t.batch
	share := func(n int) string {
		if b.Pairs == 0 {
			return "0"
		}
		return fmt.Sprintf("%d (%.1f %%)", n, 100*float64(n)/float64(b.Pairs))
	}
	fmt.Fprintf(w, "winnow dedup: pairs: %d from the candidate tables; %s passed the cheap tests; settled by min-hash %s, "+
		"by the length bound %s, by the LCS length %s, with the alignment %s, otherwise %s, already joined %s; %d duplicates; "+
		"%d more verdicts against winners; %d copies of an earlier signature\n",
		b.Pairs, share(b.Candidates), share(b.Accepted), share(b.Bounded), share(b.Length), share(b.Aligned), share(b.Other),
		share(b.Joined), b.Duplicates, b.WinnerVerdicts, b.Copies)
	fmt.Fprintf(w, "winnow dedup: memory: %d word hashes held for the verification (%.1f MiB), no page text; peak resident %.0f MiB\n",
		t.seqTokens, float64(4*t.seqTokens)/(1<<20), float64(peakResident())/(1<<20))
}
