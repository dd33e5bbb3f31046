package demo_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/internal/demo"
)

func Example() {
	e, err := demo.New(sample.Docs(), demo.Options{})
	if err != nil {
		log.Fatal(err)
	}
	hits, total := e.Search("benchmark", 0, 3)
	fmt.Println(total, "pages match")
	for _, h := range hits {
		fmt.Println(h.URL, "|", h.Title)
	}
	// Output:
	// 5 pages match
	// /pages/13/Benchmarking.html | Benchmarking tips — LLVM 13 documentation
	// /pages/14/Benchmarking.html | Benchmarking tips — LLVM 14 documentation
	// /pages/15/Benchmarking.html | Benchmarking tips — LLVM 15 documentation
}

func ExampleStart() {
	e, err := demo.New(sample.Docs(), demo.Options{})
	if err != nil {
		log.Fatal(err)
	}
	s, err := demo.Start("127.0.0.1:0", e)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Shutdown(context.Background())

	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(s.URL() + "/demo/_search?q=getting+started&size=1")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, strings.Contains(string(body), s.URL()+"/pages/13/GettingStartedTutorials.html"))
	// Output:
	// 200 OK true
}
