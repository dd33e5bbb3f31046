package similarity

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestBagRatio(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 400 {
		alphabet := []int{2, 5, 30, 1000, 1 << 30}[trial%5]
		a := make([]uint32, r.IntN(300))
		b := make([]uint32, r.IntN(300))
		for i := range a {
			a[i] = uint32(r.IntN(alphabet))
		}
		for i := range b {
			b[i] = uint32(r.IntN(alphabet))
		}
		want := Ratio(multisetIntersection(a, b), len(a), len(b))
		if got := BagRatio(a, b); got != want {
			t.Fatalf("alphabet %d, %d x %d tokens: BagRatio %v, want %v", alphabet, len(a), len(b), got, want)
		}
		if l := Ratio(exactMyers(a, b), len(a), len(b)); want < l {
			t.Fatalf("bag ratio %v below the LCS ratio %v", want, l)
		}
	}
	// Order does not count: a sequence and its reverse overlap fully.
	gpl := lcsHash(lcsReadWords(t, "gpl-3.txt", 3000))
	rev := reverseInto(nil, gpl)
	if got := BagRatio(gpl, rev); got != 1 {
		t.Errorf("a text and its reverse: BagRatio %v, want 1", got)
	}
	if got, l := BagRatio(gpl, rev), Ratio(LCSLength(gpl, rev), len(gpl), len(rev)); l > 0.5 {
		t.Errorf("a text and its reverse: LCS ratio %v (bag %v), want far below", l, got)
	}
	if n := testing.AllocsPerRun(50, func() { BagRatio(gpl, rev) }); n != 0 {
		t.Errorf("BagRatio allocates %v times, want 0", n)
	}
}

func BenchmarkBagRatio(b *testing.B) {
	for _, size := range []int{8 << 10, 64 << 10} {
		wa, wb, n := lcsBenchPair(b, size, true)
		x, y := lcsHash(wa), lcsHash(wb)
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				BagRatio(x, y)
			}
		})
	}
}
