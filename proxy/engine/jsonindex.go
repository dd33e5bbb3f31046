package engine

import (
	"bytes"
	"math/bits"
	"slices"
	"sync"
)

// The structural index: simdjson's first stage (Langdale and Lemire,
// "Parsing Gigabytes of JSON per Second", 2019) for the walk. stage1
// classifies each 64-byte block of the answer at once (AVX2 and a
// carry-less multiply in jsonindex_amd64.s, the same in Go in stage1Go)
// and lists its tokens: the structural bytes { } [ ] : , outside
// strings, the opening quote of each string and the first byte of each
// run of other bytes outside strings (a number or literal, or garbage).
// Every byte outside strings that is not JSON white space is then either
// a token or follows one in its run, so the walk over the tokens
// (iwalk and the functions below it) checks the whole answer: the
// grammar token by token, each number and literal from its first byte,
// and nothing between a token and the next but white space, or a
// string's inside. Strings are not checked inside, as skipString does
// not check them.
//
// A token is packed as its offset << 8 | its byte, so the walk reads
// neither the answer nor its bounds for a token's kind. The walk refuses
// whatever it does not expect and Parse then walks the answer again
// without the index ([walker.walk]), which gives its usual error (or, for
// what only the index walk refuses, such as nesting deeper than it
// tracks, the answer's result): what Parse accepts, refuses and reports
// does not depend on the index. The hits of the result list that repeat
// the first one's shape are walked by comparing them with it
// (jsonshape.go).

// ixState carries one block's state into the next: esc is 1 when the
// block's first byte is escaped (an odd run of backslashes ended the
// previous one), str all ones when it begins inside a string, scalar 1
// when the previous byte was part of a number or literal; bs is 1 once a
// backslash was met.
type ixState struct{ esc, str, scalar, bs uint64 }

const (
	evenBits = 0x5555555555555555
	oddBits  = ^uint64(evenBits)
	// ixMaxLen bounds the answers the index serves: a token's offset has
	// 24 bits.
	ixMaxLen = 1<<24 - 1
	// ixSentinels tokens of byte 0 at len(b) end the list, so the walk
	// reads past the last token without a bounds test of its own.
	ixSentinels = 4
)

// block returns the token mask of a block from its byte classes (a bit a
// byte): unescaped quotes are found from the runs of backslashes (an odd
// run escapes the byte after it), the inside of strings by a prefix XOR
// of the quotes (the opening quote in, the closing one out).
func (st *ixState) block(quote, bs, ws, op uint64) uint64 {
	var esc uint64
	if bs|st.esc != 0 {
		st.bs = 1
		b := bs &^ st.esc // a backslash escaped from the last block escapes nothing
		starts := b &^ (b << 1)
		even := starts & evenBits
		odd := starts ^ even
		// Adding a run's first bit carries past its end: the byte after
		// an odd run is at the other parity than its start.
		t1 := b + even
		t2, carry := bits.Add64(b, odd, 0)
		esc = t1&^b&oddBits | t2&^b&evenBits | st.esc
		st.esc = carry
	}
	q := quote &^ esc
	s := q
	for k := 1; k < 64; k <<= 1 {
		s ^= s << k
	}
	s ^= st.str
	st.str = uint64(int64(s) >> 63)
	scalar := ^(ws | op | q | s)
	start := scalar &^ (scalar<<1 | st.scalar)
	st.scalar = scalar >> 63
	return op&^s | q&s | start
}

// classes returns the byte classes of the 64 bytes at b[0:64]. op is
// true for { } [ ] : , and for 0x0c and 0x1a, which the AVX2 form's test
// (the byte with 0x20 set is one of : { , }) also takes; a token of
// either byte is refused by the walk.
func classes(b []byte) (quote, bs, ws, op uint64) {
	for i, c := range b[:64] {
		bit := uint64(1) << i
		switch {
		case c == '"':
			quote |= bit
		case c == '\\':
			bs |= bit
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			ws |= bit
		case c|0x20 == ':' || c|0x20 == '{' || c|0x20 == ',' || c|0x20 == '}':
			op |= bit
		}
	}
	return
}

// stage1Go lists the tokens of b (a multiple of 64 bytes, whose first
// byte is at offset pos of the answer) into out, which has room for one
// a byte, and returns how many it wrote.
func stage1Go(b []byte, pos int, st *ixState, out []uint32) int {
	n := 0
	for blk := 0; blk+64 <= len(b); blk += 64 {
		for tok := st.block(classes(b[blk:])); tok != 0; tok &= tok - 1 {
			i := blk + bits.TrailingZeros64(tok)
			out[n] = uint32(pos+i)<<8 | uint32(b[i])
			n++
		}
	}
	return n
}

// tokens lists the tokens of b into t (grown as needed), found by stage1
// (stage1Go when goOnly, for the tests), followed by the sentinels; ok is
// false when a string is not closed by the end, bs true when b holds a
// backslash. stage1 runs on chunks of
// ixChunk bytes, each given room for a token a byte, so that t grows with
// the tokens (about one in 12 bytes of a compact answer), not with b.
func tokens(b []byte, t []uint32, goOnly bool) (_ []uint32, ok, bs bool) {
	t = slices.Grow(t[:0], min(len(b), ixChunk)+len(b)/8+64+ixSentinels)
	var st ixState
	full := len(b) &^ 63
	for off := 0; off < full; off += ixChunk {
		c := b[off:min(off+ixChunk, full)]
		t = slices.Grow(t, len(c))
		n := stage1Or(goOnly, c, off, &st, t[len(t):cap(t)])
		t = t[:len(t)+n]
	}
	t = slices.Grow(t, 64+ixSentinels)
	if full < len(b) {
		// The last bytes, padded with white space.
		var tail [64]byte
		copy(tail[copy(tail[:], b[full:]):], spaces64[:])
		n := stage1Or(goOnly, tail[:], full, &st, t[len(t):cap(t)])
		t = t[:len(t)+n]
	}
	for range ixSentinels {
		t = append(t, uint32(len(b))<<8)
	}
	return t, st.str == 0, st.bs != 0
}

// ixChunk is the bytes stage1 indexes a call.
const ixChunk = 4096

// stage1Or is stage1, or stage1Go when goOnly; called directly, not as a
// function value, so that neither the state nor the padded tail escapes.
func stage1Or(goOnly bool, b []byte, pos int, st *ixState, out []uint32) int {
	if goOnly {
		return stage1Go(b, pos, st, out)
	}
	return stage1(b, pos, st, out)
}

var spaces64 = bytes.Repeat([]byte{' '}, 64)

type ixScratch struct {
	t     []uint32
	shape hitShape
}

// ixPool holds token lists for reuse; a list of over ixKeep tokens is
// dropped after its parse.
var ixPool = sync.Pool{New: func() any { return new(ixScratch) }}

const ixKeep = 1 << 18

// walkDoc is w.walk(s, caps, i, 0), or w.walkList(i, 0) when asList,
// through the structural index when the answer allows it.
func (w *walker) walkDoc(s *selector, caps []span, i int, asList bool) (int, error) {
	if useIndex && len(w.b) <= ixMaxLen && i < len(w.b) {
		sc := ixPool.Get().(*ixScratch)
		t, ok, bs := tokens(w.b, sc.t, false)
		w.noBS = !bs
		end := 0
		if ok {
			w.t = t
			sc.shape.reset()
			w.shape = &sc.shape
			var k int
			if asList {
				k, end, ok = w.iwalkList(0, 0)
			} else {
				k, end, ok = w.iwalk(s, caps, 0, 0)
			}
			// Nothing but white space after the value.
			ok = ok && k == len(t)-ixSentinels
			w.t, w.shape = nil, nil
		}
		if cap(t) <= ixKeep {
			sc.t = t[:0]
			ixPool.Put(sc)
		}
		if ok {
			return end, nil
		}
		// Walk again without the index, from the start.
		w.found, w.list, w.elems, w.caps = false, span{}, nil, nil
		clear(caps)
	}
	if asList {
		return w.walkList(i, 0)
	}
	return w.walk(s, caps, i, 0)
}

// ixMaxDepth bounds the nesting the index walk follows (a walk's and a
// skip's each); deeper answers are walked without the index.
const ixMaxDepth = 60

// iwalk is walk over the tokens from t[k]: it returns the token after the
// value and the value's end offset; ok is false for anything walk would
// refuse (and a few things it would not).
func (w *walker) iwalk(s *selector, caps []span, k, depth int) (next, end int, ok bool) {
	t, b := w.t, w.b
	switch byte(t[k]) {
	case '{':
	case '[':
		if s.hasIndex() {
			return w.iwalkArray(s, caps, k, depth)
		}
		return w.iskipValue(k)
	default:
		return w.iskipValue(k)
	}
	if depth > ixMaxDepth {
		return 0, 0, false
	}
	k++
	if v := t[k]; byte(v) == '}' {
		return k + 1, int(v>>8) + 1, true
	}
	lens := ^uint32(0) // the key lengths not refused by length alone
	if w.noBS && !s.wide {
		lens = s.lens
	}
	for {
		// The key and its ':'; the key's closing quote is the last quote
		// before the ':', as only white space can follow it. t[k]
		// follows a real token, so t[k+3] is at most the last sentinel.
		tk := t[k : k+4]
		if byte(tk[0]) != '"' || byte(tk[1]) != ':' {
			return 0, 0, false
		}
		p, c := int(tk[0]>>8), int(tk[1]>>8)-1
		for b[c] != '"' {
			c--
		}
		// A short key without a backslash is refused by its length
		// alone when no selected key has it, without a call of ikey;
		// any key is when the answer has no backslash at all.
		var e *selEdge
		if n := c - p - 1; uint(n) < 32 && lens&(1<<n) == 0 {
			// No path names a key of this length (a longer key goes
			// to ikey, which refuses it by length too).
		} else if n >= 8 || p+9 > len(b) || s.wide {
			e = s.ikey(b, p, c)
		} else if x := le64(b, p+1) & wordMask[n]; w.noBS || !hasByte(x, swarBS) {
			e = s.matchWord(x, n)
		} else {
			e = s.ikey(b, p, c)
		}
		switch {
		case e != nil && e.sub == nil && !e.list:
			// A captured value, as imember's last case.
			var end int
			if k, end, ok = w.iskipValue(k + 2); ok {
				e.capture(caps, span{int(tk[2] >> 8), end})
			}
		case e != nil && e.sub != nil && e.subLast && !e.list:
			// The last member of its name walked, as imember's second
			// case (_source).
			for _, k := range e.sub.slots {
				caps[k] = span{}
			}
			i := int(tk[2] >> 8)
			var end int
			if k, end, ok = w.iwalk(e.sub, caps, k+2, depth+1); ok {
				caps[e.seen] = span{i, end}
				e.capture(caps, span{i, end})
			}
		case e != nil:
			k, ok = w.imember(e, caps, k+2, depth+1)
		case byte(tk[2]) == '"':
			// A string, the commonest value, and the token after it.
			v := tk[3]
			k += 4
			if byte(v) == ',' {
				continue
			}
			if byte(v) == '}' {
				return k, int(v>>8) + 1, true
			}
			return 0, 0, false
		case byte(tk[2]) == '{' || byte(tk[2]) == '[':
			k, _, ok = w.iskipNested(k + 2)
		default:
			k, ok = w.iskip(k + 2)
		}
		if !ok {
			return 0, 0, false
		}
		v := t[k]
		k++
		if byte(v) == ',' {
			continue
		}
		if byte(v) == '}' {
			return k, int(v>>8) + 1, true
		}
		return 0, 0, false
	}
}

// ikey returns the edge of the key whose quotes are at b[p] and b[c], as
// key does; iwalk reads the short keys without an escape itself.
func (s *selector) ikey(b []byte, p, c int) *selEdge {
	n := c - p - 1
	raw := b[p+1 : c]
	esc := bytes.IndexByte(raw, '\\') >= 0
	if esc || s.wide || s.byLen[min(n, len(s.byLen)-1)] != 0 {
		return s.match(raw, esc)
	}
	return nil
}

// hasByte reports whether a byte of x is c (a word of 8 copies of it),
// SWAR as in scanString.
func hasByte(x, c uint64) bool {
	t := x ^ c
	return (t-swarLo)&^t&swarHi != 0
}

// wordMask[n] keeps the n low bytes of a word, n up to 8.
var wordMask = [9]uint64{0, 0xff, 0xffff, 0xffffff, 0xffffffff, 0xffffffffff, 0xffffffffffff, 0xffffffffffffff, ^uint64(0)}

// imember is member over the tokens: it walks the value at t[k] that edge
// e selects and returns the token after it.
func (w *walker) imember(e *selEdge, caps []span, k, depth int) (int, bool) {
	i := int(w.t[k] >> 8)
	var end int
	var ok bool
	switch {
	case e.list && !w.found:
		w.found = true
		k, end, ok = w.iwalkList(k, depth)
		w.list = span{i, end}
	case e.sub != nil && (e.subLast || caps[e.seen].end == 0):
		if e.subLast {
			for _, k := range e.sub.slots {
				caps[k] = span{}
			}
		}
		k, end, ok = w.iwalk(e.sub, caps, k, depth)
		caps[e.seen] = span{i, end}
	default:
		k, end, ok = w.iskipValue(k)
	}
	if !ok {
		return 0, false
	}
	e.capture(caps, span{i, end})
	return k, true
}

// iwalkArray is walkArray over the tokens.
func (w *walker) iwalkArray(s *selector, caps []span, k, depth int) (next, end int, ok bool) {
	t := w.t
	if depth > ixMaxDepth {
		return 0, 0, false
	}
	k++
	if v := t[k]; byte(v) == ']' {
		return k + 1, int(v>>8) + 1, true
	}
	for n := 0; ; n++ {
		var e *selEdge
		for i := range s.edges {
			if s.edges[i].idx == n {
				e = &s.edges[i]
				break
			}
		}
		if e == nil {
			k, ok = w.iskip(k)
		} else {
			k, ok = w.imember(e, caps, k, depth+1)
		}
		if !ok {
			return 0, 0, false
		}
		var more bool
		if k, end, more, ok = iafter(t, k, ']'); !more {
			return k, end, ok
		}
	}
}

// iwalkList is walkList over the tokens.
func (w *walker) iwalkList(k, depth int) (next, end int, ok bool) {
	t := w.t
	if byte(t[k]) != '[' {
		return w.iskipValue(k)
	}
	if depth > ixMaxDepth {
		return 0, 0, false
	}
	k++
	if v := t[k]; byte(v) == ']' {
		return k + 1, int(v>>8) + 1, true
	}
	nhit, sh := w.nhit, w.shape
	for {
		if sh != nil && sh.ok && len(w.elems) > 0 {
			// The hits that have the shape.
			var done bool
			if k, end, done, ok = w.ireplayList(k); done {
				return k, end, ok
			}
		}
		j := int(t[k] >> 8)
		n := len(w.caps)
		if n+nhit <= cap(w.caps) {
			// Past its length w.caps is zero, as make and append's
			// growth leave it: only its first len(w.caps) spans are
			// ever written.
			w.caps = w.caps[:n+nhit]
		} else {
			w.caps = append(w.caps, make([]span, nhit)...)
		}
		hc := w.caps[n : n+nhit : n+nhit]
		k0 := k
		var e int
		if k, e, ok = w.iwalk(w.hit, hc, k0, depth+1); !ok {
			return 0, 0, false
		}
		if sh != nil {
			w.missed(k0, k, hc)
		}
		if len(w.elems) == 0 {
			// As walkList sizes them.
			n := min((len(w.b)-j)/(e-j+1)+1, 4096)
			w.elems = make([]span, 0, n)
			w.caps = append(make([]span, 0, n*nhit), w.caps...)
		}
		w.elems = append(w.elems, span{j, e})
		var more bool
		if k, end, more, ok = iafter(t, k, ']'); !more {
			return k, end, ok
		}
	}
}

// iafter reads the token t[k] after a member or element: a ',' (more
// follow) or the closing byte close, whose end offset it returns.
func iafter(t []uint32, k int, close byte) (next, end int, more, ok bool) {
	switch v := t[k]; byte(v) {
	case ',':
		return k + 1, 0, true, true
	case close:
		return k + 1, int(v>>8) + 1, false, true
	}
	return 0, 0, false, false
}

// iskip checks the value at t[k] and returns the token after it.
func (w *walker) iskip(k int) (int, bool) {
	t := w.t
	switch v := t[k]; byte(v) {
	case '"':
		return k + 1, true
	case '{', '[':
		k, _, ok := w.iskipNested(k)
		return k, ok
	default:
		_, ok := w.iscalar(int(v>>8), int(t[k+1]>>8))
		return k + 1, ok
	}
}

// iskipValue is iskip that also returns the value's end offset.
func (w *walker) iskipValue(k int) (next, end int, ok bool) {
	t := w.t
	switch v := t[k]; byte(v) {
	case '"':
		// The closing quote is the last quote before the next token.
		c := int(t[k+1]>>8) - 1
		for w.b[c] != '"' {
			c--
		}
		return k + 1, c + 1, true
	case '{', '[':
		return w.iskipNested(k)
	default:
		end, ok = w.iscalar(int(v>>8), int(t[k+1]>>8))
		return k + 1, end, ok
	}
}

// iscalar checks the number or literal at b[p], the next token being at
// b[q], and returns its end: skipValueDepth's rules, and nothing but
// white space up to the next token. A number ends at q at the latest, as
// the bytes of numbers are never tokens.
func (w *walker) iscalar(p, q int) (int, bool) {
	b := w.b
	if p >= len(b) {
		return 0, false // a sentinel
	}
	e := p
	switch c := b[p]; {
	case c < 'f':
		// A number, the commonest (no literal starts below 'f').
		if c == '-' {
			e++
		}
		s := e
		for e < q {
			c := b[e]
			if !numTab[c] {
				break
			}
			e++
			if c != '.' {
				continue
			}
			// A fraction's digits (a score's), 8 at once.
			for e+8 <= q {
				if x := le64(b, e); x&0xF0F0F0F0F0F0F0F0|(x+0x0606060606060606)&0xF0F0F0F0F0F0F0F0>>4 != 0x3333333333333333 {
					break
				}
				e += 8
			}
		}
		if e == s {
			return 0, false
		}
	case c == 't':
		if len(b)-p < 4 || string(b[p:p+4]) != "true" {
			return 0, false
		}
		e += 4
	case c == 'f':
		if len(b)-p < 5 || string(b[p:p+5]) != "false" {
			return 0, false
		}
		e += 5
	case c == 'n':
		if len(b)-p < 4 || string(b[p:p+4]) != "null" {
			return 0, false
		}
		e += 4
	default:
		return 0, false // no number starts with these bytes either
	}
	if e != q && !wsTab[b[e]] {
		return 0, false
	}
	return e, true
}

// iskipNested checks the object or array at t[k] (nested at most 64
// deep) and returns the token after it and its end offset.
func (w *walker) iskipNested(k int) (next, end int, ok bool) {
	t := w.t
	var v uint32
	var stack uint64 // a bit a level, the innermost lowest: 1 for an object
	depth := 0
open:
	if depth == 64 {
		return 0, 0, false
	}
	depth++
	v = t[k]
	k++
	if byte(v) == '{' {
		stack = stack<<1 | 1
		if v = t[k]; byte(v) == '}' {
			k++
			goto closed
		}
		goto key
	}
	stack <<= 1
	if v = t[k]; byte(v) == ']' {
		k++
		goto closed
	}
	goto value
key:
	if byte(t[k]) != '"' || byte(t[k+1]) != ':' {
		return 0, 0, false
	}
	k += 2
value:
	switch v = t[k]; byte(v) {
	case '{', '[':
		goto open
	case '"':
	default:
		if _, ok := w.iscalar(int(v>>8), int(t[k+1]>>8)); !ok {
			return 0, 0, false
		}
	}
	k++
after:
	v = t[k]
	k++
	switch byte(v) {
	case ',':
		if stack&1 != 0 {
			goto key
		}
		goto value
	case '}':
		if stack&1 == 0 {
			return 0, 0, false
		}
	case ']':
		if stack&1 != 0 {
			return 0, 0, false
		}
	default:
		return 0, 0, false
	}
closed:
	stack >>= 1
	if depth--; depth > 0 {
		goto after
	}
	return k, int(v>>8) + 1, true
}

// useIndex lets walkDoc use the structural index: where stage1 is the
// assembly. stage1Go (about 170 MB/s against the assembly's 6 GB/s, on
// the demo answer) would make the parse slower than the walk without the
// index; it is the assembly's reference, and the tests, which set
// useIndex, walk the index with it under purego.
var useIndex = hasStage1AVX2
