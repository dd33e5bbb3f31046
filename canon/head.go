package canon

import (
	"bytes"
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
	"golang.org/x/text/encoding/unicode"

	"github.com/winnow-search/winnow/internal/bytespan"
)

// Bounds of the head [ParseHead] and [HTMLHead] read, so its cost does
// not grow with the page: they scan at most headScan bytes of the page for
// the end of the head, and parse at most headKeep bytes of it once
// comments and the contents of <script>, <style> and <noscript> are left
// out. Real heads run to 184 KB, three quarters of it inline scripts and
// styles (the saved pages under testdata: reddit.com declares its
// canonical URL at byte 137,258).
const (
	headScan = 256 << 10
	headKeep = 64 << 10
)

// Head is the metadata of an HTML page's <head> that says what the page
// is: its title, which URL it declares canonical, where it refreshes to,
// and whether robots may index it. The zero value is a page that declares
// nothing.
type Head struct {
	// Title is the text of the head's first <title>, entities decoded
	// and white space collapsed, as [Document.Title].
	Title string
	// Canonical is the URL of the head's <link rel="canonical" href>,
	// resolved against <base href> and the page URL and canonicalized
	// with [URL]; "" when there is none, when it is not http or https
	// (javascript:, data:, ...), when it cannot be resolved (a relative
	// href without a page URL), or when the head declares two different
	// canonical URLs (search engines ignore them all then).
	Canonical string
	// Refresh is the target of the head's first
	// <meta http-equiv="refresh" content="N; url=..."> that names an
	// http or https URL, parsed as browsers do, resolved and
	// canonicalized as Canonical; "" when there is none. A refresh
	// without a URL (a reload) is not reported.
	Refresh string
	// RefreshDelay is the delay of Refresh, whole seconds (fractions are
	// dropped, as browsers do); zero when Refresh is "".
	RefreshDelay time.Duration
	// NoIndex and NoFollow report "noindex" and "nofollow" (or "none",
	// both) in a <meta name="robots" content>, case-insensitive.
	NoIndex, NoFollow bool
}

// headTags selects the head elements [Head] reads, in document order.
// Only children of <head>: a <link> or <meta> inside the body, a
// <template> or a <noscript> (raw text to a parser with scripting on)
// declares nothing, as for browsers and search engines.
var headTags = cascadia.MustCompile("head > title, head > base[href], head > link[rel][href], head > meta")

// ParseHead returns the [Head] of the HTML page b, fetched from pageURL
// (the final URL after redirects; "" if unknown, and then only absolute
// URLs, or ones resolved by an absolute <base href>, are reported).
// contentType is the HTTP Content-Type header value and may be "".
//
// Only the head is parsed: the bytes from the first tag up to and
// including the first "</head>", or up to the first start tag that opens
// the body ("<body", "<div", an inline "<svg", ...), outside comments,
// scripts, styles and attribute values; at most 256 KiB of b are scanned
// for it and at most 64 KiB of markup kept. Comments, scripts, styles,
// and the <link> and <meta> tags that declare nothing read here (style
// sheets, preloads, Open Graph, ...) are left out before the parse (see
// headPrefix). What is kept is decoded as [HTML] decodes a page, but with
// the encoding determined from the head alone, parsed with
// golang.org/x/net/html into a DOM, and queried with goquery: a real head
// costs some 25-200 µs whatever the page's size. A page without a head,
// or input that is not HTML, gives the zero Head; ParseHead never fails.
// b is not retained. Use [HTMLHead] to get the page's [Document] as
// well, with one decoding.
func ParseHead(b []byte, contentType, pageURL string) Head {
	buf := headBufs.Get().(*[]byte)
	defer headBufs.Put(buf)
	p := b[:min(len(b), headScan)]
	// A byte order mark or the Content-Type header settle the encoding;
	// otherwise a <meta> declaration in the head, or UTF-8 validity,
	// does.
	e, name, certain := declaredEncoding(p, contentType)
	if !certain || asciiCompatible(name) {
		h := headPrefix((*buf)[:0], p) // markup is ASCII: cut before decoding
		*buf = h[:0]
		switch {
		case certain:
		case ascii(h): // any ASCII-compatible encoding reads it alike
			e, name = unicode.UTF8, "utf-8"
		default:
			e, name = determineEncoding(h, "", false)
		}
		if asciiCompatible(name) {
			return parseHead(decode(h, e, name), pageURL)
		}
	}
	return parseHead(headPrefix((*buf)[:0], decode(p, e, name)), pageURL)
}

// headBufs holds buffers for headPrefix, headKeep bytes each.
var headBufs = sync.Pool{New: func() any { b := make([]byte, 0, headKeep); return &b }}

// ascii reports whether b holds only ASCII bytes and no escape (which
// shifts ISO-2022-JP into another character set).
func ascii(b []byte) bool {
	return bytespan.ASCII(b) == len(b) && bytes.IndexByte(b, 0x1b) < 0
}

// asciiCompatible reports whether the encoding of this WHATWG name writes
// every ASCII character as its ASCII byte and uses none of the bytes that
// delimit markup ("<", ">", "/", "!", "-") inside a multibyte character,
// so markup can be found before decoding: all but UTF-16 and ISO-2022-JP.
func asciiCompatible(name string) bool {
	return !strings.HasPrefix(name, "utf-16") && name != "iso-2022-jp" && name != "replacement"
}

// HTMLHead returns what [HTML] returns and the page's [Head] (see
// [ParseHead]), decoding b once, with the encoding HTML chose.
func HTMLHead(b []byte, contentType, pageURL string, o Options) (Document, Head, error) {
	var h Head
	d, err := parseHTML(b, contentType, o, func(u []byte) {
		buf := headBufs.Get().(*[]byte)
		*buf = headPrefix((*buf)[:0], u)
		h = parseHead(*buf, pageURL)
		*buf = (*buf)[:0]
		headBufs.Put(buf)
	})
	return d, h, err
}

// parseHead returns the Head of u, a head as headPrefix returns it,
// decoded to UTF-8.
func parseHead(u []byte, pageURL string) Head {
	if len(u) == 0 {
		return Head{}
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(u))
	if err != nil {
		return Head{}
	}
	var (
		h                  Head
		titled, based      bool
		base               = absoluteHTTP(pageURL)
		canonical          string
		canonicals         int
		links, metas, refs []*goquery.Selection
	)
	// One pass in document order; <base> applies to every URL in the
	// document, those before it too, so URLs are resolved afterwards.
	for _, s := range doc.FindMatcher(headTags).EachIter() {
		switch goquery.NodeName(s) {
		case "title":
			if !titled {
				titled = true
				h.Title = strings.Join(strings.Fields(s.Text()), " ")
			}
		case "base":
			if !based { // the first <base href> counts (HTML §4.2.3)
				based = true
				href, _ := s.Attr("href")
				if b := resolve(base, href); b != nil {
					base = b
				}
			}
		case "link":
			links = append(links, s)
		case "meta":
			metas = append(metas, s)
		}
	}
	for _, s := range links {
		rel, _ := s.Attr("rel")
		if !hasToken(rel, "canonical") {
			continue
		}
		href, _ := s.Attr("href")
		c := canonicalURL(base, href)
		switch {
		case c == "" || c == canonical:
		case canonicals == 0:
			canonical, canonicals = c, 1
		default:
			canonicals++
		}
	}
	if canonicals == 1 {
		h.Canonical = canonical
	}
	for _, s := range metas {
		if v, ok := s.Attr("http-equiv"); ok && strings.EqualFold(strings.TrimSpace(v), "refresh") {
			refs = append(refs, s)
			continue
		}
		if v, _ := s.Attr("name"); !strings.EqualFold(strings.TrimSpace(v), "robots") {
			continue
		}
		content, _ := s.Attr("content")
		for _, t := range strings.FieldsFunc(content, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' }) {
			switch {
			case strings.EqualFold(t, "noindex"):
				h.NoIndex = true
			case strings.EqualFold(t, "nofollow"):
				h.NoFollow = true
			case strings.EqualFold(t, "none"):
				h.NoIndex, h.NoFollow = true, true
			}
		}
	}
	for _, s := range refs {
		content, _ := s.Attr("content")
		if delay, target, ok := parseRefresh(content); ok && target != "" {
			if c := canonicalURL(base, target); c != "" {
				h.Refresh, h.RefreshDelay = c, delay
				break
			}
		}
	}
	return h
}

// headPrefix returns the head of the page u for the parser: the bytes
// from the first '<' (bytes before it, such as a byte order mark, or one
// re-encoded as something else, would make a parser open the body at
// once) up to and including the first "</head>", or up to the first
// start tag that opens the body (opensBody: "<body", "<div", "<svg", ...),
// outside comments, scripts, styles and attribute values.
// Comments, <script>, <style> and <noscript> elements (raw text to a
// parser with scripting on; their end is the first end tag, as for a
// browser but for a script's "<!--<script>" escape), <template> elements
// (inert content; up to the first end tag) and the <link> and
// <meta> tags that declare nothing parseHead reads (wantedTag) are left
// out, which costs little to find and makes the parse of a real head
// several times cheaper: x/net/html builds a DOM at some 25 MB/s. At most
// headScan bytes of u are scanned and headKeep bytes appended to out,
// which is returned. u is ASCII-compatible (raw bytes of such an
// encoding, or UTF-8).
func headPrefix(out, u []byte) []byte {
	u = u[:min(len(u), headScan)]
	i := bytes.IndexByte(u, '<')
	if i < 0 {
		return out
	}
	keep := i // u[keep:i] is markup still to copy to out
	add := func(b []byte) []byte { return append(out, b[:min(len(b), max(headKeep-len(out), 0))]...) }
	for {
		if len(out)+i-keep >= headKeep {
			return add(u[keep:i])
		}
		j := bytes.IndexByte(u[i:], '<')
		if j < 0 {
			return add(u[keep:])
		}
		i += j
		r := u[i+1:]
		switch {
		case bytes.HasPrefix(r, []byte("!--")):
			out = add(u[keep:i])
			// "<!-->" and "<!--->" are empty comments too.
			k := bytes.Index(u[i+2:], []byte("-->"))
			if k < 0 {
				return out
			}
			i = i + 2 + k + 3
			keep = i
		case rawTag(r) != "":
			out = add(u[keep:i])
			e := endTag(u, i+1, rawTag(r))
			if e < 0 {
				return out
			}
			i, keep = e, e
		case tagNamed(r, "link") || tagNamed(r, "meta"):
			e := tagEnd(u, i+5)
			if e < 0 { // a parser drops a tag cut by the end of input
				return add(u[keep:i])
			}
			if !wantedTag(u[i:e]) {
				out = add(u[keep:i])
				keep = e
			}
			i = e
		case tagNamed(r, "title"):
			e := endTag(u, i+1, "title")
			if e < 0 {
				return add(u[keep:])
			}
			i = e
		case tagNamed(r, "/head"):
			if k := bytes.IndexByte(r, '>'); k >= 0 {
				return add(u[keep : i+1+k+1])
			}
			return add(u[keep:])
		case opensBody(r):
			return add(u[keep:i])
		default:
			i++
		}
	}
}

// tagEnd returns the index just past the '>' that ends the start tag
// whose attributes begin at u[i], reading attributes as the HTML
// tokenizer does (a quoted value may hold '>'); -1 when the input ends
// first.
func tagEnd(u []byte, i int) int {
	for i < len(u) {
		switch c := u[i]; {
		case c == '>':
			return i + 1
		case isSpace(c) || c == '/':
			i++
			continue
		}
		// An attribute name (a leading '=' is part of it), then maybe
		// "=" and a value.
		i++
		for i < len(u) && !isSpace(u[i]) && u[i] != '/' && u[i] != '>' && u[i] != '=' {
			i++
		}
		for i < len(u) && isSpace(u[i]) {
			i++
		}
		if i == len(u) || u[i] != '=' {
			continue
		}
		i++
		for i < len(u) && isSpace(u[i]) {
			i++
		}
		if i < len(u) && (u[i] == '"' || u[i] == '\'') {
			k := bytes.IndexByte(u[i+1:], u[i])
			if k < 0 {
				return -1
			}
			i += 1 + k + 1
			continue
		}
		for i < len(u) && !isSpace(u[i]) && u[i] != '>' {
			i++
		}
	}
	return -1
}

// wantedTag reports whether the <link> or <meta> tag t may be one that
// parseHead reads, or a charset declaration: it mentions "canonical",
// "robots", "refresh" or "charset" in any case. The others (style sheets,
// preloads, icons, Open Graph and other metadata), most of a real head's
// tags, are left out. One pass over t.
func wantedTag(t []byte) bool {
	for i, c := range t {
		switch c | 0x20 {
		case 'c':
			if hasPrefixFold(t[i:], "canonical") || hasPrefixFold(t[i:], "charset") {
				return true
			}
		case 'r':
			if hasPrefixFold(t[i:], "robots") || hasPrefixFold(t[i:], "refresh") {
				return true
			}
		}
	}
	return false
}

// hasPrefixFold reports whether b starts with w (ASCII, lower case) in
// any case.
func hasPrefixFold(b []byte, w string) bool {
	if len(b) < len(w) {
		return false
	}
	for i := range len(w) {
		if b[i]|0x20 != w[i] {
			return false
		}
	}
	return true
}

// opensBody reports whether r (the bytes after a '<') starts a start tag
// that a parser does not keep in a head, and so ends the head and opens
// the body (HTML §13.2.6.4.4-6): any element but html, head, base,
// basefont, bgsound, link, meta, noframes, noscript, script, style,
// template and title. An inline <svg> in a head, for one, ends it.
func opensBody(r []byte) bool {
	if len(r) == 0 || !('a' <= r[0]|0x20 && r[0]|0x20 <= 'z') {
		return false // an end tag, a comment, a doctype, or text
	}
	var name [8]byte // the longest name kept in a head
	n := 0
	for ; n < len(r) && !isSpace(r[n]) && r[n] != '/' && r[n] != '>'; n++ {
		if n == len(name) {
			return true
		}
		name[n] = r[n] | 0x20
	}
	switch string(name[:n]) {
	case "html", "head", "base", "basefont", "bgsound", "link", "meta", "noframes", "noscript", "script", "style", "template", "title":
		return false
	}
	return true
}

// rawTag returns the name of the element that r (the bytes after a '<')
// starts if headPrefix leaves out its contents, else "".
func rawTag(r []byte) string {
	for _, name := range [...]string{"script", "style", "noscript", "template"} {
		if tagNamed(r, name) {
			return name
		}
	}
	return ""
}

// endTag returns the index just past the first end tag of the element
// name (lower case) in u from index from on; -1 when there is none.
func endTag(u []byte, from int, name string) int {
	for i := from; ; i++ {
		j := bytes.IndexByte(u[i:], '<')
		if j < 0 {
			return -1
		}
		i += j
		if r := u[i+1:]; len(r) > 0 && r[0] == '/' && tagNamed(r[1:], name) {
			if k := bytes.IndexByte(r, '>'); k >= 0 {
				return i + 1 + k + 1
			}
			return -1
		}
	}
}

// tagNamed reports whether r starts with the tag name name (ASCII, lower
// case) in any case, followed by the end of a tag name or of r.
func tagNamed(r []byte, name string) bool {
	if len(r) < len(name) {
		return false
	}
	for i := range len(name) {
		if c := r[i]; c|0x20 != name[i] && c != name[i] {
			return false
		}
	}
	if len(r) == len(name) {
		return true
	}
	switch r[len(name)] {
	case '>', '/', ' ', '\t', '\n', '\f', '\r':
		return true
	}
	return false
}

// hasToken reports whether the space-separated list s holds tok, ASCII
// case-insensitive (the rel attribute).
func hasToken(s, tok string) bool {
	for _, f := range strings.Fields(s) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}

// absoluteHTTP parses raw as an absolute http or https URL; nil otherwise.
func absoluteHTTP(raw string) *url.URL {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil
	}
	return u
}

// resolve resolves href against base (nil: none) as a browser does: ASCII
// tabs and newlines are removed and leading and trailing C0 controls and
// spaces trimmed first (WHATWG URL). It returns nil unless the result is
// an absolute http or https URL.
func resolve(base *url.URL, href string) *url.URL {
	href = strings.TrimFunc(href, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(href, "\t\n\r") {
		href = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(href)
	}
	if href == "" {
		return nil
	}
	ref, err := url.Parse(href)
	if err != nil {
		return nil
	}
	if base != nil {
		ref = base.ResolveReference(ref)
	}
	if (ref.Scheme != "http" && ref.Scheme != "https") || ref.Host == "" {
		return nil
	}
	return ref
}

// LinkCanonical returns the canonical URL that an HTTP Link header value
// (RFC 8288; several header lines joined by ", ") declares for the page at
// pageURL: the target of a link whose rel holds "canonical", resolved
// against pageURL and canonicalized as [Head.Canonical] is; "" for none,
// and when the header declares two different ones.
func LinkCanonical(link, pageURL string) string {
	base := absoluteHTTP(pageURL)
	var canonical string
	for link != "" {
		lt := strings.IndexByte(link, '<')
		gt := strings.IndexByte(link[max(lt, 0):], '>')
		if lt < 0 || gt < 0 {
			break
		}
		target := link[lt+1 : lt+gt]
		link = link[lt+gt+1:]
		canon := false
		for { // the link's parameters, up to the "," that ends it
			link = strings.TrimLeft(link, " \t")
			if !strings.HasPrefix(link, ";") {
				break
			}
			name, rest, _ := strings.Cut(link[1:], "=")
			if strings.ContainsAny(name, ",;") { // a parameter without a value
				link = link[1+strings.IndexAny(link[1:], ",;"):]
				continue
			}
			var value string
			rest = strings.TrimLeft(rest, " \t")
			if strings.HasPrefix(rest, `"`) {
				value, link = quotedString(rest)
			} else {
				end := strings.IndexAny(rest, ",;")
				if end < 0 {
					end = len(rest)
				}
				value, link = rest[:end], rest[end:]
			}
			if strings.EqualFold(strings.TrimSpace(name), "rel") && hasToken(value, "canonical") {
				canon = true
			}
		}
		if !canon {
			continue
		}
		switch c := canonicalURL(base, target); {
		case c == "" || c == canonical:
		case canonical == "":
			canonical = c
		default:
			return "" // two different ones: none counts
		}
	}
	return canonical
}

// canonicalURL resolves href against base and canonicalizes it with URL;
// "" when either fails.
func canonicalURL(base *url.URL, href string) string {
	u := resolve(base, href)
	if u == nil {
		return ""
	}
	c, err := URL(u.String())
	if err != nil {
		return ""
	}
	return c
}

// parseRefresh parses the content of <meta http-equiv="refresh"> with the
// WHATWG "shared declarative refresh steps" (HTML §4.2.5.3): a delay in
// whole seconds (a fraction is skipped), then optionally ";" or ",", an
// optional "url=" and the URL, optionally quoted. target is "" for a
// reload; ok is false for content a browser ignores.
func parseRefresh(content string) (delay time.Duration, target string, ok bool) {
	s := strings.TrimLeft(content, " \t\n\f\r")
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	digits := s[:i]
	if digits == "" && (i == len(s) || s[i] != '.') {
		return 0, "", false
	}
	if digits != "" {
		n, err := strconv.ParseUint(digits, 10, 64)
		if err != nil || n > math.MaxInt64/uint64(time.Second) {
			n = math.MaxInt64 / uint64(time.Second) // absurdly long: never
		}
		delay = time.Duration(n) * time.Second
	}
	for i < len(s) && ('0' <= s[i] && s[i] <= '9' || s[i] == '.') {
		i++
	}
	s = s[i:]
	if s == "" {
		return delay, "", true
	}
	if c := s[0]; c != ';' && c != ',' && !isSpace(c) {
		return 0, "", false
	}
	s = strings.TrimLeft(s, " \t\n\f\r")
	if s != "" && (s[0] == ';' || s[0] == ',') {
		s = strings.TrimLeft(s[1:], " \t\n\f\r")
	}
	if s == "" {
		return delay, "", true
	}
	target = s
	if len(s) >= 3 && strings.EqualFold(s[:3], "url") {
		r := strings.TrimLeft(s[3:], " \t\n\f\r")
		if r != "" && r[0] == '=' {
			target = strings.TrimLeft(r[1:], " \t\n\f\r")
		}
	}
	if target != "" && (target[0] == '"' || target[0] == '\'') {
		q := target[0]
		target = target[1:]
		if k := strings.IndexByte(target, q); k >= 0 {
			target = target[:k]
		}
	}
	return delay, target, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}
