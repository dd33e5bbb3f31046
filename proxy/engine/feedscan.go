package engine

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// scanFeed reads a feed into st in one pass without encoding/xml. It
// handles what feeds are made of: an XML declaration (UTF-8 or ASCII),
// processing instructions, comments, elements with quoted attributes,
// namespace declarations, text with the five predefined entities and
// character references, and CDATA sections. It reports false, leaving st
// in an unspecified state, for anything else (a DOCTYPE, another entity or
// encoding, a second root, a name outside ASCII, a syntax error): the
// caller then parses with encoding/xml, which decides. Namespaces resolve
// as encoding/xml's Decoder.Token resolves them: an unbound prefix stands
// for itself.
func scanFeed(b []byte, st *feedState) bool {
	if !feedChars(b) {
		return false
	}
	var names, tops [16]span
	var ns [8]nsDef
	sc := feedScanner{b: b, st: st, names: names[:0], nsTop: tops[:0], ns: ns[:0]}
	return sc.run()
}

// feedChars reports whether b is UTF-8 made of XML characters (XML 1.0
// §2.2, as encoding/xml's isInCharacterRange).
func feedChars(b []byte) bool {
	for i := 0; i < len(b); {
		// 8 bytes at a time while they are ASCII and none is a control
		// byte (tab and line ends go to the byte loop, which allows them).
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			if ((x-0x20*swarLo)&^x|x)&swarHi != 0 {
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		if c < utf8.RuneSelf {
			if c < ' ' && c != '\t' && c != '\n' && c != '\r' {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 || r >= 0xFFFE && r <= 0xFFFF {
			return false
		}
		i += n
	}
	return true
}

type feedScanner struct {
	b      []byte
	st     *feedState
	names  []span  // open elements' qualified names
	ns     []nsDef // namespace declarations in scope
	nsTop  []span  // start: len(ns) when each open element started
	rooted bool    // the root element has started
	tmp    []byte  // decoded attribute values
}

// nsDef binds prefix (a span of b; empty: the default namespace) to uri.
type nsDef struct {
	prefix span
	uri    []byte
}

const xmlURL = "http://www.w3.org/XML/1998/namespace"

func (sc *feedScanner) run() bool {
	b := sc.b
	i := 0
	for i < len(b) {
		if b[i] != '<' {
			j := bytes.IndexByte(b[i:], '<')
			if j < 0 {
				j = len(b) - i
			}
			if !sc.charData(i, i+j) {
				return false
			}
			i += j
			continue
		}
		if i+1 >= len(b) {
			return false
		}
		var ok bool
		switch b[i+1] {
		case '?':
			i, ok = sc.procInst(i)
		case '!':
			i, ok = sc.bang(i)
		case '/':
			i, ok = sc.endTag(i)
		default:
			i, ok = sc.startTag(i)
		}
		if !ok {
			return false
		}
	}
	return sc.rooted && len(sc.names) == 0
}

// charData passes the text b[i:j] to the state; outside the root only
// white space may appear.
func (sc *feedScanner) charData(i, j int) bool {
	t := sc.b[i:j]
	if len(sc.names) == 0 {
		for _, c := range t {
			if !isSpace(c) {
				return false
			}
		}
		return true
	}
	if !sc.st.wantsText() {
		return knownRefs(t)
	}
	if bytes.IndexByte(t, '&') < 0 && bytes.IndexByte(t, '\r') < 0 {
		sc.st.text(t, j)
		return true
	}
	d, ok := decodeXML(sc.tmp[:0], t)
	sc.tmp = d
	if ok {
		sc.st.text(d, j)
	}
	return ok
}

// procInst skips <?target ...?>; the XML declaration must come first and
// name UTF-8 or ASCII, if any encoding.
func (sc *feedScanner) procInst(i int) (int, bool) {
	b := sc.b
	k := bytes.Index(b[i+2:], []byte("?>"))
	if k < 0 {
		return 0, false
	}
	body := b[i+2 : i+2+k]
	end := i + 2 + k + 2
	if len(body) >= 3 && string(body[:3]) == "xml" && (len(body) == 3 || isSpace(body[3])) {
		if i != 0 {
			return 0, false
		}
		v, ok := pseudoAttr(body, "version")
		if ok && string(v) != "1.0" {
			return 0, false
		}
		if e, ok := pseudoAttr(body, "encoding"); ok {
			switch string(bytes.ToLower(e)) {
			case "utf-8", "utf8", "us-ascii", "ascii":
			default:
				return 0, false
			}
		}
		return end, true
	}
	if len(body) == 0 || !isNameStart(body[0]) {
		return 0, false
	}
	return end, true
}

// pseudoAttr finds name="v" or name='v' in an XML declaration.
func pseudoAttr(body []byte, name string) ([]byte, bool) {
	k := bytes.Index(body, []byte(name))
	if k < 0 {
		return nil, false
	}
	rest := bytes.TrimLeft(body[k+len(name):], " \t\r\n")
	if len(rest) == 0 || rest[0] != '=' {
		return nil, false
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if len(rest) < 2 || rest[0] != '"' && rest[0] != '\'' {
		return nil, false
	}
	e := bytes.IndexByte(rest[1:], rest[0])
	if e < 0 {
		return nil, false
	}
	return rest[1 : 1+e], true
}

// bang reads a comment or a CDATA section; other declarations make the
// scanner give up.
func (sc *feedScanner) bang(i int) (int, bool) {
	b := sc.b
	switch {
	case bytes.HasPrefix(b[i:], []byte("<!--")):
		k := bytes.Index(b[i+4:], []byte("--"))
		if k < 0 || i+4+k+2 >= len(b) || b[i+4+k+2] != '>' {
			return 0, false
		}
		return i + 4 + k + 3, true
	case bytes.HasPrefix(b[i:], []byte("<![CDATA[")):
		if len(sc.names) == 0 {
			return 0, false
		}
		k := bytes.Index(b[i+9:], []byte("]]>"))
		if k < 0 {
			return 0, false
		}
		t := b[i+9 : i+9+k]
		end := i + 9 + k + 3
		if len(t) > 0 {
			if bytes.IndexByte(t, '\r') >= 0 {
				d, _ := decodeXML(sc.tmp[:0], bytes.ReplaceAll(t, []byte("&"), []byte("&amp;")))
				sc.tmp = d
				t = d
			}
			sc.st.text(t, end)
		}
		return end, true
	}
	return 0, false
}

func isNameStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isNameByte(c byte) bool {
	return isNameStart(c) || c >= '0' && c <= '9' || c == '-' || c == '.' || c == ':'
}

// name returns the end of the name at b[i]: ASCII, at most one colon, not
// at either end.
func (sc *feedScanner) name(i int) (int, bool) {
	b := sc.b
	if i >= len(b) || !isNameStart(b[i]) {
		return 0, false
	}
	colons := 0
	j := i + 1
	for j < len(b) && isNameByte(b[j]) {
		if b[j] == ':' {
			colons++
		}
		j++
	}
	if colons > 1 || b[j-1] == ':' || j < len(b) && b[j] >= utf8.RuneSelf {
		return 0, false
	}
	return j, true
}

// startTag reads the start tag at b[i] ('<'): its namespace declarations
// and, for the feed state, its rel, href and type; it returns the end of
// the tag.
func (sc *feedScanner) startTag(i int) (int, bool) {
	b := sc.b
	if sc.rooted && len(sc.names) == 0 {
		return 0, false // a second root
	}
	ne, ok := sc.name(i + 1)
	if !ok {
		return 0, false
	}
	qname := span{i + 1, ne}
	sc.nsTop = append(sc.nsTop, span{len(sc.ns), 0})
	// First pass over the attributes: namespace declarations, which apply
	// to the element itself.
	var rel, href, typ span // raw attribute values (quotes excluded)
	j := ne
	for {
		at, next, done, ok := sc.nextAttr(j)
		if !ok {
			return 0, false
		}
		j = next
		if done {
			break
		}
		name := b[at.name.start:at.name.end]
		switch {
		case string(name) == "xmlns":
			sc.ns = append(sc.ns, nsDef{span{}, b[at.val.start:at.val.end]})
		case len(name) > 6 && string(name[:6]) == "xmlns:":
			sc.ns = append(sc.ns, nsDef{span{at.name.start + 6, at.name.end}, b[at.val.start:at.val.end]})
		}
		// encoding/xml's Attr.Name.Local, whatever the prefix.
		if c := bytes.LastIndexByte(name, ':'); c >= 0 {
			name = name[c+1:]
		}
		switch string(name) {
		case "rel":
			rel = at.val
		case "href":
			href = at.val
		case "type":
			typ = at.val
		}
	}
	for _, d := range sc.ns[sc.nsTop[len(sc.nsTop)-1].start:] {
		if bytes.IndexByte(d.uri, '&') >= 0 || bytes.IndexByte(d.uri, '\r') >= 0 {
			return 0, false
		}
	}
	empty := b[j] == '/'
	if empty {
		if j+1 >= len(b) || b[j+1] != '>' {
			return 0, false
		}
		j++
	}
	end := j + 1
	space, local := sc.resolve(qname)
	st := sc.st
	st.start(space, local, i, end)
	if st.wantType() {
		t, ok := sc.attr(typ)
		if !ok {
			return 0, false
		}
		st.textType(t)
	}
	if st.wantLink() {
		r, ok1 := sc.attr(rel)
		h, ok2 := sc.attr(href)
		if !ok1 || !ok2 {
			return 0, false
		}
		st.link(r, h)
	}
	sc.rooted = true
	sc.names = append(sc.names, qname)
	if empty {
		return end, sc.closeElem(end, end)
	}
	return end, true
}

// tagAttr is one attribute of a start tag: its name and its raw value
// (quotes excluded).
type tagAttr struct{ name, val span }

// nextAttr reads the attribute after j, the end of the tag's name or of
// the previous attribute. At the tag's '>' or '/' it reports done, next
// being that byte; else next is just past the attribute's closing quote.
// ok is false for a malformed tag.
func (sc *feedScanner) nextAttr(j int) (at tagAttr, next int, done, ok bool) {
	b := sc.b
	k := j
	for k < len(b) && isSpace(b[k]) {
		k++
	}
	switch {
	case k >= len(b):
		return at, 0, false, false
	case b[k] == '>' || b[k] == '/':
		return at, k, true, true
	case k == j:
		return at, 0, false, false // no space before the attribute
	}
	an, ok := sc.name(k)
	if !ok {
		return at, 0, false, false
	}
	v := an
	for v < len(b) && isSpace(b[v]) {
		v++
	}
	if v >= len(b) || b[v] != '=' {
		return at, 0, false, false
	}
	v++
	for v < len(b) && isSpace(b[v]) {
		v++
	}
	if v >= len(b) || b[v] != '"' && b[v] != '\'' {
		return at, 0, false, false
	}
	ve := bytes.IndexByte(b[v+1:], b[v])
	if ve < 0 {
		return at, 0, false, false
	}
	val := span{v + 1, v + 1 + ve}
	if bytes.IndexByte(b[val.start:val.end], '<') >= 0 {
		return at, 0, false, false
	}
	return tagAttr{span{k, an}, val}, val.end + 1, false, true
}

// attr returns an attribute value decoded.
func (sc *feedScanner) attr(s span) (string, bool) {
	v := sc.b[s.start:s.end]
	if bytes.IndexByte(v, '&') < 0 && bytes.IndexByte(v, '\r') < 0 {
		return string(v), true
	}
	d, ok := decodeXML(nil, v)
	return string(d), ok
}

// resolve returns the namespace and local name of the element name q.
func (sc *feedScanner) resolve(q span) (space, local string) {
	b := sc.b
	name := b[q.start:q.end]
	prefix := []byte(nil)
	if c := bytes.IndexByte(name, ':'); c >= 0 {
		prefix, name = name[:c], name[c+1:]
	}
	local = internName(name)
	if string(prefix) == "xml" {
		return xmlURL, local
	}
	for k := len(sc.ns) - 1; k >= 0; k-- {
		d := sc.ns[k]
		if string(b[d.prefix.start:d.prefix.end]) == string(prefix) {
			return internName(d.uri), local
		}
	}
	return internName(prefix), local
}

// internName returns n if it is a name or namespace the feed state looks
// for, without allocating. Others map to a stand-in that compares as n
// does with each of those and keeps whether n is empty or holds a '/'.
func internName(n []byte) string {
	for _, s := range [...]string{"", "item", "entry", "title", "link", "description", "summary", "content",
		"totalResults", "startIndex", "itemsPerPage", atomNS, openSearchNS, openSearchNS10} {
		if string(n) == s {
			return s
		}
	}
	if bytes.IndexByte(n, '/') >= 0 {
		return "other/"
	}
	return "other"
}

func (sc *feedScanner) endTag(i int) (int, bool) {
	b := sc.b
	ne, ok := sc.name(i + 2)
	if !ok || len(sc.names) == 0 {
		return 0, false
	}
	top := sc.names[len(sc.names)-1]
	if !bytes.Equal(b[i+2:ne], b[top.start:top.end]) {
		return 0, false
	}
	for ne < len(b) && isSpace(b[ne]) {
		ne++
	}
	if ne >= len(b) || b[ne] != '>' {
		return 0, false
	}
	return ne + 1, sc.closeElem(i, ne+1)
}

func (sc *feedScanner) closeElem(before, after int) bool {
	sc.st.end(before, after)
	sc.names = sc.names[:len(sc.names)-1]
	sc.ns = sc.ns[:sc.nsTop[len(sc.nsTop)-1].start]
	sc.nsTop = sc.nsTop[:len(sc.nsTop)-1]
	return true
}
