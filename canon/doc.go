// Package canon turns HTML and plain text into the canonical form that
// winnow compares, and canonicalizes URLs and host names.
//
// [HTML] decodes a page (charset from the byte order mark, the HTTP
// Content-Type header, a <meta> declaration, then UTF-8 validity, else
// windows-1252 as WHATWG prescribes), extracts its visible text with the
// streaming golang.org/x/net/html tokenizer (no DOM), and normalizes it with
// the rules of Jain, Dahlin and Tewari, "Using Bloom Filters to Refine Web
// Search Results" §3.1: lower case, bullets and numberings such as "a.1"
// removed, colons, dashes and quotes replaced with a space, white space
// collapsed; Unicode NFKC is applied as well. The result is a [Document]
// holding the canonical text (one block per line), its word tokens (CJK
// scripts as overlapping character bigrams) and its sentences. With
// [ContentMain] only the main content is kept: a semantic container
// (<main>, <article>, role=main, Sphinx's div.body, ...) when it holds most
// of the text, otherwise blocks chosen by a jusText-style classifier on text
// length and link density.
//
// [ParseHead] reads what a page's <head> declares: its title, its
// canonical URL (<link rel="canonical">, resolved against <base href> and
// the page URL and canonicalized with [URL]), a <meta http-equiv="refresh">
// target and delay, and robots noindex / nofollow. It parses the head
// alone (a bounded prefix, without comments, scripts and styles) into a
// DOM with golang.org/x/net/html and queries it with goquery, so its cost
// does not grow with the page; [HTMLHead] returns it with the Document and
// decodes the page once.
//
// [URL] parses http and https URLs as the WHATWG URL Standard does (its
// web-platform-tests agree: see url_whatwg_test.go) and canonicalizes them
// into keys that never merge two pages ("%2F" and hash-bang fragments are
// kept) and give one page one key (case, default ports, IPv4 number forms,
// percent-encoding, IDNA, dot segments, session IDs, "+" and "%20" in
// queries, sorted query without tracking parameters); [HostKey] maps host aliases such as www.example.com and
// m.example.com to one key, as Fetterly, Manasse and Najork §4 do for
// mirror detection.
//
// All functions are safe for concurrent use. The package never logs and
// does no I/O.
package canon
