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
	l := numbersLCS(x, y)
	at := func(i, j int) uint16 { return l[i*(m+1)+j] }
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

// numbersLCS returns the table of the longest common subsequence of the
// number codes x and y: at (i, j), index i*(len(y)+1)+j, the LCS length
// of x[i:] and y[j:].
func numbersLCS(x, y []uint64) []uint16 {
	n, m := len(x), len(y)
	l := make([]uint16, (n+1)*(m+1))
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			v := max(l[(i+1)*(m+1)+j], l[i*(m+1)+j+1])
			if x[i] == y[j] {
				v = l[(i+1)*(m+1)+j+1] + 1
			}
			l[i*(m+1)+j] = v
		}
	}
	return l
}

// NumbersOfNote returns how many of the numbers that differ between a
// and b are not dates, times or counters: of the numbers the alignment
// of [NumberPairs] leaves unmatched, the larger of the counts on a and on
// b (as [NumbersDiffer] counts), where a number counts unless
// it reads as a year (1900–2099) or a word next to it in the page's
// word sequence (the nearest word before and after its run of numbers)
// is one of [noiseWords] (months, weekdays, am/pm, "posted", "views",
// "page", "copyright", …). Prices, stock counts, catalogue numbers and
// versions count; the visitor counter, the clock and the pagination of
// a page fetched twice do not. A number beyond the word sequence
// ([Signature.Seq] cut or absent) counts. known as for [NumbersDiffer].
// Cost: the alignment's O(128²) table, so it is for pairs whose numbers
// differ, not for every pair.
func NumbersOfNote(a, b *Signature) (n int, known bool) {
	if a.Numbers == nil || b.Numbers == nil {
		return 0, false
	}
	x, y := a.Numbers[:min(len(a.Numbers), MaxNumbers)], b.Numbers[:min(len(b.Numbers), MaxNumbers)]
	nx, ny := len(x), len(y)
	l := numbersLCS(x, y)
	at := func(i, j int) uint16 { return l[i*(ny+1)+j] }
	px, py := numberPositions(a.Seq, nx), numberPositions(b.Seq, ny)
	note := func(seq []uint32, pos []int, codes []uint64, k int) int {
		if k >= len(pos) || !noise(seq, pos[k], codes[k]) {
			return 1
		}
		return 0
	}
	onA, onB := 0, 0
	i, j := 0, 0
	for i < nx && j < ny {
		switch {
		case x[i] == y[j] && at(i, j) == at(i+1, j+1)+1:
			i++
			j++
		case at(i+1, j) >= at(i, j+1):
			onA += note(a.Seq, px, x, i)
			i++
		default:
			onB += note(b.Seq, py, y, j)
			j++
		}
	}
	for ; i < nx; i++ {
		onA += note(a.Seq, px, x, i)
	}
	for ; j < ny; j++ {
		onB += note(b.Seq, py, y, j)
	}
	n = max(onA, onB)
	return n, true
}

// numberPositions returns the positions in seq of its first k numbers
// (the tokens [Sign] wrote as [numberHash]), fewer when seq holds fewer.
func numberPositions(seq []uint32, k int) []int {
	pos := make([]int, 0, k)
	for i, h := range seq {
		if len(pos) == k {
			break
		}
		if h == numberHash {
			pos = append(pos, i)
		}
	}
	return pos
}

// noise reports whether the number of code c at position p of seq reads
// as a date, time or counter: a year by its value, or a noise word
// nearest before or after its run of numbers.
func noise(seq []uint32, p int, c uint64) bool {
	if c&1 == 0 && c>>1 >= 1900 && c>>1 <= 2099 {
		return true
	}
	i := p - 1
	for i >= 0 && seq[i] == numberHash {
		i--
	}
	if i >= 0 && noiseHashes[seq[i]] {
		return true
	}
	j := p + 1
	for j < len(seq) && seq[j] == numberHash {
		j++
	}
	return j < len(seq) && noiseHashes[seq[j]]
}

// noiseWords are the words whose neighbouring numbers are dates, times
// and counters, as canonical text spells them (lower case, English, and
// the stems of the copycat-dev texts): the numbers that change between
// two fetches of one page. Chosen by reading the numbers of the web dev
// sets' content-equivalent pairs (docs/calibration.md).
var noiseWords = []string{
	"jan", "january", "januari", "feb", "february", "februari", "mar", "march", "apr", "april",
	"may", "mai", "jun", "june", "jul", "july", "juli", "aug", "august", "sep", "sept", "september",
	"septemb", "oct", "october", "octob", "nov", "november", "novemb", "dec", "december", "decemb",
	"mon", "monday", "mondai", "tue", "tuesday", "tuesdai", "wed", "wednesday", "wednesdai",
	"thu", "thursday", "thursdai", "fri", "friday", "fridai", "sat", "saturday", "saturdai",
	"sun", "sunday", "sundai",
	"am", "pm", "utc", "gmt", "date", "time", "times", "updated", "update", "updat", "modified", "modifi",
	"posted", "post", "posts", "view", "views", "viewed", "read", "reads", "hit", "hits", "visits",
	"visitor", "visitors", "comment", "comments", "repli", "replies", "reply", "page", "pages",
	"copyright", "ago", "min", "mins", "minut", "minutes", "hour", "hours", "day", "dai", "days",
	"week", "weeks", "month", "months", "year", "years", "sec", "second", "seconds", "online", "onlin",
	"member", "members", "guest", "guests", "like", "likes",
}

// noiseHashes holds the [Signature.Seq] hashes of noiseWords.
var noiseHashes = func() map[uint32]bool {
	m := make(map[uint32]bool, len(noiseWords))
	for _, w := range noiseWords {
		m[uint32(xxh3.HashString(w))] = true
	}
	return m
}()

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
