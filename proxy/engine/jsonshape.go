package engine

import (
	"slices"
	"sort"
	"unsafe"
)

// The hits of an answer mostly repeat the first hit's shape: the same
// members in the same order, each value of the same kind (every
// Elasticsearch and OpenSearch hit has _index, _type, _id, _score,
// _source, most a highlight). A hit walked over the index (iwalk) then
// takes the same way through the walk as the first: the walk's choices
// depend only on the kinds of the tokens (a number or a literal, whatever
// its first byte, taking one way), on the bytes of the keys it looks
// up, on the capture slots (zero at each hit's start), on the depth,
// and on whether each number or literal passes iscalar. So when a hit's
// tokens have the first hit's kinds one for one, its keys the first
// hit's bytes (up to and with the closing quote, 8 bytes a word) and
// each of its numbers and literals passes iscalar, the walk would accept
// it and capture the spans of the same tokens: ireplay checks exactly
// that and writes those spans, for about a third of the walk's
// instructions (a comparison of 8 tokens at once and a word a key in
// assembly, shapeMatchAVX2). Anything else (a kind, a key or a number
// that differs) makes iwalkList walk the hit with iwalk, which decides
// as before; the shape is learnt again, within bounds (shapeMinHits).
//
// The grammar is still checked token by token: each token's kind is
// compared with that of a token of an accepted hit at the same place,
// which the walk checked in that order. A string's inside is not
// checked, as in the walk, save for the keys, compared byte for byte.
// learn makes sure that replaying the hit it learns from gives back the
// spans the walk found, else it keeps no shape.

// hitShape is what ireplay compares a hit with: the tokens t[k0:k0+n]
// of a hit the walk accepted, the keys, numbers and literals among them
// and where its capture slots took their spans.
type hitShape struct {
	k0, n int
	// ok: there is a shape to replay; off: none is replayed or learnt
	// any more this parse; learnt counts the shapes learnt.
	ok, off bool
	learnt  int
	// missed: 1 + the index in the list of the hit the replay last
	// refused (0: none); misses and replayed: the hits it refused and
	// took this parse.
	missed, misses, replayed int
	// kinds and kmask: each token's byte and 0xff, but 0 and 0 for a
	// number or literal, whose byte may differ (iscalar checks it).
	kinds, kmask []uint32
	// The keys: their first 8 bytes, for those of more the next 8,
	// and for those of more than 16 the rest.
	keys []shapeKey
	long []shapeLong
	// lastKey is the last key's token (from k0).
	lastKey int
	// asm: shapeMatchAVX2 serves the shape (n >= 8, a key at least);
	// rare: long or scalars is not empty.
	asm, rare bool
	scalars   []int // tokens (from k0) of numbers and literals no slot captures
	caps      []shapeCap
}

// reset readies sh for a parse, keeping its slices' room.
func (sh *hitShape) reset() {
	sh.ok, sh.off, sh.learnt, sh.missed, sh.misses, sh.replayed = false, false, 0, 0, 0, 0
}

// shapeKey is 8 bytes of a member key of the shape, the key's opening
// quote at token tok (from k0): those from off bytes after the quote
// (1 or 9) on, up to and with the closing quote, as the word w (le64's,
// masked by m).
type shapeKey struct {
	w, m     uint64
	tok, off int
}

// shapeLong is a key of the shape of over 16 bytes (its closing quote
// counted) at token tok: its bytes past the 16th are compared with
// those of the shape's own key, at offset p.
type shapeLong struct {
	tok, n, p int
}

// shapeCap is a capture slot of the shape and where its span starts,
// token tok (from k0), a value of kind: it ends after the string, number
// or literal there, or after token close (an object or array).
type shapeCap struct {
	slot, tok, close int
	kind             byte // '"', '{' (or '[') or '0' (a number or literal)
}

// The replay's bounds: a parse learns shapes from the first hit of a
// list of shapeMinHits hits or more (walkList's guess from the first
// hit's length), and learns again from a hit once (shapeLearnt shapes);
// the replay stops for the parse at the shapeMisses-th hit it refuses.
// Learning costs about two walks of the hit, a refused replay a tenth
// of one: an answer of a few hits, or whose hits differ each from the
// last, costs a few walks more, not one a hit.
const (
	shapeMinHits = 8
	shapeLearnt  = 2
	shapeMisses  = 4
)

// shapeSlots bounds the capture slots of a hit a shape serves.
const shapeSlots = 32

// missed is told of the hit at t[k0:k1], the list's len(w.elems)-th,
// that iwalk walked (with the spans hc) as there was no shape or the
// replay refused it. The shape is learnt from the first hit, and again
// from a hit when the replay refused the one before it too, within the
// bounds above.
func (w *walker) missed(k0, k1 int, hc []span) {
	sh, t, i := w.shape, w.t, len(w.elems)
	learn := true // no shape: none learnt yet, or the last learn failed
	switch {
	case sh.off:
		return
	case sh.ok: // the replay refused the hit
		learn = sh.missed == i
		sh.missed = i + 1
		if sh.misses++; sh.misses == shapeMisses {
			sh.ok, sh.off = false, true
			return
		}
	case i == 0:
		j, e := int(t[k0]>>8), int(t[k1-1]>>8)+1
		if (len(w.b)-j)/(e-j+1)+1 < shapeMinHits {
			sh.off = true
			return
		}
	}
	if learn && sh.learnt < shapeLearnt {
		w.learn(k0, k1, hc)
	}
}

// learn makes the hit at t[k0:k1], which iwalk accepted with the spans
// hc, the shape to replay; it leaves none when the hit is not an object
// or the shape does not give back hc.
func (w *walker) learn(k0, k1 int, hc []span) {
	sh := w.shape
	sh.learnt++
	sh.ok = false
	t, b := w.t, w.b
	if byte(t[k0]) != '{' || len(hc) > shapeSlots {
		return
	}
	sh.k0, sh.n = k0, k1-k0
	sh.keys, sh.long, sh.scalars, sh.caps = sh.keys[:0], sh.long[:0], sh.scalars[:0], sh.caps[:0]
	hit := t[k0:k1]
	at := func(off int) int { // the token of hit at offset off, or -1
		i := sort.Search(len(hit), func(i int) bool { return int(hit[i]>>8) >= off })
		if i < len(hit) && int(hit[i]>>8) == off {
			return i
		}
		return -1
	}
	for slot, s := range hc {
		if s.end == 0 {
			continue
		}
		c := shapeCap{slot: slot, tok: at(s.start), close: -1}
		if c.tok < 0 {
			return
		}
		switch c.kind = byte(hit[c.tok]); c.kind {
		case '"':
		case '{', '[':
			c.kind = '{'
			if c.close = at(s.end - 1); c.close < 0 {
				return
			}
		default:
			c.kind = '0'
		}
		sh.caps = append(sh.caps, c)
	}
	kinds := slices.Grow(sh.kinds[:0], len(hit))[:len(hit)]
	kmask := slices.Grow(sh.kmask[:0], len(hit))[:len(hit)]
	sh.kinds, sh.kmask = kinds, kmask
	for i, v := range hit {
		kinds[i], kmask[i] = v&0xff, 0xff
		switch byte(v) {
		case '{', '}', '[', ']', ':', ',':
		case '"':
			if byte(t[k0+i+1]) != ':' {
				continue
			}
			p, c := int(v>>8), int(t[k0+i+1]>>8)-1
			for b[c] != '"' {
				c--
			}
			n := c - p
			if p+1+max(n, 16) > len(b) {
				return
			}
			m := wordMask[min(n, 8)]
			sh.keys = append(sh.keys, shapeKey{le64(b, p+1) & m, m, i, 1})
			if n > 8 {
				m := wordMask[min(n-8, 8)]
				sh.keys = append(sh.keys, shapeKey{le64(b, p+9) & m, m, i, 9})
			}
			if n > 16 {
				sh.long = append(sh.long, shapeLong{i, n, p})
			}
			sh.lastKey = i
		default:
			kinds[i], kmask[i] = 0, 0
			if !slices.ContainsFunc(sh.caps, func(c shapeCap) bool { return c.tok == i }) {
				sh.scalars = append(sh.scalars, i)
			}
		}
	}
	sh.asm = hasStage1AVX2 && sh.n >= 8 && len(sh.keys) > 0
	sh.rare = len(sh.long) > 0 || len(sh.scalars) > 0
	// The shape must give back the spans the walk found.
	var got [shapeSlots]span
	sh.ok = true
	if _, _, ok := w.ireplay(k0, got[:len(hc)]); !ok || !slices.Equal(got[:len(hc)], hc) {
		sh.ok = false
	}
}

// ireplayList is iwalkList's loop over the hits from t[k] on while the
// shape takes them: it returns the token of the first hit it refused,
// or with done true what iwalkList returns after the list.
func (w *walker) ireplayList(k int) (next, end int, done, ok bool) {
	t, nhit, sh := w.t, w.nhit, w.shape
	for {
		n := len(w.caps)
		if n+nhit > cap(w.caps) {
			w.caps = append(w.caps, make([]span, nhit)...)[:n]
		}
		hc := w.caps[n : n+nhit : n+nhit]
		k1, e, ok := w.ireplay(k, hc)
		if !ok {
			return k, 0, false, true
		}
		sh.replayed++
		// Past its length w.caps is zero (see iwalkList).
		w.caps = w.caps[:n+nhit]
		w.elems = append(w.elems, span{int(t[k] >> 8), e})
		var more bool
		if k, end, more, ok = iafter(t, k1, ']'); !more {
			return k, end, true, ok
		}
	}
}

// ireplay walks the hit at t[k] as the shape says, if the hit has the
// shape: it fills hc (zero on entry, and again when ok is false) and
// returns the token after the hit and the hit's end offset.
func (w *walker) ireplay(k int, hc []span) (next, end int, ok bool) {
	sh := w.shape
	t, b := w.t, w.b
	n := sh.n
	if k+n > len(t) {
		return 0, 0, false
	}
	got := t[k : k+n]
	kinds, kmask := sh.kinds[:n], sh.kmask[:n]
	if sh.asm && int(got[sh.lastKey]>>8)+17 <= len(b) {
		// No key's words read past b: each is read from at most 9
		// bytes after its quote, and none comes after the last key's
		// (whatever the tokens there, their offsets grow).
		if !shapeMatchAVX2(&got[0], &kinds[0], &kmask[0], n, &b[0], &sh.keys[0], len(sh.keys)) {
			return 0, 0, false
		}
	} else if !shapeMatchGo(got, kinds, kmask, b, sh.keys) {
		return 0, 0, false
	}
	if sh.rare {
		for _, l := range sh.long {
			p, q := int(got[l.tok]>>8)+17, l.p+17
			if n := l.n - 16; p+n > len(b) || string(b[p:p+n]) != string(b[q:q+n]) {
				return 0, 0, false
			}
		}
		for _, j := range sh.scalars {
			if _, ok := w.iscalar(int(got[j]>>8), int(got[j+1]>>8)); !ok {
				return 0, 0, false
			}
		}
	}
	caps := sh.caps
	for i := range caps {
		c := &caps[i]
		s := span{int(got[c.tok] >> 8), 0}
		switch c.kind {
		case '"':
			// The closing quote is the last quote before the next token.
			e := int(got[c.tok+1]>>8) - 1
			for b[e] != '"' {
				e--
			}
			s.end = e + 1
		case '{':
			s.end = int(got[c.close]>>8) + 1
		default:
			if s.end, ok = w.iscalar(s.start, int(got[c.tok+1]>>8)); !ok {
				clear(hc)
				return 0, 0, false
			}
		}
		hc[c.slot] = s
	}
	return k + n, int(got[n-1]>>8) + 1, true
}

// shapeMatchGo reports whether the hit of tokens got has the shape's
// kinds (as many tokens: the low byte of each masked by kmask is that
// of kinds) and its keys, 8 bytes a word (a word that would read past b
// differs).
func shapeMatchGo(got, kinds, kmask []uint32, b []byte, keys []shapeKey) bool {
	// The kinds: the differences ORed, two tokens a word.
	n := len(got)
	var acc uint64
	if n >= 2 {
		g := unsafe.Slice((*uint64)(unsafe.Pointer(&got[0])), n/2)
		f := unsafe.Slice((*uint64)(unsafe.Pointer(&kinds[0])), n/2)
		m := unsafe.Slice((*uint64)(unsafe.Pointer(&kmask[0])), n/2)
		f, m = f[:len(g)], m[:len(g)]
		for i := range g {
			acc |= g[i]&m[i] ^ f[i]
		}
	}
	if n%2 != 0 {
		acc |= uint64(got[n-1]&kmask[n-1] ^ kinds[n-1])
	}
	if acc&0xff000000ff != 0 {
		return false
	}
	var diff uint64
	for i := range keys {
		kd := &keys[i]
		p := int(got[kd.tok]>>8) + kd.off
		if p+8 > len(b) {
			return false
		}
		diff |= (le64(b, p) ^ kd.w) & kd.m
	}
	return diff == 0
}
