package similarity_test

import (
	"fmt"
	"strings"

	"github.com/winnow-search/winnow/similarity"
)

func input(text string) similarity.Input {
	tokens := strings.Fields(text)
	return similarity.Input{
		Text:      []byte(strings.Join(tokens, " ")),
		Tokens:    tokens,
		Sentences: strings.Split(text, ". "),
	}
}

func ExampleSign() {
	a := similarity.Sign(input("the quick brown fox jumps over the lazy dog. "+
		"the dog sleeps in the sun all afternoon. the fox runs back to the woods"), similarity.Options{})
	b := similarity.Sign(input("the quick brown fox jumps over the lazy dog. "+
		"the dog sleeps in the sun all afternoon. the fox walks back to the woods"), similarity.Options{})
	tiny := similarity.Sign(input("hello world"), similarity.Options{})

	fmt.Println("tokens:", a.Tokens, "empty:", a.Empty(), tiny.Empty())
	fmt.Println("simhash distance small:", similarity.Hamming(a.Simhash, b.Simhash) < 16)
	fmt.Printf("min-hash Jaccard: %.1f\n", similarity.EstimateJaccard(a.MinHash, b.MinHash))
	fmt.Println("shared sentence fingerprints:", similarity.SharedFingerprints(a.Fingerprints, b.Fingerprints))
	// Output:
	// tokens: 24 empty: false true
	// simhash distance small: true
	// min-hash Jaccard: 0.6
	// shared sentence fingerprints: 2
}
