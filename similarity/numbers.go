package similarity

import (
	"slices"
	"strconv"
	"strings"

	"github.com/zeebo/xxh3"
)

// MaxNumbers is the most number tokens a [Signature] keeps
// ([Signature.Numbers]), the first ones of the page in order: a page's
// prices, counts, catalogue numbers and versions sit among its first
// hundred numbers, and the cap bounds the encoding (2–3 bytes a number).
const MaxNumbers = 128

// numberCode returns the code [Signature.Numbers] keeps for the number
// token t: the value shifted left by one for a number written as
// strconv.FormatUint writes it (ASCII digits, no leading zero, below
// 2^63), else the low 32 bits of its xxh3 shifted left by one with the
// low bit set (leading zeros, more than 18 digits, other scripts' digits),
// so that two codes are equal exactly when the tokens are (up to a hash
// collision for the second kind).
func numberCode(t string) uint64 {
	if len(t) <= 18 && (len(t) == 1 || t[0] != '0') {
		var v uint64
		ascii := true
		for i := 0; i < len(t); i++ {
			c := t[i]
			if c < '0' || c > '9' {
				ascii = false
				break
			}
			v = v*10 + uint64(c-'0')
		}
		if ascii {
			return v << 1
		}
	}
	return uint64(uint32(xxh3.HashString(t)))<<1 | 1
}

// formatNumber returns the text of a number code: the value, or "#" for
// a hashed number, which has no text to show.
func formatNumber(c uint64) string {
	if c&1 != 0 {
		return "#"
	}
	return strconv.FormatUint(c>>1, 10)
}

// NumbersDiffer returns how many numbers of a and b differ, the numbers
// taken as multisets: the larger of the count of a's numbers not in b and
// the count of b's not in a (each occurrence once), so a price changed
// from 12 to 21 counts one and a page with one number more counts one.
// known is false when either side did not record its numbers (a
// signature decoded from an older version). Cost: a sort of each side's
// numbers (at most [MaxNumbers]) on the stack.
func NumbersDiffer(a, b *Signature) (n int, known bool) {
	if a.Numbers == nil || b.Numbers == nil {
		return 0, false
	}
	var bufA, bufB [MaxNumbers]uint64
	x := append(bufA[:0], a.Numbers[:min(len(a.Numbers), MaxNumbers)]...)
	y := append(bufB[:0], b.Numbers[:min(len(b.Numbers), MaxNumbers)]...)
	slices.Sort(x)
	slices.Sort(y)
	onlyA, onlyB := 0, 0
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i] == y[j]:
			i++
			j++
		case x[i] < y[j]:
			onlyA++
			i++
		default:
			onlyB++
			j++
		}
	}
	onlyA += len(x) - i
	onlyB += len(y) - j
	return max(onlyA, onlyB), true
}

// NumberPair is one number that differs between two pages, as
// [NumberPairs] aligns them: A on page a, B on page b; "" for a number
// with no counterpart on the other page, "#" for a number kept only as a
// hash (see [Signature.Numbers]).
type NumberPair struct {
	A, B string
}

// String returns "A/B", with "-" for a missing side.
func (p NumberPair) String() string {
	return cmpOr(p.A, "-") + "/" + cmpOr(p.B, "-")
}

func cmpOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// NumberPairs returns the numbers that differ between a and b, in page
// order: the two number sequences are aligned by their longest common
// subsequence (dynamic programming over at most [MaxNumbers]² cells, for
// explanations, not for deciding), and the numbers between two aligned
// ones are paired in order, the surplus of one side with an empty
// counterpart. nil when either side did not record its numbers.
func NumberPairs(a, b *Signature) []NumberPair {
	if a.Numbers == nil || b.Numbers == nil {
		return nil
	}
	x, y := a.Numbers[:min(len(a.Numbers), MaxNumbers)], b.Numbers[:min(len(b.Numbers), MaxNumbers)]
	n, m := len(x), len(y)
	// l[i][j] is the LCS length of x[i:] and y[j:].
	l := make([]uint16, (n+1)*(m+1))
	at := func(i, j int) uint16 { return l[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			v := max(at(i+1, j), at(i, j+1))
			if x[i] == y[j] {
				v = at(i+1, j+1) + 1
			}
			l[i*(m+1)+j] = v
		}
	}
	var out []NumberPair
	var ga, gb []uint64 // the current gap's unmatched numbers
	flush := func() {
		for k := range max(len(ga), len(gb)) {
			var p NumberPair
			if k < len(ga) {
				p.A = formatNumber(ga[k])
			}
			if k < len(gb) {
				p.B = formatNumber(gb[k])
			}
			out = append(out, p)
		}
		ga, gb = ga[:0], gb[:0]
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case x[i] == y[j] && at(i, j) == at(i+1, j+1)+1:
			flush()
			i++
			j++
		case at(i+1, j) >= at(i, j+1):
			ga = append(ga, x[i])
			i++
		default:
			gb = append(gb, y[j])
			j++
		}
	}
	ga = append(ga, x[i:]...)
	gb = append(gb, y[j:]...)
	flush()
	return out
}

// numbersExplained returns "3 numbers differ: 1/6, 12/21, 4471/9032"
// (at most 6 listed, then "…"; the list only when pairs were kept, see
// [Verdict.NumberPairs]), "no number differs", or "numbers not recorded"
// for a pair whose numbers are unknown.
func numbersExplained(s *Scores, pairs []NumberPair) string {
	if !s.HasNumbers {
		return "numbers not recorded"
	}
	if s.NumbersDiffer == 0 {
		return "no number differs"
	}
	var sb strings.Builder
	if s.NumbersDiffer == 1 {
		sb.WriteString("1 number differs")
	} else {
		sb.WriteString(strconv.Itoa(s.NumbersDiffer) + " numbers differ")
	}
	for k, p := range pairs {
		if k == 6 {
			sb.WriteString(", …")
			break
		}
		if k == 0 {
			sb.WriteString(": ")
		} else {
			sb.WriteString(", ")
		}
		sb.WriteString(p.String())
	}
	return sb.String()
}
