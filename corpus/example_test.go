package corpus_test

import (
	"fmt"
	"log"

	"github.com/winnow-search/winnow/corpus"
)

func ExampleOpen() {
	for doc, err := range corpus.Open("testdata/wget.warc.gz") {
		if err != nil {
			log.Print(err) // a bad record: the walk goes on
			continue
		}
		fmt.Println(doc.URL, doc.ContentType, len(doc.Body))
	}
	// Output:
	// http://127.0.0.1:8765/llvm13/FAQ.html text/html 42285
	// http://127.0.0.1:8765/llvm22/FAQ.html text/html 42015
	// http://127.0.0.1:8765/llvm22/CodeReview.html text/html 24194
}
