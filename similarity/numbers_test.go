package similarity

import (
	"strconv"
	"strings"
	"testing"
)

// numbersSig signs a text the way canon tokenizes it for these tests:
// words split on spaces, lower case.
func numbersSig(text string) Signature {
	toks := strings.Fields(text)
	return Sign(Input{Text: []byte(text), Tokens: toks, Sentences: []string{text}}, Options{})
}

const numbersPage = "the catalogue record of the library copies available %s loan period three weeks " +
	"price %s dollars shipping within two days catalogue number %s shelf mark reading room east " +
	"the item may be reserved online or at the desk"

func fill(format string, args ...string) string {
	for _, a := range args {
		format = strings.Replace(format, "%s", a, 1)
	}
	return format
}

func TestNumbersDiffer(t *testing.T) {
	a := numbersSig(fill(numbersPage, "1", "12", "4471"))
	b := numbersSig(fill(numbersPage, "6", "21", "9032"))
	same := numbersSig(fill(numbersPage, "1", "12", "4471"))
	moved := numbersSig(fill(numbersPage, "12", "1", "4471"))
	tests := []struct {
		name string
		a, b *Signature
		want int
	}{
		{"three changed", &a, &b, 3},
		{"same", &a, &same, 0},
		{"reordered", &a, &moved, 0},
	}
	for _, tt := range tests {
		n, ok := NumbersDiffer(tt.a, tt.b)
		if !ok || n != tt.want {
			t.Errorf("%s: NumbersDiffer = %d, %v, want %d, true", tt.name, n, ok, tt.want)
		}
	}
	if s := Compare(&a, &b, CompareOptions{LCS: true, Numbers: true}); s.LCS != 1 || !s.HasNumbers || s.NumbersDiffer != 3 {
		t.Errorf("Compare: LCS %v, numbers %v %d; want LCS 1 (numbers are one token in Seq) and 3 numbers differing", s.LCS, s.HasNumbers, s.NumbersDiffer)
	}
	var old Signature = b
	old.Numbers = nil
	if _, ok := NumbersDiffer(&a, &old); ok {
		t.Error("NumbersDiffer with a side that recorded no numbers: known, want unknown")
	}
}

func TestNumberPairs(t *testing.T) {
	a := numbersSig(fill(numbersPage, "1", "12", "4471") + " 007 and 12345678901234567890")
	b := numbersSig(fill(numbersPage, "6", "21", "9032") + " 007 and 12345678901234567890 and 5")
	got := NumberPairs(&a, &b)
	var s []string
	for _, p := range got {
		s = append(s, p.String())
	}
	if g, w := strings.Join(s, ", "), "1/6, 12/21, 4471/9032, -/5"; g != w {
		t.Errorf("NumberPairs = %q, want %q", g, w)
	}
	if a.Numbers[3]&1 == 0 || a.Numbers[4]&1 == 0 {
		t.Errorf("a leading zero and a 20-digit number kept as values %v, want hashes", a.Numbers[3:])
	}
}

func TestNumbersCapped(t *testing.T) {
	var b strings.Builder
	for i := range 3 * MaxNumbers {
		b.WriteString("item ")
		b.WriteString(strings.Repeat("9", 1+i%5))
		b.WriteString(" ")
	}
	s := numbersSig(b.String())
	if len(s.Numbers) != MaxNumbers {
		t.Errorf("numbers kept = %d, want the cap %d", len(s.Numbers), MaxNumbers)
	}
	enc, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got Signature
	if err := got.UnmarshalBinary(enc); err != nil || !sigEqual(&got, &s) {
		t.Errorf("round trip with numbers: %v, equal %v", err, sigEqual(&got, &s))
	}
	none := numbersSig("a page without a single number in it at all, only words")
	if none.Numbers == nil || len(none.Numbers) != 0 {
		t.Errorf("a page without numbers: Numbers = %#v, want empty and not nil (recorded)", none.Numbers)
	}
}

// TestRemoveExplainsNumbers: pages alike but for three numbers score LCS
// 1; the remove decision refuses them by its numbers-only rule and its
// explanation names the numbers that differ; with the rule off the model
// alone reads them, and the numbers veto refuses them too.
func TestRemoveExplainsNumbers(t *testing.T) {
	a := numbersSig(fill(numbersPage, "1", "12", "4471"))
	b := numbersSig(fill(numbersPage, "6", "21", "9032"))
	d := Decision{Purpose: PurposeRemove, Exact: true}
	v := d.Decide(&a, &b)
	if want := "3 numbers differ: 1/6, 12/21, 4471/9032"; !strings.Contains(v.Explain(), want) {
		t.Errorf("Explain = %q, want it to contain %q", v.Explain(), want)
	}
	if v.Duplicate || v.Probability != 0 || v.Scores.LCS != 1 || !strings.Contains(v.Explain(), "only numbers differ") {
		t.Errorf("shipped remove decision: duplicate %v, P %v, LCS %v, %q; want refused at P 0 by the numbers-only rule", v.Duplicate, v.Probability, v.Scores.LCS, v.Explain())
	}
	if g := (Decision{Purpose: PurposeGroup}).Decide(&a, &b); !g.Duplicate {
		t.Errorf("group decision: %s, want a duplicate", g.Explain())
	}
	without := *DefaultModel(PurposeRemove)
	without.Seq.NumbersOnly = 0
	d.Models = &without
	if v := d.Decide(&a, &b); v.Probability < 0.5 || strings.Contains(v.Explain(), "only numbers differ") {
		t.Errorf("without the numbers-only rule: %s, want the model's own probability", v.Explain())
	}
	veto := without
	veto.Seq.NumbersVeto, veto.NoSeq.NumbersVeto = true, true
	d.Models = &veto
	if v := d.Decide(&a, &b); v.Duplicate || v.Probability != 0 || !strings.Contains(v.Explain(), "numbers veto") {
		t.Errorf("with the numbers veto: duplicate %v, P %v, %q; want refused at P 0 and the veto named", v.Duplicate, v.Probability, v.Explain())
	}
	same := numbersSig(fill(numbersPage, "1", "12", "4471"))
	d.Models = nil
	if v := d.Decide(&a, &same); !v.Duplicate {
		t.Errorf("an identical page: %s, want a duplicate", v.Explain())
	}
}

// TestNumbersOfNote: numbers next to dates, times and counters do not
// count, prices, stock counts and catalogue numbers do.
func TestNumbersOfNote(t *testing.T) {
	const page = "forum thread about the new lens posted jan %s 2012 %s pm views %s " +
		"the lens costs %s dollars and %s are in stock order number %s ships within two weeks"
	for _, c := range []struct {
		b    []string
		diff int
		note int
	}{
		{[]string{"12", "5", "310", "499", "3", "88120"}, 0, 0},
		{[]string{"14", "7", "355", "499", "3", "88120"}, 3, 0}, // date, time, counter
		{[]string{"12", "5", "310", "549", "3", "88120"}, 1, 1}, // price
		{[]string{"12", "5", "310", "499", "1", "88120"}, 1, 1}, // stock
		{[]string{"12", "5", "310", "499", "3", "88121"}, 1, 1}, // identifier
		{[]string{"13", "5", "999", "549", "1", "88121"}, 5, 3},
	} {
		a := numbersSig(fill(page, "12", "5", "310", "499", "3", "88120"))
		b := numbersSig(fill(page, c.b...))
		diff, _ := NumbersDiffer(&a, &b)
		note, known := NumbersOfNote(&a, &b)
		if diff != c.diff || note != c.note || !known {
			t.Errorf("%v: %d differ, %d of note (known %v); want %d and %d", c.b, diff, note, known, c.diff, c.note)
		}
	}
	var old Signature
	a := numbersSig(page)
	if _, known := NumbersOfNote(&a, &old); known {
		t.Error("a signature without numbers: known")
	}
}

// TestScoresRecordRoundTrip: every feature reads a pair's scores written
// by Record and read back as it read them, computed or not.
func TestScoresRecordRoundTrip(t *testing.T) {
	a := numbersSig(fill(numbersPage, "1", "12", "4471"))
	b := numbersSig(fill(numbersPage, "6", "21", "9032") + " and one sentence more")
	for _, o := range []CompareOptions{{}, {LCS: true, Numbers: true, Bag: true, Central: CentralOptions{PageShare: DefaultPageShare}}} {
		s := Compare(&a, &b, o)
		got := ScoresFromRecord(s.Record())
		for _, f := range Features() {
			if x, y := f.Value(&s), f.Value(&got); x != y {
				t.Errorf("options %+v: feature %s = %v from the record, want %v", o, f, y, x)
			}
		}
		if got.HasLCS != s.HasLCS || got.HasNumbers != s.HasNumbers || got.NumbersDiffer != s.NumbersDiffer {
			t.Errorf("options %+v: HasLCS %v HasNumbers %v %d from the record, want %v %v %d", o, got.HasLCS, got.HasNumbers, got.NumbersDiffer, s.HasLCS, s.HasNumbers, s.NumbersDiffer)
		}
	}
}

// BenchmarkNumbersDiffer: the cost a remove decision adds to a candidate
// pair, for pages of 128 numbers each (the cap) that differ in a third.
func BenchmarkNumbersDiffer(b *testing.B) {
	x, y := capPages()
	b.ReportAllocs()
	for b.Loop() {
		NumbersDiffer(&x, &y)
	}
}

// BenchmarkNumbersOfNote: the numbers-only rule's alignment of the
// numbers, at the cap, a third differing (a remove decision runs it
// only on a pair whose words agree to the rule's LCS ratio).
func BenchmarkNumbersOfNote(b *testing.B) {
	x, y := capPages()
	b.ReportAllocs()
	for b.Loop() {
		NumbersOfNote(&x, &y)
	}
}

// capPages returns two signatures of MaxNumbers prices each, a third of
// them differing.
func capPages() (Signature, Signature) {
	var ta, tb strings.Builder
	for i := range MaxNumbers {
		ta.WriteString("price " + strconv.Itoa(i*37%1000) + " item ")
		if i%3 == 0 {
			tb.WriteString("price " + strconv.Itoa(i*41%1000+1) + " item ")
		} else {
			tb.WriteString("price " + strconv.Itoa(i*37%1000) + " item ")
		}
	}
	return numbersSig(ta.String()), numbersSig(tb.String())
}

// TestRemoveRefusesCutSequences: two pages alike in their first words and
// apart after them, signed with a word sequence shorter than the pages:
// the alignment reads only the alike part, so the shipped remove decision
// may take them for content-equivalent; a model with RefuseSeqCut refuses
// them and says why, and a page whose sequence is whole is unaffected.
func TestRemoveRefusesCutSequences(t *testing.T) {
	var words []string // 1,500 distinct words, a page's worth of text
	for i := range 1500 {
		words = append(words, string([]byte{'a' + byte(i%26), 'a' + byte(i/26%26), 'a' + byte(i/676)}))
	}
	head := strings.Join(words, " ")
	sign := func(text string, maxSeq int) Signature {
		return Sign(Input{Text: []byte(text), Tokens: strings.Fields(text), Sentences: []string{text}}, Options{MaxSeq: maxSeq})
	}
	tailA := strings.Repeat(" the reading room closes at noon on saturdays", 2)
	tailB := strings.Repeat(" members borrow up to twenty items for a month", 2)
	a, b := sign(head+tailA, 1500), sign(head+tailB, 1500)
	if !a.SeqCut() || !b.SeqCut() {
		t.Fatalf("premise: sequences of %d and %d words for %d and %d tokens, want both cut", len(a.Seq), len(b.Seq), a.Tokens, b.Tokens)
	}
	d := Decision{Purpose: PurposeRemove}
	if v := d.Decide(&a, &b); !v.Duplicate {
		t.Fatalf("premise: the shipped remove decision refuses: %s", v.Explain())
	}
	refuse := *DefaultModel(PurposeRemove)
	refuse.RefuseSeqCut = true
	d.Models = &refuse
	if v := d.Decide(&a, &b); v.Duplicate || v.SeqCut != 'a' || !strings.Contains(v.Explain(), "word sequence was cut") {
		t.Errorf("with RefuseSeqCut: %s (SeqCut %q), want refused as a's word sequence was cut", v.Explain(), v.SeqCut)
	}
	whole, same := sign(head+tailA, 0), sign(head+tailA, 0)
	if whole.SeqCut() {
		t.Fatal("premise: the default sequence is cut")
	}
	if v := d.Decide(&whole, &same); !v.Duplicate {
		t.Errorf("with RefuseSeqCut, two whole sequences: %s, want a duplicate", v.Explain())
	}
}
