package page

import (
	"testing"

	"github.com/winnow-search/winnow/similarity"
)

// TestLCSReachesSamplePages checks similarity.LCSReaches on every pair of
// the embedded sample's real pages whose lengths allow a ratio of 0.3:
// its answer is the exact length's, at the verification's ratio and
// around it, and its bounds hold. It also checks that the greedy walk
// proves most pairs that reach the verification's ratio (lo < hi: a
// common subsequence found, not the length computed).
func TestLCSReachesSamplePages(t *testing.T) {
	sigs, keys := sampleSigs(t)
	pairs, reached, greedy := 0, 0, 0
	for i := range sigs {
		for j := i + 1; j < len(sigs); j++ {
			a, b := sigs[i].Seq, sigs[j].Seq
			if len(a) == 0 || len(b) == 0 || 10*min(len(a), len(b)) < 3*max(len(a), len(b)) {
				continue
			}
			pairs++
			l := similarity.LCSLength(a, b)
			for _, ratio := range []float64{0.3, similarity.DefaultVerifyLCS, 0.9} {
				need := similarity.NeedForRatio(len(a), len(b), ratio)
				lo, hi, ok := similarity.LCSReaches(a, b, need)
				if ok != (l >= need) || lo > l || hi < l || (ok && lo < need) || (!ok && hi >= need) {
					t.Fatalf("%s, %s at ratio %.2f (need %d): LCSReaches = %d, %d, %v; exact length %d",
						keys[i], keys[j], ratio, need, lo, hi, ok, l)
				}
				if ratio == similarity.DefaultVerifyLCS && ok {
					reached++
					if lo < hi {
						greedy++
					}
				}
			}
		}
	}
	t.Logf("%d pairs, %d reach the ratio %.2f, %d of them proved by the greedy walk", pairs, reached, similarity.DefaultVerifyLCS, greedy)
	if reached == 0 || 2*greedy < reached {
		t.Errorf("%d pairs reach the verification's ratio, the greedy walk proved %d: want pairs, and most of them", reached, greedy)
	}
}
