package main

import (
	"time"
	"runtime/pprof"
	"context"
	"fmt"
	"os"
	"encoding/json"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/eval"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

func main() {
	pf, _ := os.Create("/tmp/eval.prof"); pprof.StartCPUProfile(pf); time.AfterFunc(600*time.Second, func() { pprof.StopCPUProfile(); pf.Close(); os.Exit(0) })
	set, err := eval.Load(os.Args[1])
	if err != nil { panic(err) }
	mode := canon.ContentMain
	if len(os.Args) > 2 && os.Args[2] == "all" { mode = canon.ContentAll }
	rep, err := eval.Run(context.Background(), set, eval.Options{Signer: page.Signer{Canon: canon.Options{Content: mode}, Signature: similarity.Options{MaxSeq: maxSeq()}}, Decision: similarity.Decision{}})
	if err != nil { panic(err) }
	for _, r := range rep.Results {
		fmt.Println(r.Definition, r.Pairs, r.Positives)
		for _, m := range r.Methods {
			pub := ""
			if m.Published != nil { pub = fmt.Sprintf("pub P=%.3f R=%.3f F1=%.3f", m.Published.Precision, m.Published.Recall, m.Published.F1) }
			fmt.Printf("  %-14s best@%.3g P=%.3f R=%.3f F1=%.3f  %s\n", m.Name, m.Best.Threshold, m.Best.Precision, m.Best.Recall, m.Best.F1, pub)
		}
		fmt.Printf("  default P=%.3f R=%.3f F1=%.3f\n", r.Default.Precision, r.Default.Recall, r.Default.F1)
		if r.ClusterBCubed != nil { b, _ := json.Marshal(r.ClusterPairs); c, _ := json.Marshal(r.ClusterBCubed); fmt.Println("  clusters", string(b), string(c)) }
	}
	pprof.StopCPUProfile()
	if len(os.Args) > 3 {
		f, _ := os.Create(os.Args[3])
		for _, sp := range rep.Scored {
			s := sp.Scores
			fmt.Fprintf(f, "%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%v\n", sp.A, sp.B, sp.Label, s.SimhashDistance, s.BloomAB, s.BloomBA, s.Jaccard, s.Supershingles, s.LCS, s.Central, s.CoverageA, s.CoverageB, s.Divergence, sp.Verdict)
		}
		f.Close()
	}
}

func maxSeq() int {
	if v := os.Getenv("MAXSEQ"); v != "" {
		var n int
		fmt.Sscan(v, &n)
		return n
	}
	return 0
}
