// Command winnow-synth writes a synthetic corpus with planted
// near-duplicates as JSON Lines (see package synth):
//
//	winnow-synth [-n 100000] [-hot 0] [-seed 1] > synth.jsonl
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/winnow-search/winnow/beam/internal/synth"
)

func main() {
	n := flag.Int("n", 100000, "number of documents")
	hot := flag.Int("hot", 0, "documents in one group of identical pages (hot candidate keys)")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if *n < *hot || *hot < 0 {
		fmt.Fprintln(os.Stderr, "winnow-synth: need 0 <= -hot <= -n")
		os.Exit(2)
	}
	if err := synth.Write(os.Stdout, *n, synth.Options{Seed: *seed, Hot: *hot}); err != nil {
		fmt.Fprintln(os.Stderr, "winnow-synth:", err)
		os.Exit(1)
	}
}
