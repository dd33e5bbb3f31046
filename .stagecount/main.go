package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

func main() {
	dir := os.Args[1]
	f, _ := os.Open(filepath.Join(dir, "pairs.tsv"))
	sc := bufio.NewScanner(f)
	sc.Scan()
	var s page.Signer
	counts := map[string]int{}
	n := 0
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		sig := func(doc string) similarity.Signature {
			b, err := os.ReadFile(filepath.Join(dir, "pairs", c[1], doc+".txt"))
			if err != nil {
				panic(err)
			}
			r, err := s.Sign(b, "text/plain")
			if err != nil {
				panic(err)
			}
			return r.Sig
		}
		a, b := sig(c[2]), sig(c[3])
		v := similarity.Decision{}.Decide(&a, &b)
		n++
		switch {
		case v.Step == similarity.StepSkip:
			counts["skip"]++
		case v.Step == similarity.StepCandidate:
			counts["candidate test"]++
		case v.Step == similarity.StepAccept:
			counts["min-hash accept"]++
		case v.Scores.LCSStage == similarity.LCSStageBound:
			counts["length bound"]++
		case v.Scores.LCSStage == similarity.LCSStageLength:
			counts["LCS length"]++
		case v.Scores.LCSStage == similarity.LCSStageAlignment:
			counts["alignment"]++
			if v.Scores.LCS >= similarity.DefaultStrongLCS {
				counts["aligned but ratio >= strong"]++
			}
		default:
			counts["other"]++
		}
	}
	fmt.Println(n, "pairs")
	for _, k := range []string{"skip", "candidate test", "min-hash accept", "length bound", "LCS length", "alignment", "aligned but ratio >= strong", "other"} {
		fmt.Printf("%s: %d (%.1f %%)\n", k, counts[k], 100*float64(counts[k])/float64(n))
	}
}
