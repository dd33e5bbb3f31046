package main

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestRemoveSpillWhileWritten: the spill directory goes even while
// workers still write batches into it, as LOOPBACK workers of this
// process do when the job server stops mid-job or the run is
// interrupted: os.RemoveAll alone left the files created while it ran
// (three batches of a run whose Flink job server was stopped).
func TestRemoveSpillWhileWritten(t *testing.T) {
	for range 20 {
		dir, err := os.MkdirTemp(t.TempDir(), "out.jsonl.spill-*")
		if err != nil {
			t.Fatal(err)
		}
		spilled.Lock()
		spilled.dir = dir
		spilled.Unlock()
		started := make(chan struct{})
		quit := make(chan struct{})
		stopped := make(chan struct{})
		go func() {
			// A worker writing batches until it can no more.
			defer close(stopped)
			var once sync.Once
			defer once.Do(func() { close(started) })
			// Bounded, should removeSpill never stop it.
			for i := 0; i < 20_000; i++ {
				select {
				case <-quit:
					return
				default:
				}
				f, err := os.CreateTemp(dir, "b-*")
				if err != nil {
					return
				}
				f.Write(make([]byte, 512))
				f.Close()
				if i == 200 {
					once.Do(func() { close(started) })
				}
			}
		}()
		<-started
		removeSpill()
		close(quit)
		<-stopped
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "*")); len(left) > 0 {
			t.Fatalf("left after removeSpill: %v", left)
		}
	}
}
