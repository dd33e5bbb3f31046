package loadgen_test

import (
	"fmt"
	"time"

	"github.com/winnow-search/winnow/internal/loadgen"
)

func ExampleHistogram() {
	var h loadgen.Histogram
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	fmt.Println(h.Count(), h.Quantile(0.5).Round(10*time.Microsecond), h.Quantile(0.99).Round(10*time.Microsecond), h.Max())
	// Output: 1000 500µs 990µs 1ms
}
