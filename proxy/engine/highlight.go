package engine

import (
	"html"
	"strings"
)

// HighlightTag reads the highlighting tag s starts with: <em>, <b>,
// <strong> or <mark>, opening (with attributes, as <em class="hlt">) or
// closing, in any case, as Elasticsearch, OpenSearch, Solr and Omega
// write them. It returns the tag's length and whether it opens; ok is
// false when s does not start with one. A [Result]'s Title and Snippet
// are text with such tags only: every other "<" is text.
func HighlightTag(s string) (n int, open, ok bool) {
	j := strings.IndexByte(s, '>')
	if len(s) < 3 || s[0] != '<' || j < 0 {
		return 0, false, false
	}
	inner := s[1:j]
	open = !strings.HasPrefix(inner, "/")
	inner = strings.TrimPrefix(inner, "/")
	name := inner
	if k := strings.IndexAny(inner, " \t\n\r/"); k >= 0 {
		if !open && strings.TrimSpace(inner[k:]) != "" {
			return 0, false, false // a closing tag has no attributes
		}
		name = inner[:k]
	}
	switch strings.ToLower(name) {
	case "em", "b", "strong", "mark":
		return j + 1, open, true
	}
	return 0, false, false
}

// htmlSnippet reads a feed's description, HTML (RSS 2.0's description,
// Atom's summary), into a [Result]'s Snippet: text with highlighting
// tags only. Other tags and comments go, entities are decoded: an entity
// that spells a highlighting tag becomes one, as Xapian Omega's
// OpenSearch template writes its highlighting
// ("&amp;lt;strong&amp;gt;" in the XML, escaped once more than its
// HTML), which the page showed as literal "<strong>".
func htmlSnippet(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	var b strings.Builder
	for s != "" {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			i = len(s)
		}
		b.WriteString(html.UnescapeString(s[:i]))
		s = s[i:]
		if s == "" {
			break
		}
		if n, _, ok := HighlightTag(s); ok {
			b.WriteString(s[:n])
			s = s[n:]
			continue
		}
		// A tag (a letter, "/" or "!" after "<") goes; else "<" is text.
		if len(s) > 1 && (isLetter(s[1]) || s[1] == '/' || s[1] == '!') {
			if j := strings.IndexByte(s, '>'); j >= 0 {
				s = s[j+1:]
				continue
			}
		}
		b.WriteByte('<')
		s = s[1:]
	}
	return b.String()
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
