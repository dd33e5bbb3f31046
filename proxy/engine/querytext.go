package engine

import "strings"

// luceneSpecial are the characters Lucene's classic query syntax gives
// a meaning (Elasticsearch's query_string, which q= is, and Solr's
// lucene, edismax and dismax parsers): field names, groups, ranges,
// wildcards, regular expressions, boosts, fuzziness, escapes and Solr's
// local parameters ("{!...}").
const luceneSpecial = `+-=&|><!(){}[]^"~*?:\/`

// luceneText writes a metasearch query, free text a reader typed, as a
// Lucene query that searches for its words and "phrases" only: every
// special character is escaped, and the operator words AND, OR and NOT
// are escaped to be words. Balanced double quotes stay phrases (an odd
// last quote is a character), and a word or phrase led by "-" or "+"
// keeps it, as readers use them in web search engines (SearXNG and
// Omega honour them too): "-word" leaves out the pages holding it,
// "+word" asks for it. Without it "title:x" read another field,
// "*" matched every document, "{!join ...}" switched Solr's parser, and
// "llvm/clang", "(" or "C:\path" were syntax errors the engine refused
// with 400 while other engines answered.
func luceneText(q string) string {
	var b strings.Builder
	b.Grow(len(q) + len(q)/4)
	quotes := strings.Count(q, `"`)
	inPhrase := false
	word := 0 // where the current word starts in q
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '"' && (inPhrase || quotes >= 2):
			inPhrase = !inPhrase
			quotes--
			b.WriteByte('"')
			continue
		case inPhrase:
			if c == '\\' {
				b.WriteByte('\\')
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			word = i + 1
		case i == word && (c == '-' || c == '+') && i+1 < len(q) && startsTerm(q[i+1], quotes >= 2):
			// A reader's "-word" or "+word": kept, the next character
			// being where the word starts (so "-AND" is a word).
			word = i + 1
		case i == word && isOperator(q[i:]):
			b.WriteByte('\\')
		case strings.IndexByte(luceneSpecial, c) >= 0:
			b.WriteByte('\\')
		}
		if c == '"' {
			quotes--
		}
		b.WriteByte(c)
	}
	return b.String()
}

// startsTerm reports whether c, after a reader's "-" or "+", starts a
// word or, when phrase (the quotes are balanced), a phrase: anything
// but a space or another special character.
func startsTerm(c byte, phrase bool) bool {
	if c == '"' {
		return phrase
	}
	return strings.IndexByte(" \t\n\r\f", c) < 0 && strings.IndexByte(luceneSpecial, c) < 0
}

// isOperator reports that s starts with a word Lucene reads as an
// operator: AND, OR or NOT followed by a space, a quote or the end.
func isOperator(s string) bool {
	for _, op := range []string{"AND", "OR", "NOT"} {
		if rest, ok := strings.CutPrefix(s, op); ok && (rest == "" || strings.IndexByte(" \t\n\r\f\"", rest[0]) >= 0) {
			return true
		}
	}
	return false
}
