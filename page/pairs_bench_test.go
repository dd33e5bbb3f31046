package page

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/similarity"
)

var pairsDir = flag.String("pairs.dir", "", "a pair-mode eval set (pairs.tsv, pairs/<pair>/<doc>.txt) for BenchmarkDecidePairs")

// BenchmarkDecidePairs decides every pair of a pair-mode evaluation set
// (e.g. ../shared/eval/webis-ecir20-dev) with the default decision and
// reports the time a pair and the share of pairs settled at each stage,
// cheapest first: the candidate test, the min-hash accept, the length or
// multiset bound, the LCS length, the alignment.
//
//	go test -run '^$' -bench DecidePairs ./page/ -pairs.dir ../shared/eval/webis-ecir20-dev
func BenchmarkDecidePairs(b *testing.B) {
	if *pairsDir == "" {
		b.Skip("no -pairs.dir")
	}
	sigs := loadPairs(b)
	var counts [6]int // candidate, accept, bound, length, alignment, other
	for b.Loop() {
		counts = [6]int{}
		for _, p := range sigs {
			v := similarity.Decision{}.Decide(p[0], p[1])
			switch {
			case v.Step == similarity.StepSkip || v.Step == similarity.StepCandidate:
				counts[0]++
			case v.Step == similarity.StepAccept:
				counts[1]++
			case v.Scores.LCSStage == similarity.LCSStageBound:
				counts[2]++
			case v.Scores.LCSStage == similarity.LCSStageLength:
				counts[3]++
			case v.Scores.LCSStage == similarity.LCSStageAlignment:
				counts[4]++
			default:
				counts[5]++
			}
		}
	}
	n := float64(len(sigs))
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/n, "ns/pair")
	for i, name := range []string{"%candidate", "%accept", "%bound", "%length", "%aligned", "%other"} {
		b.ReportMetric(100*float64(counts[i])/n, name)
	}
}

// loadPairs signs the two documents of every pair of the -pairs.dir set.
func loadPairs(b *testing.B) [][2]*similarity.Signature {
	f, err := os.Open(filepath.Join(*pairsDir, "pairs.tsv"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var s Signer
	var sigs [][2]*similarity.Signature
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) < 4 {
			b.Fatalf("pairs.tsv line %q: want subset, pair, doc_a, doc_b", sc.Text())
		}
		var pair [2]*similarity.Signature
		for i, doc := range c[2:4] {
			body, err := os.ReadFile(filepath.Join(*pairsDir, "pairs", c[1], doc+".txt"))
			if err != nil {
				b.Fatal(err)
			}
			r, err := s.Sign(body, "text/plain")
			if err != nil {
				b.Fatal(err)
			}
			pair[i] = &r.Sig
		}
		sigs = append(sigs, pair)
	}
	return sigs
}

// BenchmarkLCSReachesPairs asks of every pair of a pair-mode evaluation
// set whose documents both have a word sequence whether its LCS ratio
// reaches the default verification's DefaultVerifyLCS, by the bounded
// exact length (similarity.LCS at MaxDForRatio) and by
// similarity.LCSReaches, side by side, and reports the time a pair, the
// share of pairs that reach the ratio and the share that reach it with
// the length known (lo == hi: by the exact search, because the common
// prefix and suffix cover one page, or the bounds met) rather than
// proved by a common subsequence found.
//
//	go test -run '^$' -bench LCSReachesPairs ./page/ -pairs.dir ../shared/eval/webis-ecir20-dev
func BenchmarkLCSReachesPairs(b *testing.B) {
	if *pairsDir == "" {
		b.Skip("no -pairs.dir")
	}
	var seqs [][2][]uint32
	for _, p := range loadPairs(b) {
		if len(p[0].Seq) > 0 && len(p[1].Seq) > 0 {
			seqs = append(seqs, [2][]uint32{p[0].Seq, p[1].Seq})
		}
	}
	n := float64(len(seqs))
	t := similarity.DefaultVerifyLCS
	b.Run("bounded", func(b *testing.B) {
		reached := 0
		for b.Loop() {
			reached = 0
			for _, p := range seqs {
				if _, ok := similarity.LCS(p[0], p[1], similarity.MaxDForRatio(len(p[0]), len(p[1]), t)); ok {
					reached++
				}
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/n, "ns/pair")
		b.ReportMetric(100*float64(reached)/n, "%reached")
	})
	b.Run("reaches", func(b *testing.B) {
		reached, exact := 0, 0
		for b.Loop() {
			reached, exact = 0, 0
			for _, p := range seqs {
				lo, hi, ok := similarity.LCSReaches(p[0], p[1], similarity.NeedForRatio(len(p[0]), len(p[1]), t))
				if ok {
					reached++
					if lo == hi {
						exact++
					}
				}
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/n, "ns/pair")
		b.ReportMetric(100*float64(reached)/n, "%reached")
		b.ReportMetric(100*float64(exact)/n, "%exact")
	})
}
