package warc_test

import (
	"fmt"
	"io"
	"log"
	"os"

	"github.com/winnow-search/winnow/warc"
)

func ExampleReader() {
	f, err := os.Open("testdata/wget.warc.gz")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	r, err := warc.NewReader(f)
	if err != nil {
		log.Fatal(err)
	}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Print(err) // a damaged record: go on with the next
			continue
		}
		if rec.Type != "response" {
			continue
		}
		status, h, body, err := warc.ParseHTTPResponse(rec.Content)
		if err != nil {
			log.Print(err)
			continue
		}
		n, _ := io.Copy(io.Discard, body)
		fmt.Println(rec.Offset, status, h.Get("Content-Type"), n, rec.TargetURI)
	}
	// Output:
	// 878 200 text/html 42285 http://127.0.0.1:8765/llvm13/FAQ.html
	// 9755 200 text/html 42015 http://127.0.0.1:8765/llvm22/FAQ.html
	// 18887 200 text/html 24194 http://127.0.0.1:8765/llvm22/CodeReview.html
	// 27754 404 text/html;charset=utf-8 335 http://127.0.0.1:8765/missing.html
}
