package partition_test

import (
	"fmt"

	"github.com/winnow-search/winnow/cluster/partition"
)

func Example() {
	// Length vectors (similarity.Signature.Lengths) of a sample of pages.
	var sample [][]uint32
	for n := uint32(30); n < 3000; n += 7 {
		sample = append(sample, []uint32{n, n + n%5, n - n%3})
	}
	p, err := partition.New(3, 8, sample)
	if err != nil {
		fmt.Println(err)
		return
	}
	page := []uint32{400, 410, 395}
	fmt.Println("factors:", p.Factors())
	fmt.Println("partition:", p.Partition(page))
	fmt.Println("compare with:", p.Candidates(page, 0.9))
	// Output:
	// factors: [2 2 2]
	// partition: 0
	// compare with: [0 1]
}
