package report_test

import (
	"os"

	"github.com/winnow-search/winnow/cluster/report"
)

func ExampleEvolution() {
	before := [][]string{
		{"https://a.org/x", "https://b.org/x", "https://c.org/x"},
		{"https://a.org/y", "https://b.org/y"},
	}
	after := [][]string{
		{"https://a.org/x", "https://b.org/x"},
		{"https://c.org/x"},
		{"https://a.org/y", "https://b.org/y"},
	}
	report.WriteEvolution(os.Stdout, report.Evolution(before, after))
	// Output:
	// sizes  clusters  urls  gone    phi    psi  reverse phi
	//       2         1     2     0  1.000  1.000        1.000
	//     3-4         1     3     0  0.556  0.556        1.000
}
