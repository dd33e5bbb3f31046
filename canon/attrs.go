package canon

import "bytes"

// attr is one attribute of a start tag: its name in lower case and its
// value, as x/net's Tokenizer.TagAttr returns them.
type attr struct{ key, val []byte }

// read returns the attributes of the start tag raw (its complete raw
// bytes, "<" to ">"), as the x/net tokenizer returns them: names in lower
// case, a repeated name dropped after its first occurrence, values
// decoded. The result is valid until the next read.
//
// The tokenizer allocates for every attribute it returns (a copy of the
// name and of the value), nine tenths of what canonicalizing a page
// allocated, so read scans the tag itself when that gives the very same
// answer: when the tag holds no character reference, carriage return or
// NUL (which the tokenizer decodes or replaces) and ends where the
// tokenizer would end it. Any other tag goes to the tokenizer.
func (t *tagAttrs) read(raw []byte) []attr {
	if t.scan(raw) {
		return t.kv
	}
	t.kv = t.kv[:0]
	z := t.tag(raw)
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		if k != nil {
			t.kv = append(t.kv, attr{k, v})
		}
	}
	return t.kv
}

// scan reads the attributes of raw into t.kv, following the x/net
// tokenizer's readTag step for step (readTagName, readTagAttrKey,
// readTagAttrVal); it reports false, leaving the tag to the tokenizer,
// when raw has bytes the tokenizer rewrites or does not end at its last
// byte, the closing ">".
func (t *tagAttrs) scan(raw []byte) bool {
	n := len(raw)
	if n < 3 || raw[0] != '<' || raw[n-1] != '>' || bytes.IndexByte(raw, '&') >= 0 ||
		bytes.IndexByte(raw, '\r') >= 0 || bytes.IndexByte(raw, 0) >= 0 {
		return false
	}
	t.kv, t.keys = t.kv[:0], t.keys[:0]
	i := skipWhite(raw, tagNameEnd(raw))
	for i < n && raw[i] != '>' {
		key, val, next, ok := nextAttr(raw, i)
		if !ok {
			return false
		}
		t.add(key, val)
		i = next
	}
	return i == n-1
}

// nextAttr reads the attribute that starts at raw[i] (the tokenizer's
// readTagAttrKey and readTagAttrVal) and returns its name, its value and
// the index after the white space that follows; ok is false when raw
// ends inside it.
func nextAttr(raw []byte, i int) (key, val []byte, next int, ok bool) {
	ks := i
	i = attrKeyEnd(raw, i)
	key = raw[ks:i]
	if i = skipWhite(raw, i); i == len(raw) {
		return nil, nil, i, false
	}
	switch raw[i] {
	case '/':
		i++
	case '=':
		if val, i, ok = tagAttrValue(raw, skipWhite(raw, i+1)); !ok {
			return nil, nil, i, false
		}
	}
	return key, val, skipWhite(raw, i), true
}

// tagNameEnd returns the index after the name of the tag raw ("<name").
func tagNameEnd(raw []byte) int {
	i := 1
	for i < len(raw) && !white(raw[i]) && raw[i] != '/' && raw[i] != '>' {
		i++
	}
	return i
}

// attrKeyEnd returns the index after the attribute name that starts at
// raw[i] (the tokenizer's readTagAttrKey: a leading "=" is part of it).
func attrKeyEnd(raw []byte, i int) int {
	ks := i
	for i < len(raw) && (raw[i] == '=' && i == ks || raw[i] != '=' && raw[i] != '/' && raw[i] != '>' && !white(raw[i])) {
		i++
	}
	return i
}

// href returns the value of the first href attribute of the start tag
// raw, nil when it has none, as [tagAttrs.read] would give it. It steps
// over the attributes as scan does, without recording them, and stops
// at the first href: an <a> tag is read for that alone (a generated
// reference page has ten thousand). A tag scan cannot read, or whose
// href value holds a character reference, CR or NUL, goes to read.
func (t *tagAttrs) href(raw []byte) []byte {
	n := len(raw)
	if n < 3 || raw[0] != '<' || raw[n-1] != '>' {
		return attrValueRaw(t.read(raw), "href")
	}
	i := skipWhite(raw, tagNameEnd(raw))
	for i < n && raw[i] != '>' {
		k, val, next, ok := nextAttr(raw, i)
		if !ok {
			return attrValueRaw(t.read(raw), "href")
		}
		if len(k) == 4 && k[0]|0x20 == 'h' && k[1]|0x20 == 'r' && k[2]|0x20 == 'e' && k[3]|0x20 == 'f' {
			if bytes.IndexByte(val, '&') >= 0 || bytes.IndexByte(val, '\r') >= 0 || bytes.IndexByte(val, 0) >= 0 {
				return attrValueRaw(t.read(raw), "href")
			}
			return val
		}
		i = next
	}
	if i != n-1 {
		return attrValueRaw(t.read(raw), "href")
	}
	return nil
}

// attrValueRaw returns the value of the named attribute among attrs,
// untrimmed; nil when absent.
func attrValueRaw(attrs []attr, key string) []byte {
	for _, a := range attrs {
		if string(a.key) == key {
			return a.val
		}
	}
	return nil
}

// tagAttrValue reads the value that starts at raw[i], after "=" and white
// space, and returns it with the index after it; ok is false when raw
// ends inside it.
func tagAttrValue(raw []byte, i int) (val []byte, next int, ok bool) {
	n := len(raw)
	if i == n {
		return nil, i, false
	}
	switch q := raw[i]; q {
	case '>': // "k=>": an empty value
		return nil, i, true
	case '\'', '"':
		j := bytes.IndexByte(raw[i+1:], q)
		if j < 0 {
			return nil, n, false
		}
		return raw[i+1 : i+1+j], i + 2 + j, true
	}
	j := i
	for j < n && raw[j] != '>' && !white(raw[j]) {
		j++
	}
	if j == n {
		return nil, n, false
	}
	if raw[j] == '>' {
		return raw[i:j], j, true
	}
	return raw[i:j], j + 1, true // the white space after it is consumed
}

// add appends the attribute key=val unless key is empty or already there,
// as the tokenizer keeps only the first of a repeated name.
func (t *tagAttrs) add(key, val []byte) {
	if len(key) == 0 {
		return
	}
	start := len(t.keys)
	for _, c := range key {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		t.keys = append(t.keys, c)
	}
	k := t.keys[start:]
	for _, a := range t.kv {
		if bytes.Equal(a.key, k) {
			t.keys = t.keys[:start]
			return
		}
	}
	// An earlier name stays valid when t.keys grows: the old array is
	// only appended to, never written over.
	t.kv = append(t.kv, attr{k, val})
}

// release drops t's references into the last page read (the attributes'
// values and the tokenizer's input point into it), so that a pooled
// extractor does not keep that page alive.
func (t *tagAttrs) release() {
	clear(t.kv[:cap(t.kv)])
	t.kv = t.kv[:0]
	t.r.b = nil
}
