package similarity

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// sigInput turns plain text into an Input the way canon would, roughly:
// lower case, tokens split at white space, canonical text the tokens
// joined by spaces, sentences split at . ! ? ;.
func sigInput(text string) Input {
	tokens := strings.Fields(strings.ToLower(text))
	canon := strings.Join(tokens, " ")
	var sentences []string
	for _, s := range strings.FieldsFunc(canon, func(r rune) bool {
		return r == '.' || r == '!' || r == '?' || r == ';'
	}) {
		if s = strings.TrimSpace(s); s != "" {
			sentences = append(sentences, s)
		}
	}
	return Input{Text: []byte(canon), Tokens: tokens, Sentences: sentences}
}

// sigInputFromTokens builds an Input from tokens, one sentence per
// sentenceLen tokens.
func sigInputFromTokens(tokens []string, sentenceLen int) Input {
	var sentences []string
	for i := 0; i < len(tokens); i += sentenceLen {
		sentences = append(sentences, strings.Join(tokens[i:min(i+sentenceLen, len(tokens))], " "))
	}
	return Input{Text: []byte(strings.Join(tokens, " ")), Tokens: tokens, Sentences: sentences}
}

// sigText is one real text of testdata.
type sigText struct {
	name string
	text string
}

// sigTexts loads every text of testdata.
func sigTexts(tb testing.TB) []sigText {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no testdata texts: %v", err)
	}
	var out []sigText
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, sigText{filepath.Base(p), string(b)})
	}
	return out
}

// sigCorpus is all testdata texts concatenated, as one canonical Input.
func sigCorpus(tb testing.TB) Input {
	var sb strings.Builder
	for _, t := range sigTexts(tb) {
		sb.WriteString(t.text)
		sb.WriteByte('\n')
	}
	return sigInput(sb.String())
}

// sigRandWords returns n random words from a vocabulary of vocab words.
func sigRandWords(r *rand.Rand, n, vocab int) []string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("w%d", r.IntN(vocab))
	}
	return w
}

// sigEdit returns a copy of tokens with a fraction rate of them replaced
// by fresh words that occur nowhere else.
func sigEdit(r *rand.Rand, tokens []string, rate float64) []string {
	out := append([]string(nil), tokens...)
	for i := range out {
		if r.Float64() < rate {
			out[i] = fmt.Sprintf("x%d", r.Uint64())
		}
	}
	return out
}

func TestEmpty(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want bool
	}{
		{"zero", Input{}, true},
		{"four tokens", sigInput("one two three four"), true},
		{"five tokens", sigInput("one two three four five"), false},
		{"text without tokens", Input{Text: []byte("some text here that is long enough")}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Sign(tt.in, Options{})
			if got := s.Empty(); got != tt.want {
				t.Errorf("Sign(%q).Empty() = %v, want %v", tt.in.Text, got, tt.want)
			}
			if tt.want && (s.Bloom != nil || s.MinHash != nil || s.Simhash != 0 || s.Seq != nil) {
				t.Errorf("Sign(%q) = %+v, want no families", tt.in.Text, s)
			}
		})
	}
	var zero Signature
	if !zero.Empty() {
		t.Errorf("Signature{}.Empty() = false, want true")
	}
}

func TestSignFamilies(t *testing.T) {
	o := Options{}.WithDefaults()
	for _, tt := range sigTexts(t) {
		t.Run(tt.name, func(t *testing.T) {
			in := sigInput(tt.text)
			s := Sign(in, Options{})
			if s.Empty() || s.Capped {
				t.Fatalf("Sign: Empty=%v Capped=%v, want false false", s.Empty(), s.Capped)
			}
			if s.Tokens != len(in.Tokens) || s.Bytes != len(in.Text) {
				t.Errorf("Tokens, Bytes = %d, %d, want %d, %d", s.Tokens, s.Bytes, len(in.Tokens), len(in.Text))
			}
			if len(s.MinHash) != o.MinHashes || len(s.Supershingles) != o.Supershingles {
				t.Errorf("len(MinHash), len(Supershingles) = %d, %d, want %d, %d", len(s.MinHash), len(s.Supershingles), o.MinHashes, o.Supershingles)
			}
			if len(s.Fingerprints) != o.Fingerprints {
				t.Errorf("len(Fingerprints) = %d, want %d", len(s.Fingerprints), o.Fingerprints)
			}
			for i := 1; i < len(s.Fingerprints); i++ {
				if s.Fingerprints[i-1] >= s.Fingerprints[i] {
					t.Errorf("Fingerprints = %v, want strictly ascending", s.Fingerprints)
				}
			}
			sum := 0
			for _, v := range s.Lengths {
				sum += int(v)
			}
			if len(s.Lengths) != o.LengthDims || sum != s.Tokens {
				t.Errorf("Lengths = %v, want %d dims summing to %d", s.Lengths, o.LengthDims, s.Tokens)
			}
			if len(s.Seq) != min(o.MaxSeq, s.Tokens) {
				t.Errorf("len(Seq) = %d, want %d", len(s.Seq), min(o.MaxSeq, s.Tokens))
			}
			if s.Bloom == nil || s.Bloom.Cap() != 2048 || s.Bloom.K() != 6 || s.Chunks == 0 {
				t.Fatalf("Bloom = %v, Chunks = %d, want m=2048 k=6 and chunks", s.Bloom, s.Chunks)
			}
			if got := BloomMatch(s.Bloom, s.Bloom); got != 1 {
				t.Errorf("BloomMatch(self) = %v, want 1", got)
			}
			again := Sign(in, Options{})
			if again.Simhash != s.Simhash || SupershingleMatches(again.Supershingles, s.Supershingles) != o.Supershingles ||
				EstimateJaccard(again.MinHash, s.MinHash) != 1 || !again.Bloom.Equal(s.Bloom) {
				t.Errorf("Sign is not deterministic")
			}
		})
	}
}

func TestSignCaps(t *testing.T) {
	in := sigCorpus(t)
	tests := []struct {
		name       string
		o          Options
		wantTokens int
		wantBytes  int
		wantCapped bool
		wantSeq    int
	}{
		{"defaults", Options{}, len(in.Tokens), len(in.Text), false, DefaultMaxSeq},
		{"max tokens", Options{MaxTokens: 1000}, 1000, len(in.Text), true, 1000},
		{"max bytes", Options{MaxBytes: 5000}, len(in.Tokens), 5000, true, DefaultMaxSeq},
		{"no seq", Options{MaxSeq: -1}, len(in.Tokens), len(in.Text), false, 0},
		{"short seq", Options{MaxSeq: 10}, len(in.Tokens), len(in.Text), false, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Sign(in, tt.o)
			if s.Tokens != tt.wantTokens || s.Bytes > tt.wantBytes || s.Bytes < tt.wantBytes-3 || s.Capped != tt.wantCapped || len(s.Seq) != tt.wantSeq {
				t.Errorf("Sign(corpus, %+v): Tokens=%d Bytes=%d Capped=%v len(Seq)=%d, want %d %d %v %d",
					tt.o, s.Tokens, s.Bytes, s.Capped, len(s.Seq), tt.wantTokens, tt.wantBytes, tt.wantCapped, tt.wantSeq)
			}
			if tt.wantSeq == 0 && s.Seq != nil {
				t.Errorf("Seq = %d values, want nil", len(s.Seq))
			}
		})
	}
}

func TestCutUTF8(t *testing.T) {
	b := []byte("aé€") // 1 + 2 + 3 bytes
	tests := []struct {
		n    int
		want string
	}{{0, ""}, {1, "a"}, {2, "a"}, {3, "aé"}, {4, "aé"}, {5, "aé"}, {6, "aé€"}, {9, "aé€"}}
	for _, tt := range tests {
		if got := string(cutUTF8(b, tt.n)); got != tt.want {
			t.Errorf("cutUTF8(%q, %d) = %q, want %q", b, tt.n, got, tt.want)
		}
	}
}

func TestSignPanicsOnInvalidOptions(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("Sign with ChunkAvg 100 did not panic")
		}
	}()
	Sign(sigInput("a b c d e f"), Options{ChunkAvg: 100})
}

func BenchmarkSign(b *testing.B) {
	in := sigCorpus(b)
	b.SetBytes(int64(len(in.Text)))
	b.ReportAllocs()
	for b.Loop() {
		Sign(in, Options{})
	}
}

// BenchmarkSignPage signs texts of web-page size one by one.
func BenchmarkSignPage(b *testing.B) {
	var ins []Input
	n := 0
	for _, t := range sigTexts(b) {
		ins = append(ins, sigInput(t.text))
		n += len(ins[len(ins)-1].Text)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, in := range ins {
			Sign(in, Options{})
		}
	}
}

func TestIsNumber(t *testing.T) {
	for _, tt := range []struct {
		token string
		want  bool
	}{
		{"2014", true}, {"19", true}, {"0", true},
		{"٣٤", true},  // Arabic-Indic digits
		{"१२", true},  // Devanagari digits
		{"1b", false}, // a baseball position, a word
		{"v2", false}, {"gfx10", false}, {"x86", false}, {"12a", false},
		{"東京", false}, {"é1", false}, {"", false}, {"reviews", false},
		{"½", true}, {"1\u0301", true}, // a vulgar fraction; a digit with a combining mark
		{"\u0301", false}, {"—", false}, // no digit
	} {
		if got := isNumber(tt.token); got != tt.want {
			t.Errorf("isNumber(%q) = %v, want %v", tt.token, got, tt.want)
		}
	}
}

// TestSeqNumbersAreOneToken: in the word sequence every number is one
// token, so a real text whose numbers all changed (as a page's prices,
// counts and dates do between fetches) aligns whole, while the same number
// of changed words still counts; the other families hash numbers as words.
func TestSeqNumbersAreOneToken(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "gpl-3.txt"))
	if err != nil {
		t.Fatal(err)
	}
	words := strings.FieldsFunc(strings.ToLower(string(b)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	numbers, renumbered, reworded := 0, slices.Clone(words), slices.Clone(words)
	for i, w := range words {
		if isNumber(w) {
			numbers++
			renumbered[i] = w + "7"
			if i+1 < len(words) && !isNumber(words[i+1]) {
				reworded[i+1] = "zzz"
			}
		}
	}
	if numbers < 10 {
		t.Fatalf("gpl-3.txt has %d numbers, want at least 10", numbers)
	}
	orig := Sign(sigInputFromTokens(words, 20), Options{})
	num := Sign(sigInputFromTokens(renumbered, 20), Options{})
	word := Sign(sigInputFromTokens(reworded, 20), Options{})
	if !slices.Equal(orig.Seq, num.Seq) {
		t.Errorf("%d numbers changed: word sequences differ", numbers)
	}
	s := Compare(&orig, &num, CompareOptions{LCS: true})
	if s.LCS != 1 || s.Divergence != 0 {
		t.Errorf("%d numbers changed: LCS %v, divergence %v; want 1, 0", numbers, s.LCS, s.Divergence)
	}
	if s.Jaccard == 1 && orig.Simhash == num.Simhash {
		t.Errorf("%d numbers changed: min-hash and simhash unchanged, want them to hash numbers as words", numbers)
	}
	if s := Compare(&orig, &word, CompareOptions{LCS: true}); !(s.LCS < 1) {
		t.Errorf("words after the %d numbers changed: LCS %v, want < 1", numbers, s.LCS)
	}
}
