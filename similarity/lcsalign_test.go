package similarity

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkAlignBitParallel measures the alignment ([CentralLCS],
// unbounded) of pages of 8 and 64 KB of real text with 15 % of the words
// edited, whose edit distance is over [myersCap]: the bit-parallel pass
// with its undo log, then the walk back. The runs are checked against
// the LCS length.
func BenchmarkAlignBitParallel(b *testing.B) {
	src := lcsAllWords(b, "gpl-3.txt", "gpl-2.txt", "lgpl-2.1.txt")
	pool := lcsAllWords(b, "apache-2.0.txt", "gfdl-1.3.txt", "mpl-2.0.txt")
	for _, size := range []int{8 << 10, 64 << 10} {
		words, bytes := wordsUpTo(src, size)
		r := rand.New(rand.NewPCG(43, 44))
		x := lcsHash(src[:words])
		y := lcsHash(lcsEditWords(r, src[:words], 0.15, pool))
		want := LCSLength(x, y)
		if d := len(x) + len(y) - 2*want; d <= myersCap(len(x), len(y)) {
			b.Fatalf("%d KB: distance %d within Myers' cap %d: not the bit-parallel alignment", size>>10, d, myersCap(len(x), len(y)))
		}
		b.Run(fmt.Sprintf("%dKB-edited15", size>>10), func(b *testing.B) {
			b.SetBytes(int64(bytes))
			b.ReportAllocs()
			for b.Loop() {
				if c, ok := CentralLCS(x, y, -1, CentralOptions{}); !ok || c.LCS != want {
					b.Fatalf("CentralLCS: LCS %d ok %v, want %d", c.LCS, ok, want)
				}
			}
		})
	}
}
