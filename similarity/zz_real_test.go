package similarity

import (
	"os"
	"strings"
	"testing"
)

func TestZZReal(t *testing.T) {
	for _, set := range []string{"webis-ecir20-dev", "copycat-dev"} {
		dir := "/work/shared/eval/" + set
		raw, _ := os.ReadFile(dir + "/pairs.tsv")
		var sumSteps, sumStepsF, sumTok float64
		cnt, big := 0, 0
		for _, line := range strings.Split(string(raw), "\n")[1:] {
			f := strings.Split(line, "\t")
			if len(f) < 5 {
				continue
			}
			ra, _ := os.ReadFile(dir + "/pairs/" + f[1] + "/" + f[2] + ".txt")
			rb, _ := os.ReadFile(dir + "/pairs/" + f[1] + "/" + f[3] + ".txt")
			a, b := lcsHash(strings.Fields(string(ra))), lcsHash(strings.Fields(string(rb)))
			if len(a) == 0 || len(b) == 0 {
				continue
			}
			l := exactMyers(a, b)
			D := len(a) + len(b) - 2*l
			inA, inB := map[uint32]bool{}, map[uint32]bool{}
			for _, x := range a {
				inA[x] = true
			}
			for _, x := range b {
				inB[x] = true
			}
			absA, absB := 0, 0
			for _, x := range a {
				if !inB[x] {
					absA++
				}
			}
			for _, x := range b {
				if !inA[x] {
					absB++
				}
			}
			Df := D - absA - absB
			if Ratio(l, len(a), len(b)) < 0.3 {
				continue
			}
			cnt++
			sumSteps += float64(D) * float64(D) / 4
			sumStepsF += float64(Df) * float64(Df) / 4
			sumTok += float64(len(a) + len(b))
			if D > 200 {
				big++
				t.Logf("%s n=%d m=%d D=%d absA=%d absB=%d Df=%d r=%.2f", f[1][:20], len(a), len(b), D, absA, absB, Df, Ratio(l, len(a), len(b)))
			}
		}
		t.Logf("%s: %d pairs with r>=0.3, D>200: %d; sum D²/4 %.0f, filtered %.0f (%.0f%%), tokens %.0f", set, cnt, big, sumSteps, sumStepsF, 100*sumStepsF/sumSteps, sumTok)
	}
}
