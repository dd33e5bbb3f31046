package canon

import (
	"strings"

	"golang.org/x/net/html/atom"
)

// maxPopSearch bounds how far an end tag looks down the element stack for
// its start tag, so that malformed pages with many unmatched end tags stay
// linear.
const maxPopSearch = 64

// push opens element a in ContentMain mode, reading its attributes (raw,
// the start tag's bytes; nil when it has none) when they can mark a
// container: most tags are not classified, so their attributes are never
// parsed.
func (x *extractor) push(raw []byte, a atom.Atom) {
	parent := x.flags()
	own := uint8(0)
	switch a {
	case atom.Main, atom.Article:
		own = fMain
	case atom.Nav, atom.Aside, atom.Form, atom.Menu, atom.Dialog:
		own = fBoiler
	case atom.Header, atom.Footer:
		if parent&fMain == 0 {
			own = fBoiler
		}
	case atom.A:
		own = fLink
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		own = fHeading
	}
	if raw != nil {
		switch a {
		case atom.Div, atom.Section, atom.Main, atom.Article, atom.Aside, atom.Ul, atom.Ol,
			atom.Nav, atom.Header, atom.Footer, atom.Table, atom.Td, atom.Span, atom.P, atom.Li:
			if mayFlag(raw) {
				own |= attrFlags(x.attrs.read(raw), a)
			}
		}
	}
	f := parent | own
	if own&fMain != 0 {
		f &^= fBoiler
	}
	x.stack = append(x.stack, frame{a, f, int32(len(x.blocks))})
}

// pop closes the innermost open element a, if it is among the top
// maxPopSearch elements; otherwise the end tag is ignored.
func (x *extractor) pop(a atom.Atom) {
	for i := len(x.stack) - 1; i >= 0 && i >= len(x.stack)-maxPopSearch; i-- {
		if x.stack[i].a == a {
			x.closeFrames(i)
			return
		}
	}
}

// closeFrames closes the open elements from x.stack[i] up, recording the
// blocks of each block element as a span. A wrapper holding the same
// blocks as the element just closed inside it adds no span.
func (x *extractor) closeFrames(i int) {
	end := int32(len(x.blocks))
	for j := len(x.stack) - 1; j >= i; j-- {
		fr := x.stack[j]
		if fr.first == end || !blockTag(fr.a) {
			continue
		}
		if k := len(x.spans) - 1; k >= 0 && x.spans[k] == (span{fr.first, end}) {
			continue
		}
		x.spans = append(x.spans, span{fr.first, end})
	}
	x.stack = x.stack[:i]
}

// mayFlag reports whether the raw start tag can carry an attribute that
// attrFlags reads: every such name (role, itemprop, class, id, hidden,
// aria-hidden) contains "role", "itemprop", "class" or "id", in any case
// (names are case-insensitive, and a character reference cannot stand in
// an attribute name). Most <p>, <li>, <td> and <span> tags carry none,
// and skipping the tokenizer for them is a tenth of canonicalization.
func mayFlag(raw []byte) bool {
	for i := 1; i < len(raw); i++ { // raw[0] is '<'
		switch raw[i] | 0x20 {
		case 'i':
			if i+1 < len(raw) && (raw[i+1]|0x20 == 'd' || hasPrefixFold(raw[i:], "itemprop")) {
				return true
			}
		case 'r':
			if hasPrefixFold(raw[i:], "role") {
				return true
			}
		case 'c':
			if hasPrefixFold(raw[i:], "class") {
				return true
			}
		}
	}
	return false
}

// attrFlags derives container flags from role, itemprop, class, id and
// hidden attributes of the current tag.
func attrFlags(attrs []attr, a atom.Atom) uint8 {
	var f uint8
	boiler := false
	for _, at := range attrs {
		k, v := at.key, at.val
		switch string(k) {
		case "role":
			switch strings.ToLower(string(v)) {
			case "main", "article":
				f |= fMain
			case "navigation", "banner", "contentinfo", "complementary", "menu", "menubar", "search", "dialog":
				boiler = true
			}
		case "itemprop":
			if strings.EqualFold(string(v), "articleBody") {
				f |= fMain
			}
		case "hidden":
			boiler = true
		case "aria-hidden":
			if string(v) == "true" {
				boiler = true
			}
		case "class", "id":
			m, bp := classFlags(v, a, string(k) == "id")
			f |= m
			boiler = boiler || bp
		}
	}
	if boiler && f&fMain == 0 && a != atom.Main && a != atom.Article {
		f |= fBoiler
	}
	return f
}

// mainClass lists class and id values of main-content containers: Sphinx
// (div.body, div.document), MediaWiki, WordPress and common news themes.
var mainClass = map[string]bool{
	"entry-content": true, "post-content": true, "post-body": true, "article-body": true,
	"article-content": true, "articlebody": true, "story-body": true, "mw-parser-output": true,
	"mw-content-text": true, "main-content": true, "bodycontent": true, "post-entry": true,
	"content-body": true, "article__body": true, "entry-body": true, "story-content": true,
}

// boilerWord lists class and id words (split at non-letters) that mark
// site template: navigation, sidebars, footers, sharing, ads, comments.
var boilerWord = map[string]bool{
	"nav": true, "navbar": true, "navigation": true, "menu": true, "footer": true,
	"sidebar": true, "sphinxsidebar": true, "breadcrumb": true, "breadcrumbs": true,
	"cookie": true, "cookies": true, "consent": true, "share": true, "sharing": true,
	"social": true, "related": true, "comment": true, "comments": true, "advert": true,
	"ad": true, "ads": true, "advertisement": true, "banner": true, "widget": true,
	"newsletter": true, "subscribe": true, "promo": true, "skip": true, "masthead": true,
	"toolbar": true, "pagination": true, "pager": true, "copyright": true, "popup": true,
	"modal": true, "topbar": true, "tags": true, "disclaimer": true, "sitemap": true,
}

// classFlags classifies one class or id value: each name (split at ASCII
// white space, as HTML splits class lists), in lower case, against
// mainClass, and each run of its ASCII letters against boilerWord. It
// allocates nothing: the lookups go through a stack buffer.
func classFlags(v []byte, a atom.Atom, id bool) (f uint8, boiler bool) {
	var buf [32]byte
	for i := 0; i < len(v); {
		for i < len(v) && asciiSpace(v[i]) {
			i++
		}
		j := i
		for j < len(v) && !asciiSpace(v[j]) {
			j++
		}
		name := v[i:j]
		i = j
		if len(name) == 0 {
			break
		}
		if len(name) <= len(buf) { // every listed name is shorter
			c := lowerInto(buf[:], name)
			if mainClass[string(c)] || a == atom.Div && !id && (string(c) == "body" || string(c) == "document") {
				f |= fMain
				continue
			}
		}
		for k := 0; k < len(name); {
			for k < len(name) && !asciiLetter(name[k]) {
				k++
			}
			e := k
			for e < len(name) && asciiLetter(name[e]) {
				e++
			}
			if w := name[k:e]; len(w) > 0 && len(w) <= len(buf) {
				lw := lowerInto(buf[:], w)
				// A comments section is a block; a <span class="comment">
				// is a code highlighter's comment token (Doxygen, qdoc,
				// highlight.js's hljs-comment), part of the listing.
				if boilerWord[string(lw)] && (a != atom.Span || string(lw) != "comment" && string(lw) != "comments") {
					boiler = true
				}
			}
			k = e
		}
	}
	return f, boiler
}

// lowerInto writes b in ASCII lower case into buf (len(b) <= len(buf))
// and returns that part of buf.
func lowerInto(buf []byte, b []byte) []byte {
	c := buf[:len(b)]
	for k, ch := range b {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		c[k] = ch
	}
	return c
}

// asciiLetter reports whether c is an ASCII letter.
func asciiLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// asciiSpace reports whether c is white space as strings.Fields sees it
// in ASCII.
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// Block classes of the jusText-style classifier.
const (
	classBad = iota
	classShort
	classNearGood
	classGood
)

// Classifier thresholds, in bytes of canonical text (a CJK character is 3
// bytes, about one short word) and raw link bytes over raw bytes.
const (
	shortLen        = 40
	goodLen         = 150
	maxLinkDensity  = 0.33
	mainShare       = 0.5
	containerGood   = 0.9
	containerLinkDn = 0.5
	// minKeptShare is the smallest share of a page's text the main
	// content may keep before it counts as a failed extraction and the
	// whole text is kept instead. Real pages keep 3.5 % (a Doxygen source
	// listing, every line a short block; 5 % for a shop page whose product
	// text is two sentences in a large template) to 97 % (see
	// testdata/golden/kept-share.txt); 0 % is a page whose article sits
	// in a container the rules took for template (clang's
	// ItaniumMangleAbiTags.html: <section id="abi-tags">).
	minKeptShare = 0.03
	// listPageProse is the prose, in bytes, under which a semantic
	// container's link lists are kept too (a list page): about ten
	// words, what a page needs to be compared at all.
	listPageProse = 64
	// listPageLinks is how many times the container's prose its link
	// lists must hold for the page to be a contents page whose links are
	// kept however much prose it has (clang's index.html: an
	// introduction of 18 words above a table of contents of 250, about
	// 14 times). Well above the 3.2 of LLVM's CompilerWriterInfo, a
	// reference list with prose around it, whose releases sit on both
	// sides of 3 and were split into two groups at that ratio.
	listPageLinks = 8
)

// mainText selects the main-content blocks and writes them to x.out.
//
// When blocks inside semantic containers (fMain) hold at least mainShare of
// the text outside boilerplate, those blocks are kept, minus boilerplate
// and link lists inside them. Otherwise each block is classified as in
// jusText (Pomikálek 2011, without stop words): bad when inside boilerplate
// or link density > maxLinkDensity, short under shortLen, good from goodLen,
// near-good in between; short and near-good blocks then take the class of
// their nearest good or bad neighbours, and headings followed by good text
// within three blocks are kept. The classifier's choice is then widened to
// the element that holds its good text (see widen). Cost: one pass over
// the blocks and one over the closed elements.
func (x *extractor) mainText() {
	x.closeFrames(0)
	total, inMain := 0, 0
	for _, b := range x.blocks {
		if b.flags&fBoiler != 0 {
			continue
		}
		total += b.end - b.start
		if b.flags&fMain != 0 {
			inMain += b.end - b.start
		}
	}
	keep := make([]bool, len(x.blocks))
	n := 0
	if inMain > 0 && float64(inMain) >= mainShare*float64(total) {
		prose, links := 0, 0
		for i, b := range x.blocks {
			if b.flags&fMain == 0 || b.flags&fBoiler != 0 {
				continue
			}
			if b.density() <= containerLinkDn || b.end-b.start >= goodLen {
				keep[i] = true
				n++
				prose += b.end - b.start
			} else {
				links += b.end - b.start
			}
		}
		if prose < listPageProse || links >= listPageLinks*prose {
			// A list page (a table of contents, an index): the container
			// holds links and little else, and its links are what it
			// says. Without them it would be too short to match anything,
			// even its own copy in another release, or would be known by
			// its introduction alone.
			for i, b := range x.blocks {
				if b.flags&fMain != 0 && b.flags&fBoiler == 0 && !keep[i] {
					keep[i] = true
					n++
				}
			}
		}
	}
	if n == 0 {
		n = x.classify(keep)
		if n > 0 {
			n = x.widen(keep)
		}
	}
	if n == 0 { // nothing looks like content: keep all non-template text
		for i, b := range x.blocks {
			keep[i] = b.flags&fBoiler == 0 && b.density() <= containerLinkDn
		}
	}
	kept := 0
	for i, b := range x.blocks {
		if keep[i] {
			kept += b.end - b.start
		}
	}
	if float64(kept) < minKeptShare*float64(len(x.blockBuf)) {
		// Implausibly little: keep the whole text, as ContentAll does.
		x.fallback = true
		if x.title != "" {
			x.out.Write(x.n.line([]byte(x.title)))
			x.out.WriteByte('\n')
		}
		for i := range keep {
			keep[i] = true
		}
	}
	for i, b := range x.blocks {
		if keep[i] {
			x.out.Write(x.blockBuf[b.start:b.end])
			x.out.WriteByte('\n')
		}
	}
}

// widen extends the classifier's choice in keep to the page's implicit
// main container, as Readability (Arc90, 2009) takes the element that
// holds the best paragraphs: the block element with the least text that
// holds containerGood of the good blocks' text, or the page when none is
// smaller. Its blocks are kept as those of a semantic container are,
// minus boilerplate and link lists: the short blocks of reference pages
// (signatures, parameter lists, table cells) sit between link-dense ones,
// and the classifier alone dropped most of them (gtk-doc, Doxygen,
// Texinfo). It returns the number of kept blocks. Cost: one pass over the
// blocks and one over the closed elements; the prefix sums reuse x.sums.
func (x *extractor) widen(keep []bool) int {
	nb := len(x.blocks)
	x.sums = append(x.sums[:0], make([]int32, 2*(nb+1))...)
	good, text := x.sums[:nb+1], x.sums[nb+1:]
	for i, b := range x.blocks {
		g, t := int32(0), int32(0)
		if b.flags&fBoiler == 0 {
			t = int32(b.end - b.start)
			if keep[i] {
				g = t
			}
		}
		good[i+1], text[i+1] = good[i]+g, text[i]+t
	}
	need := int32(containerGood * float64(good[nb]))
	best, bestText := span{0, int32(nb)}, text[nb]
	for _, s := range x.spans {
		if good[s.end]-good[s.first] >= need && text[s.end]-text[s.first] < bestText {
			best, bestText = s, text[s.end]-text[s.first]
		}
	}
	n := 0
	for i, b := range x.blocks {
		if !keep[i] && int32(i) >= best.first && int32(i) < best.end && b.flags&fBoiler == 0 &&
			(b.density() <= containerLinkDn || b.end-b.start >= goodLen) {
			keep[i] = true
		}
		if keep[i] {
			n++
		}
	}
	return n
}

// density returns the link density of b.
func (b block) density() float64 {
	if b.raw == 0 {
		return 0
	}
	return float64(b.link) / float64(b.raw)
}

// classify marks the good blocks in keep and returns their number.
func (x *extractor) classify(keep []bool) int {
	cls := make([]uint8, len(x.blocks))
	for i, b := range x.blocks {
		l := b.end - b.start
		switch {
		case b.flags&fBoiler != 0 || b.density() > maxLinkDensity:
			cls[i] = classBad
		case l < shortLen:
			cls[i] = classShort
		case l >= goodLen:
			cls[i] = classGood
		default:
			cls[i] = classNearGood
		}
	}
	// prev[i] and next[i] are the nearest good or bad classes before and
	// after block i in the initial classification; the edges count as bad.
	prev := make([]uint8, len(cls))
	next := make([]uint8, len(cls))
	last := uint8(classBad)
	for i, c := range cls {
		prev[i] = last
		if c == classGood || c == classBad {
			last = c
		}
	}
	last = classBad
	for i := len(cls) - 1; i >= 0; i-- {
		next[i] = last
		if c := cls[i]; c == classGood || c == classBad {
			last = c
		}
	}
	n := 0
	for i, b := range x.blocks {
		c := cls[i]
		switch c {
		case classShort:
			if prev[i] == classGood && next[i] == classGood {
				c = classGood
			}
		case classNearGood:
			if prev[i] == classGood || next[i] == classGood {
				c = classGood
			}
		}
		if c != classGood && c != classBad && b.flags&fHeading != 0 {
			for j := i + 1; j < len(cls) && j <= i+3; j++ {
				if cls[j] == classGood {
					c = classGood
					break
				}
			}
		}
		if c == classGood {
			keep[i] = true
			n++
		}
	}
	return n
}
