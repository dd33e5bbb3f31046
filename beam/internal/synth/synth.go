// Package synth writes a synthetic corpus with planted near-duplicates, as
// JSON Lines that `winnow dedup` and `winnow-beam dedup` both read: the
// large inputs of the equality tests and the figures.
package synth

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

// Options shapes the corpus. The zero value uses the defaults.
type Options struct {
	// Seed makes the corpus; the same seed writes the same bytes.
	Seed uint64
	// Hot is the size of one group of identical pages (a boilerplate
	// page mirrored everywhere), whose candidate keys are hot; 0: none.
	Hot int
}

// record is one line.
type record struct {
	ID   string `json:"id"`
	URL  string `json:"url"`
	Text string `json:"text"`
}

// Write writes n documents: about 70 % distinct pages of 60 to 120 words
// drawn from a 20,000-word vocabulary, and 30 % near-duplicates of an
// earlier page (an exact copy, or one to six words replaced, inserted or
// deleted), then o.Hot copies of one page.
func Write(w io.Writer, n int, o Options) error {
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	vocab := vocabulary(rng, 20000)
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	var bases [][]string
	word := func() string { return vocab[rng.IntN(len(vocab))] }
	emit := func(i int, words []string) error {
		return enc.Encode(record{
			ID: fmt.Sprintf("s%07d", i), URL: fmt.Sprintf("https://synth.example/%07d", i),
			Text: strings.Join(words, " ") + ".",
		})
	}
	regular := n - o.Hot
	for i := range regular {
		var words []string
		if len(bases) > 0 && rng.IntN(10) < 3 {
			base := bases[rng.IntN(len(bases))]
			words = append([]string(nil), base...)
			for range rng.IntN(7) {
				p := rng.IntN(len(words))
				switch rng.IntN(3) {
				case 0:
					words[p] = word()
				case 1:
					words = append(words[:p], append([]string{word()}, words[p:]...)...)
				default:
					words = append(words[:p], words[p+1:]...)
				}
			}
		} else {
			words = make([]string, 60+rng.IntN(61))
			for k := range words {
				words[k] = word()
			}
			bases = append(bases, words)
		}
		if err := emit(i, words); err != nil {
			return err
		}
	}
	if o.Hot > 0 {
		hot := make([]string, 80)
		for k := range hot {
			hot[k] = word()
		}
		for i := regular; i < n; i++ {
			if err := emit(i, hot); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// vocabulary returns n distinct pronounceable words.
func vocabulary(rng *rand.Rand, n int) []string {
	const cons, vows = "bcdfghjklmnprstvz", "aeiou"
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteByte(cons[rng.IntN(len(cons))])
			b.WriteByte(vows[rng.IntN(len(vows))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
