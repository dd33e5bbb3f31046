package sample

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"testing"
)

func TestDocs(t *testing.T) {
	clusters := map[string]int{}
	n := 0
	var prev string
	for doc, err := range Docs() {
		if err != nil {
			t.Fatalf("Docs: %v", err)
		}
		n++
		if doc.ID <= prev {
			t.Errorf("ID %q after %q: not in order", doc.ID, prev)
		}
		prev = doc.ID
		if doc.ContentType != "text/html" || doc.URL != "" || !bytes.Contains(doc.Body, []byte("<html")) {
			t.Errorf("doc %q: type %q, URL %q, %d bytes", doc.ID, doc.ContentType, doc.URL, len(doc.Body))
		}
		clusters[Page(doc.ID)]++
	}
	if n != Count {
		t.Errorf("Docs yielded %d documents, want %d", n, Count)
	}
	var sizes []int
	for _, p := range slices.Sorted(maps.Keys(clusters)) {
		sizes = append(sizes, clusters[p])
	}
	multi, single := 0, 0
	for _, s := range sizes {
		if s >= 3 {
			multi++
		} else if s == 1 {
			single++
		}
	}
	if multi != 12 || single != 10 || len(clusters) != 22 {
		t.Errorf("pages: %d in 3+ releases, %d singletons, %d in all; want 12, 10, 22 (sizes %v)", multi, single, len(clusters), sizes)
	}
}

func TestPage(t *testing.T) {
	for _, tt := range []struct{ id, want string }{
		{"sample://llvm/13/CommandGuide/llvm-as", "CommandGuide/llvm-as"},
		{"sample://llvm/22/FaultMaps", "FaultMaps"},
		{"https://llvm.org/docs/FaultMaps.html", ""},
	} {
		if got := Page(tt.id); got != tt.want {
			t.Errorf("Page(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func ExampleDocs() {
	n, size := 0, 0
	for doc, err := range Docs() {
		if err != nil {
			panic(err)
		}
		if Page(doc.ID) == "CodeReview" {
			fmt.Println(doc.ID)
		}
		n++
		size += len(doc.Body)
	}
	fmt.Println(n, "documents,", size > 500_000 && size < 2_000_000)
	// Output:
	// sample://llvm/13/CodeReview
	// sample://llvm/16/CodeReview
	// sample://llvm/19/CodeReview
	// sample://llvm/22/CodeReview
	// 53 documents, true
}
