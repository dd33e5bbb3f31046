package parallel

import (
	"sync/atomic"
	"testing"
)

// TestFor: every index is called once, whatever the count against the
// workers and the chunk, in the caller with one worker.
func TestFor(t *testing.T) {
	for _, c := range []struct{ n, workers, chunk int }{
		{0, 4, 1}, {1, 4, 1}, {3, 2, 1}, {64, 2, 1}, {65, 3, 8}, {10, 1, 1}, {5, 4, 64},
	} {
		calls := make([]int32, c.n)
		For(c.n, c.workers, c.chunk, func(k int) { atomic.AddInt32(&calls[k], 1) })
		for k, got := range calls {
			if got != 1 {
				t.Errorf("For(%d, %d, %d): index %d called %d times, want once", c.n, c.workers, c.chunk, k, got)
			}
		}
	}
}
