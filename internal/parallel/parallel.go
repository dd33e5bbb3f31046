// Package parallel runs the iterations of a loop on several goroutines.
package parallel

import (
	"sync"
	"sync/atomic"
)

// For calls f(k) for every k in [0, n) on up to workers goroutines and
// returns when all calls have returned. Indexes are handed out in chunks
// of chunk from a shared counter, so uneven costs (one LCS among cheap
// tests) spread over the workers. With one worker, or n not over chunk,
// it runs in the calling goroutine. f must be safe for concurrent use;
// what it writes, it writes to its own index.
func For(n, workers, chunk int, f func(k int)) {
	if workers <= 1 || n <= chunk {
		for k := range n {
			f(k)
		}
		return
	}
	workers = min(workers, (n+chunk-1)/chunk)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n {
					return
				}
				for k := lo; k < min(lo+chunk, n); k++ {
					f(k)
				}
			}
		})
	}
	wg.Wait()
}
