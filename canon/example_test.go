package canon_test

import (
	"fmt"

	"github.com/winnow-search/winnow/canon"
)

func ExampleHTML() {
	page := []byte(`<html lang="en"><head><title>Notes</title><script>track()</script></head>
<body><ul><li>1. First: “quoted” item</li><li>a.1 Second &mdash; item</li></ul>
<p>東京都. Don't stop!</p></body></html>`)
	d, err := canon.HTML(page, "text/html; charset=utf-8", canon.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q\n", d.Text)
	fmt.Printf("%q\n", d.Tokens)
	fmt.Printf("%q\n", d.Sentences)
	fmt.Println(d.Title, d.Lang, d.Charset)
	// Output:
	// "notes\nfirst quoted item\nsecond item\n東京都. don t stop!\n"
	// ["notes" "first" "quoted" "item" "second" "item" "東京" "京都" "don" "t" "stop"]
	// ["notes" "first quoted item" "second item" "東京都." "don t stop!"]
	// Notes en utf-8
}

func ExampleURL() {
	u, err := canon.URL("HTTPS://WWW.Example.COM:443/a/./b/../c?utm_source=news&b=2&a=1#top")
	fmt.Println(u, err)
	fmt.Println(canon.HostKey("www.example.com"), canon.HostKey("m.example.com"))
	// Output:
	// https://www.example.com/a/c?a=1&b=2 <nil>
	// example.com example.com
}

func ExampleParseHead() {
	page := []byte(`<!doctype html><html><head>
<title>Install &amp; run</title>
<base href="/docs/v2/">
<link rel="canonical" href="install.html?utm_source=feed">
<meta name="robots" content="noindex">
</head><body><p>…</p></body></html>`)
	h := canon.ParseHead(page, "text/html", "https://Example.com/mirror/install.html")
	fmt.Println(h.Title)
	fmt.Println(h.Canonical)
	fmt.Println(h.NoIndex, h.NoFollow)
	// Output:
	// Install & run
	// https://example.com/docs/v2/install.html
	// true false
}
