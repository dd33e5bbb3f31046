package engine

import (
	"bytes"
	"encoding/json"
	"math/bits"
	"strconv"
)

// A selector lists the members of interest below one JSON value, so a
// single validating pass over a document (walk) records the spans of every
// field the adapter needs instead of one lookup per field path. Paths
// follow [path]: a segment names an object member or, when numeric, indexes
// an array. Each path ends in a capture slot.
type selector struct {
	edges []selEdge
	slots []int // capture slots of this subtree, cleared on re-entry
	// byLen[n] has bit k set when edges[k]'s key is n bytes long (the
	// last entry: that long or longer), so a key no path names is
	// mostly refused by its length alone; built by finish. wide: more
	// edges than bits, every key compared.
	byLen [32]uint64
	wide  bool
	lens  uint32 // bit n: byLen[n] != 0
}

type selEdge struct {
	key   string
	word  uint64 // a key shorter than 8 bytes as shortKey reads it
	idx   int    // key as an array index, -1 if not numeric
	slots []capSlot
	sub   *selector
	// subLast walks the last member with this key (members semantics),
	// else the first (field semantics); seen marks that sub was walked.
	subLast bool
	seen    int
	list    bool // the value is the result list
}

type capSlot struct {
	slot int
	last bool // the last member with the key wins, else the first
}

// add adds the path segs ending in slot. last says, per segment, whether
// the last or the first member of that name counts.
func (s *selector) add(segs []string, last []bool, slot int, nslots *int) {
	e := s.edge(segs[0])
	if len(segs) == 1 {
		e.slots = append(e.slots, capSlot{slot, last[0]})
		return
	}
	if e.sub == nil {
		e.sub = &selector{}
		e.seen = *nslots
		*nslots++
		e.subLast = last[0]
	}
	e.sub.add(segs[1:], last[1:], slot, nslots)
}

func (s *selector) edge(key string) *selEdge {
	for i := range s.edges {
		if s.edges[i].key == key {
			return &s.edges[i]
		}
	}
	idx, err := strconv.Atoi(key)
	if err != nil || idx < 0 {
		idx = -1
	}
	s.edges = append(s.edges, selEdge{key: key, idx: idx, seen: -1})
	return &s.edges[len(s.edges)-1]
}

// finish records in each selector the capture slots of its subtree, which
// a walk of the last member of a name clears first.
func (s *selector) finish() []int {
	s.slots = s.slots[:0]
	s.byLen, s.wide, s.lens = [32]uint64{}, len(s.edges) > 64, 0
	for i := range s.edges {
		e := &s.edges[i]
		if !s.wide {
			n := min(len(e.key), len(s.byLen)-1)
			s.byLen[n] |= 1 << i
			s.lens |= 1 << n
		}
		e.word = 0
		for k := min(len(e.key), 8) - 1; k >= 0; k-- {
			e.word = e.word<<8 | uint64(e.key[k])
		}
		for _, c := range e.slots {
			s.slots = append(s.slots, c.slot)
		}
		if e.sub != nil {
			s.slots = append(s.slots, e.seen)
			s.slots = append(s.slots, e.sub.finish()...)
		}
	}
	return s.slots
}

func (s *selector) hasIndex() bool {
	for i := range s.edges {
		if s.edges[i].idx >= 0 {
			return true
		}
	}
	return false
}

// walker holds the state of one validating pass.
type walker struct {
	b     []byte
	hit   *selector // selector of each element of the result list
	nhit  int       // capture slots per element
	found bool      // the result list was walked
	list  span
	elems []span
	caps  []span    // per element: nhit slots
	t     []uint32  // the structural index's tokens during walkDoc
	noBS  bool      // the answer holds no backslash (walkDoc)
	shape *hitShape // the hits' shape during walkDoc; nil: none learnt
}

// walk validates the value at b[i] and fills caps for the paths of s below
// it; it returns the offset after the value.
func (w *walker) walk(s *selector, caps []span, i, depth int) (int, error) {
	b := w.b
	if depth > maxDepth {
		return 0, serr(i, "nesting too deep")
	}
	if i >= len(b) {
		return 0, serr(i, "unexpected end of input")
	}
	switch b[i] {
	case '{':
	case '[':
		if s.hasIndex() {
			return w.walkArray(s, caps, i, depth)
		}
		return skipValueDepth(b, i, depth)
	default:
		return skipValueDepth(b, i, depth)
	}
	j := skipWS(b, i+1)
	if j < len(b) && b[j] == '}' {
		return j + 1, nil
	}
	for {
		var e *selEdge
		var err error
		if e, j, err = s.key(b, j); err != nil {
			return 0, err
		}
		switch {
		case depth >= maxDepth:
			j, err = w.member(e, caps, j, depth+1)
		case e == nil || e.sub == nil && !e.list:
			// A value no path selects, most often a string, or a
			// captured one (member's last case): skipped here, not
			// through member.
			v := j
			if k := shortString(b, j); k > 0 {
				j = k
			} else if j < len(b) && b[j] == '"' {
				j, err = skipString(b, j)
			} else {
				j, err = skipValueDepth(b, j, depth+1)
			}
			if e != nil && err == nil {
				e.capture(caps, span{v, j})
			}
		default:
			j, err = w.member(e, caps, j, depth+1)
		}
		if err != nil {
			return 0, err
		}
		if j+1 < len(b) {
			if b[j] == ',' && b[j+1] == '"' {
				j++ // compact JSON's next member, read without afterMember
				continue
			}
			if b[j] == '}' {
				return j + 1, nil
			}
		}
		var done bool
		if j, done, err = afterMember(b, j, '}'); err != nil || done {
			return j, err
		}
	}
}

func (w *walker) walkArray(s *selector, caps []span, i, depth int) (int, error) {
	b := w.b
	j := skipWS(b, i+1)
	if j < len(b) && b[j] == ']' {
		return j + 1, nil
	}
	for n := 0; ; n++ {
		var e *selEdge
		for k := range s.edges {
			if s.edges[k].idx == n {
				e = &s.edges[k]
				break
			}
		}
		var err error
		if j, err = w.member(e, caps, j, depth+1); err != nil {
			return 0, err
		}
		var done bool
		if j, done, err = afterMember(b, j, ']'); err != nil || done {
			return j, err
		}
	}
}

// key reads the member key at b[j] and the ':' after it, and returns the
// key's edge (nil: none) and the offset of the member's value.
func (s *selector) key(b []byte, j int) (*selEdge, int, error) {
	if j+17 <= len(b) && b[j] == '"' && !s.wide {
		// A short key (at most 7 bytes, no backslash) is read 8 bytes
		// at once, SWAR as in scanString, with the ':', and compared as
		// a word. This path calls nothing; the rest is keySlow's.
		x := le64(b, j+1)
		q, t := x^swarQuote, x^swarBS
		n := bits.TrailingZeros64((q-swarLo)&^q&swarHi|(t-swarLo)&^t&swarHi) >> 3
		if n < 8 {
			// The closing quote, ':' and the value's first byte, with
			// at most one space before and one after the ':' (as
			// Elasticsearch's ?pretty writes them).
			z := le64(b, j+1+n)
			if uint16(z) == '"'|':'<<8 && byte(z>>16) > ' ' {
				return s.matchWord(x&(1<<(8*n)-1), n), j + n + 3, nil
			}
			if v := prettyColon(z); v > 0 {
				return s.matchWord(x&(1<<(8*n)-1), n), j + 1 + n + v, nil
			}
		}
	}
	return s.keySlow(b, j)
}

// prettyColon reads z, the 8 bytes from a key's closing quote on: the
// quote, ':' with one space before it or after it or both, and the
// value's first byte. It returns the value's offset from the quote, 0
// when z is not that.
func prettyColon(z uint64) int {
	v := 1
	if byte(z>>8) == ' ' {
		v++
	}
	if byte(z) != '"' || byte(z>>(8*v)) != ':' {
		return 0
	}
	if v++; byte(z>>(8*v)) == ' ' {
		v++
	}
	if byte(z>>(8*v)) <= ' ' {
		return 0
	}
	return v
}

// keySlow is key for a key of 8 to 15 bytes read as two words, else
// for any key.
func (s *selector) keySlow(b []byte, j int) (*selEdge, int, error) {
	if j+19 <= len(b) && b[j] == '"' {
		x, y := le64(b, j+1), le64(b, j+9)
		q, t := x^swarQuote, x^swarBS
		if (q-swarLo)&^q&swarHi|(t-swarLo)&^t&swarHi == 0 {
			q, t = y^swarQuote, y^swarBS
			n := 8 + bits.TrailingZeros64((q-swarLo)&^q&swarHi|(t-swarLo)&^t&swarHi)>>3
			if n < 16 && b[j+1+n] == '"' && b[j+2+n] == ':' {
				var e *selEdge
				if s.wide || s.byLen[n] != 0 {
					e = s.match(b[j+1:j+1+n], false)
				}
				return e, skipWS(b, j+n+3), nil
			}
		}
	}
	if j >= len(b) || b[j] != '"' {
		return nil, 0, serr(j, "expected object key")
	}
	ke, esc, err := scanString(b, j)
	if err != nil {
		return nil, 0, err
	}
	var e *selEdge
	if esc || s.wide || s.byLen[min(ke-j-2, len(s.byLen)-1)] != 0 {
		// Only a key of a selected key's length (or one with an escape)
		// is compared; the others are refused here.
		e = s.match(b[j+1:ke-1], esc)
	}
	j = skipWS(b, ke)
	if j >= len(b) || b[j] != ':' {
		return nil, 0, serr(j, "expected ':'")
	}
	return e, skipWS(b, j+1), nil
}

// matchWord is match for a key of n < 8 bytes given as a little-endian
// word, zero above the key.
func (s *selector) matchWord(x uint64, n int) *selEdge {
	for m := s.byLen[n&(len(s.byLen)-1)]; m != 0; m &= m - 1 {
		if e := &s.edges[bits.TrailingZeros64(m)]; e.word == x {
			return e
		}
	}
	return nil
}

// match returns the edge for the member key raw (between the quotes).
func (s *selector) match(raw []byte, esc bool) *selEdge {
	if len(s.edges) == 0 {
		return nil
	}
	if esc && bytes.IndexByte(raw, '\\') >= 0 {
		var k string
		if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &k) != nil {
			return nil
		}
		raw = []byte(k)
	}
	if s.wide {
		for i := range s.edges {
			if string(raw) == s.edges[i].key {
				return &s.edges[i]
			}
		}
		return nil
	}
	for m := s.byLen[min(len(raw), len(s.byLen)-1)]; m != 0; m &= m - 1 {
		if e := &s.edges[bits.TrailingZeros64(m)]; string(raw) == e.key {
			return e
		}
	}
	return nil
}

// member walks the value at b[i] that edge e (nil: none) selects.
func (w *walker) member(e *selEdge, caps []span, i, depth int) (end int, err error) {
	switch {
	case e == nil:
		return skipValueDepth(w.b, i, depth)
	case e.list && !w.found:
		w.found = true
		end, err = w.walkList(i, depth)
		w.list = span{i, end}
	case e.sub != nil && (e.subLast || caps[e.seen].end == 0):
		if e.subLast {
			for _, k := range e.sub.slots {
				caps[k] = span{}
			}
		}
		end, err = w.walk(e.sub, caps, i, depth)
		caps[e.seen] = span{i, end}
	default:
		end, err = skipValueDepth(w.b, i, depth)
	}
	if err != nil {
		return 0, err
	}
	e.capture(caps, span{i, end})
	return end, nil
}

// capture records the span v of e's value in e's capture slots.
func (e *selEdge) capture(caps []span, v span) {
	for _, c := range e.slots {
		if c.last || caps[c.slot].end == 0 {
			caps[c.slot] = v
		}
	}
}

// walkList validates the result list at b[i], records each element's span
// and walks it with the hit selector.
func (w *walker) walkList(i, depth int) (int, error) {
	b := w.b
	if i >= len(b) || b[i] != '[' {
		return skipValueDepth(b, i, depth)
	}
	if depth > maxDepth {
		return 0, serr(i, "nesting too deep")
	}
	j := skipWS(b, i+1)
	if j < len(b) && b[j] == ']' {
		return j + 1, nil
	}
	for {
		k := len(w.caps)
		w.caps = append(w.caps, make([]span, w.nhit)...)
		e, err := w.walk(w.hit, w.caps[k:], j, depth+1)
		if err != nil {
			return 0, err
		}
		if len(w.elems) == 0 {
			// Size the lists once, guessing that hits are about as
			// long as the first and fill the rest of the body.
			n := min((len(b)-j)/(e-j+1)+1, 4096)
			w.elems = make([]span, 0, n)
			w.caps = append(make([]span, 0, n*w.nhit), w.caps...)
		}
		w.elems = append(w.elems, span{j, e})
		if e < len(b) && b[e] == ',' {
			j = skipWS(b, e+1)
			continue
		}
		var done bool
		if j, done, err = afterMember(b, e, ']'); err != nil || done {
			return j, err
		}
	}
}
