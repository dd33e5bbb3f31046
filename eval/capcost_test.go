package eval

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// BenchmarkMaxSeqCost is what a longer word sequence (signature.max_seq)
// costs on real long pages of llvm-docs, the default cap beside twice
// it: the remove decision of a pair (a generated instruction table in
// two releases, 18,419 and 18,552 words; a manual of 15,134 words in two
// releases, labelled duplicates; another of 22,055 and 22,179 words) and
// the size of each page's encoded signature, reported with the pair's
// LCS ratio and probability (docs/calibration.md, "The length of the word
// sequence"). It reads $WINNOW_LLVM_DOCS or /tmp/llvm-docs.
func BenchmarkMaxSeqCost(b *testing.B) {
	dir := llvmDocs(b)
	pairs := [][2]string{
		{"14/AMDGPU/AMDGPUAsmGFX9.html", "15/AMDGPU/AMDGPUAsmGFX9.html"},
		{"15/CodeGenerator.html", "16/CodeGenerator.html"},
		{"13/ProgrammersManual.html", "14/ProgrammersManual.html"},
	}
	d := similarity.Decision{Purpose: similarity.PurposeRemove}
	for _, pr := range pairs {
		for _, maxSeq := range []int{similarity.DefaultMaxSeq, 2 * similarity.DefaultMaxSeq} {
			sg := page.Signer{Canon: canon.Options{Content: canon.ContentMain}, Signature: similarity.Options{MaxSeq: maxSeq}.WithDefaults()}
			var sigs [2]*similarity.Signature
			size := 0
			for i, p := range pr {
				body, err := os.ReadFile(filepath.Join(dir, "html", p))
				if err != nil {
					b.Fatal(err)
				}
				r, err := sg.Sign(body, "text/html")
				if err != nil {
					b.Fatal(err)
				}
				sigs[i] = &r.Sig
				enc, err := r.Sig.MarshalBinary()
				if err != nil {
					b.Fatal(err)
				}
				size += len(enc)
			}
			b.Run(fmt.Sprintf("%s/max_seq=%d", filepath.Base(pr[0]), maxSeq), func(b *testing.B) {
				var v similarity.Verdict
				for b.Loop() {
					v = d.Decide(sigs[0], sigs[1])
				}
				b.ReportMetric(float64(size)/2, "sig-bytes")
				b.ReportMetric(v.Scores.LCS, "lcs")
				b.ReportMetric(v.Probability, "p")
			})
		}
	}
}
