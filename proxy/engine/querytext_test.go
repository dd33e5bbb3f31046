package engine

import (
	"net/url"
	"testing"
)

// TestLuceneText pins how a metasearch query reaches Lucene's syntax:
// the queries readers type that were field names, wildcards, parser
// switches or syntax errors on the real engines (docs/reliability-proxy.md,
// "Metasearch over real engines"), each escaped to its words.
func TestLuceneText(t *testing.T) {
	for q, want := range map[string]string{
		"near duplicate":          "near duplicate",
		"title:benchmark":         `title\:benchmark`,
		"url:*":                   `url\:\*`,
		"*":                       `\*`,
		"(":                       `\(`,
		"llvm/clang":              `llvm\/clang`,
		`C:\path`:                 `C\:\\path`,
		"{!join from=id to=url}x": `\{\!join from\=id to\=url\}x`,
		"c++ && x || y":           `c\+\+ \&\& x \|\| y`,
		"[a TO b] x^2 y~ -z":      `\[a TO b\] x\^2 y\~ -z`,
		"llvm -clang +tools":      "llvm -clang +tools",
		`review -"code review"`:   `review -"code review"`,
		`-"unbalanced`:            `\-\"unbalanced`,
		"review - x -- y-z":       `review \- x \-\- y\-z`,
		"-AND +NOT -(x) -*":       `-\AND +\NOT \-\(x\) \-\*`,
		"code AND review":         `code \AND review`,
		"NOT x OR y":              `\NOT x \OR y`,
		`NOT"x"`:                  `\NOT"x"`,
		"ANDROID NOTE ORACLE":     "ANDROID NOTE ORACLE",
		`"code review"`:           `"code review"`,
		`"a:b (c)" d:e`:           `"a:b (c)" d\:e`,
		`"a\b"`:                   `"a\\b"`,
		`"unbalanced`:             `\"unbalanced`,
		`"x" y"`:                  `"x" y\"`,
		`a"b"c"`:                  `a"b"c\"`,
		"Überblick тест ベンチ":      "Überblick тест ベンチ",
	} {
		if got := luceneText(q); got != want {
			t.Errorf("luceneText(%q) = %q, want %q", q, got, want)
		}
	}
}

// TestSearchEscapes checks that Search sends the escaped text to the
// Lucene kinds and the text as typed to the others.
func TestSearchEscapes(t *testing.T) {
	for kind, want := range map[string]string{
		"elasticsearch":  `title\:x \*`,
		"opensearch":     `title\:x \*`,
		"solr":           `title\:x \*`,
		"searxng":        "title:x *",
		"opensearch-rss": "title:x *",
	} {
		r, err := mustNew(t, Config{Kind: kind}).Search(Query{Q: "title:x *", Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(r.Path)
		if err != nil {
			t.Fatal(err)
		}
		param := "q"
		if kind == "opensearch-rss" {
			param = "P"
		}
		if got := u.Query().Get(param); got != want {
			t.Errorf("%s: Search sent %s=%q, want %q", kind, param, got, want)
		}
	}
}
