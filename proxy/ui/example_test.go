package ui_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/winnow-search/winnow/proxy/ui"
)

func ExampleRender() {
	p := &ui.Page{
		Query: "go generics",
		Groups: []ui.Group{{
			ID:     "c1",
			Winner: ui.Item{URL: "https://go.dev/doc/tutorial/generics", Title: "Tutorial: Getting started with generics"},
			Similar: []ui.Item{{
				URL:      "https://tip.golang.org/doc/tutorial/generics",
				Title:    "Tutorial: Getting started with generics",
				Relation: "duplicate",
				Explain:  "duplicate: simhash distance 2 <= 16 (candidate), LCS ratio 0.97 >= 0.77 (verified)",
			}},
		}},
		Total:   2,
		Refined: 2,
	}
	var b strings.Builder
	if err := ui.Render(&b, p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	for line := range strings.Lines(b.String()) {
		if strings.Contains(line, "<title>") || strings.Contains(line, "<summary>") {
			fmt.Print(line)
		}
	}
	// Output:
	// <title>winnow — go generics</title>
	// <summary>1 similar result</summary>
	// <summary>why grouped?</summary>
}
