package similarity

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// median returns the median of xs (sorted in place); 0 when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// textbookMyers returns the LCS length of a and b by Myers' greedy
// forward algorithm as the paper gives it ("An O(ND) Difference Algorithm
// and Its Variations", 1986, §3: one V array over the diagonals, a snake
// followed token by token on each), stopping once D would exceed maxD
// (negative: no bound); ok is false then. The yardstick of
// BenchmarkSideBySide: no affix stripping, bounds or bit-parallel pass.
func textbookMyers(a, b []uint32, maxD int) (l int, ok bool) {
	n, m := len(a), len(b)
	limit := n + m
	if maxD >= 0 && maxD < limit {
		limit = maxD
	}
	off := limit + 1
	v := make([]int, 2*limit+3)
	for d := 0; d <= limit; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return (n + m - d) / 2, true
			}
		}
	}
	return 0, false
}

func TestTextbookMyers(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for range 200 {
		a := lcsRandSeq(r, r.IntN(200), 8)
		b := lcsMutate(r, a, 0.2, 8)
		if got, _ := textbookMyers(a, b, -1); got != lcsDP(a, b) {
			t.Fatalf("textbookMyers = %d, want %d", got, lcsDP(a, b))
		}
	}
}

// BenchmarkSideBySide compares the exact [LCS] with the textbook Myers
// algorithm (textbookMyers) on pages of 8 and 64 KB of real text, at a
// small distance (3 % of the words edited) and a large one (15 %),
// unbounded and bounded at the pair's own distance (the bound that
// least helps an early exit while still answering). Each pair of
// sub-benchmarks, lcs and myers, runs the same pair; read them side by
// side with benchstat.
func BenchmarkSideBySide(b *testing.B) {
	src := lcsAllWords(b, "gpl-3.txt", "gpl-2.txt", "lgpl-2.1.txt")
	pool := lcsAllWords(b, "apache-2.0.txt", "gfdl-1.3.txt", "mpl-2.0.txt")
	for _, size := range []int{8 << 10, 64 << 10} {
		words, bytes := wordsUpTo(src, size)
		for _, rate := range []float64{0.03, 0.15} {
			r := rand.New(rand.NewPCG(41, 42))
			x := lcsHash(src[:words])
			y := lcsHash(lcsEditWords(r, src[:words], rate, pool))
			want, _ := textbookMyers(x, y, -1)
			d := len(x) + len(y) - 2*want
			for _, bound := range []int{-1, d} {
				name := fmt.Sprintf("%dKB-D%d-bound%d", size>>10, d, bound)
				b.Run(name+"/lcs", func(b *testing.B) {
					b.SetBytes(int64(bytes))
					for b.Loop() {
						if l, _ := LCS(x, y, bound); l != want {
							b.Fatalf("LCS = %d, want %d", l, want)
						}
					}
				})
				b.Run(name+"/myers", func(b *testing.B) {
					b.SetBytes(int64(bytes))
					for b.Loop() {
						textbookMyers(x, y, bound)
					}
				})
				// paired: both in turn on each iteration, so the VM's
				// drift hits both; reports the median of each and of
				// their ratio (lcs/myers; under 1: LCS faster).
				// paired-avx2 is the same with the AVX2 round forced on
				// (where the CPU has it), whatever init chose.
				paired := func(b *testing.B) {
					var tl, tm, ratio []float64
					for b.Loop() {
						t0 := time.Now()
						LCS(x, y, bound)
						t1 := time.Now()
						textbookMyers(x, y, bound)
						t2 := time.Now()
						l, m := float64(t1.Sub(t0)), float64(t2.Sub(t1))
						tl, tm, ratio = append(tl, l), append(tm, m), append(ratio, l/m)
					}
					b.ReportMetric(median(tl), "lcs-ns")
					b.ReportMetric(median(tm), "myers-ns")
					b.ReportMetric(median(ratio), "lcs/myers")
				}
				b.Run(name+"/paired", paired)
				if hasAVX2 {
					b.Run(name+"/paired-avx2", func(b *testing.B) {
						defer func(chosen bool) { stepAVX2 = chosen }(stepAVX2)
						stepAVX2 = true
						paired(b)
					})
				}
			}
		}
	}
}
