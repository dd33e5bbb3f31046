package engine

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// editHit returns body with the first old in its hit'th hit (counted
// from 0 by the opening `{"_index"` of Elasticsearch hits) replaced.
func editHit(t testing.TB, body []byte, hit int, old, new string) []byte {
	t.Helper()
	start := 0
	for range hit + 1 {
		i := bytes.Index(body[start:], []byte(`{"_index"`))
		if i < 0 {
			t.Fatalf("no hit %d", hit)
		}
		start += i + 1
	}
	start--
	end := len(body)
	if j := bytes.Index(body[start+1:], []byte(`{"_index"`)); j >= 0 {
		end = start + 1 + j
	}
	i := bytes.Index(body[start:end], []byte(old))
	if i < 0 {
		t.Fatalf("%q not in hit %d", old, hit)
	}
	i += start
	return append(append(append([]byte(nil), body[:i]...), new...), body[i+len(old):]...)
}

// shapeVariant is an answer and the shapes the index walk learns from
// its hits and the hits it replays.
type shapeVariant struct {
	name             string
	body             []byte
	learnt, replayed int
}

// shapeVariants are answers of 53 hits whose fourth hit differs from
// the first hit's shape in one way each (walked, not replayed, when the
// difference counts), or whose first hit differs from the rest (the
// next two walked, the shape learnt again from the second).
func shapeVariants(t testing.TB) []shapeVariant {
	demo := read(t, "demo-es-53.json")
	return []shapeVariant{
		{"demo", demo, 1, 52},
		{"a selected key renamed", editHit(t, demo, 3, `"url":`, `"urm":`), 1, 51},
		{"the first hit's selected key renamed", editHit(t, demo, 0, `"url":`, `"urm":`), 2, 50},
		{"a selected key lengthened", editHit(t, demo, 3, `"url":`, `"urls":`), 1, 51},
		{"selected keys swapped", editHit(t, demo, 3, `"url":"http://127.0.0.1:18232/pages/22/AdminTasks.html","title":"LLVM Admin Tasks — LLVM 15 documentation"`,
			`"title":"http://127.0.0.1:18232/pages/22/AdminTasks.html","url":"LLVM Admin Tasks — LLVM 15 documentation"`), 1, 51},
		{"a key missing", editHit(t, demo, 3, `"_type":"_doc",`, ``), 1, 51},
		{"a key escaped", editHit(t, demo, 3, `"url":`, `"ur\u006c":`), 1, 51},
		{"the first hit's key escaped", editHit(t, demo, 0, `"url":`, `"u\u0072l":`), 2, 50},
		{"a 9-byte key's 9th byte", editHit(t, demo, 3, `"highlight":`, `"highlighu":`), 1, 51},
		{"a score of another kind", editHit(t, demo, 3, `"_score":0.009068418`, `"_score":"0.009068418"`), 1, 51},
		{"a score null", editHit(t, demo, 3, `"_score":0.009068418`, `"_score":null`), 1, 52},
		{"a score negative", editHit(t, demo, 3, `"_score":0.009068418`, `"_score":-0.009068418`), 1, 52},
		{"a score with an exponent", editHit(t, demo, 3, `"_score":0.009068418`, `"_score":9.068418e-3`), 1, 52},
		{"a score indented", editHit(t, demo, 3, `"_score":0.009068418`, `"_score":  0.009068418 `), 1, 52},
		{"the last hit's url empty", editHit(t, demo, 52, `"url":"http://127.0.0.1:18232/pages/22/tutorial/index.html"`, `"url":""`), 1, 52},
	}
}

// brokenHits are answers broken in a hit after the first, where only
// the replay reads them.
func brokenHits(t testing.TB) map[string][]byte {
	demo := read(t, "demo-es-53.json")
	return map[string][]byte{
		"a score not a number":             editHit(t, demo, 3, `"_score":0.009068418`, `"_score":0.00906x418`),
		"a score of a dot and space":       editHit(t, demo, 3, `"_score":0.009068418`, `"_score":0.0090684 8`),
		"a literal misspelt":               editHit(t, demo, 3, `"_score":0.009068418`, `"_score":nul`),
		"a bare word in a skipped array":   editHit(t, demo, 3, `"text":["`, `"text":[tru,"`),
		"a bare word in place of a string": editHit(t, demo, 3, `"_type":"_doc"`, `"_type":doc`),
		"a control byte between members":   editHit(t, demo, 3, `"_type":"_doc",`, "\"_type\":\"_doc\"\x01,"),
		"a colon for a comma":              editHit(t, demo, 3, `"_type":"_doc",`, `"_type":"_doc":`),
		"a hit closed by a bracket":        editHit(t, demo, 3, `"]}}`, `"]}]`),
	}
}

// shapesLearnt walks body over the index as Parse does and returns
// whether the walk accepted it, the shapes it learnt and the hits it
// replayed.
func shapesLearnt(t testing.TB, a Adapter, body []byte) (ok bool, learnt, replayed int) {
	t.Helper()
	ok, sh := walkShapes(t, a, body)
	return ok, sh.learnt, sh.replayed
}

// walkShapes walks body over the index as Parse does and returns
// whether the walk accepted it and the state of its shapes at the end.
func walkShapes(t testing.TB, a Adapter, body []byte) (bool, *hitShape) {
	t.Helper()
	ja := a.(*jsonAdapter)
	sh := new(hitShape)
	tk, ok, bs := tokens(body, nil, false)
	if !ok {
		return false, sh
	}
	pl := &ja.plan
	w := walker{b: body, hit: &pl.hit, nhit: pl.nhit, t: tk, noBS: !bs, shape: sh}
	caps := make([]span, max(pl.nroot, rSlots+16))
	k, _, ok := w.iwalk(&pl.root, caps, 0, 0)
	return ok && k == len(tk)-ixSentinels, sh
}

// TestShapeReplay: the hits of the demo answer after the first are
// replayed from its shape, and a hit that differs from it in a key, a
// kind or a number is walked instead, with the same Parsed as the walk
// without the index.
func TestShapeReplay(t *testing.T) {
	adapters := indexAdapters(t)
	for _, cfg := range []Config{{Kind: "elasticsearch"}, {Kind: "elasticsearch", URLOnly: true}} {
		a := mustNew(t, cfg)
		for _, v := range shapeVariants(t) {
			ok, learnt, replayed := shapesLearnt(t, a, v.body)
			if !ok || learnt != v.learnt || replayed != v.replayed {
				t.Errorf("URLOnly %v, %s: the index walk accepted %v, learnt %d shapes, replayed %d hits; want true, %d, %d",
					cfg.URLOnly, v.name, ok, learnt, replayed, v.learnt, v.replayed)
			}
			checkWalks(t, adapters, v.body)
		}
		for name, b := range brokenHits(t) {
			if ok, _, _ := shapesLearnt(t, a, b); ok {
				t.Errorf("URLOnly %v, %s: the index walk accepted it", cfg.URLOnly, name)
			}
			if _, err := a.Parse(b, ""); !errors.Is(err, ErrMalformed) {
				t.Errorf("URLOnly %v, %s: Parse = %v, want ErrMalformed", cfg.URLOnly, name, err)
			}
			checkWalks(t, adapters, b)
		}
	}
}

// TestShapeReplayFields: the replay finds the same fields as the walk
// without the index in the answers of a field path of more than 16
// bytes, whose hits differ past the 16th byte of the key, and of keys of
// 8 and 9 bytes; the last hit of an answer that ends right after it is
// walked; a number no path reads is checked in each hit.
func TestShapeReplayFields(t *testing.T) {
	long := "a_field_name_of_more_than_32_bytes_long"
	a := mustNew(t, Config{Kind: "json", Fields: FieldPaths{Results: "results", URL: long, Title: "eightchr", Snippet: "ninechars"}})
	hit := func(key, url string) string {
		return `{"` + key + `":"` + url + `","eightchr":"t","ninechars":"s","n":1}`
	}
	// An answer of 10 hits, the third edited. The keys of a hit within
	// 17 bytes of the answer's end are not read as words: the answers
	// end with another member but for one.
	const end = `],"number_of_results":10}`
	answer := func(third, end string) []byte {
		hits := make([]string, 10)
		for i := range hits {
			hits[i] = hit(long, fmt.Sprint("http://h/", i))
		}
		hits[2] = third
		return []byte(`{"results":[` + strings.Join(hits, ",") + end)
	}
	for _, c := range []struct {
		name     string
		body     []byte
		replayed int
	}{
		{"alike", answer(hit(long, "u"), end), 9},
		{"a long key's last byte", answer(hit(long[:len(long)-1]+"G", "u"), end), 8},
		{"a long key's 17th byte", answer(hit(long[:16]+"X"+long[17:], "u"), end), 8},
		{"an 8-byte key's last byte", answer(strings8(hit(long, "u")), end), 8},
		{"the last hit at the end", answer(hit(long, "u"), `]}`), 8},
	} {
		ok, learnt, replayed := shapesLearnt(t, a, c.body)
		if !ok || learnt != 1 || replayed != c.replayed {
			t.Errorf("%s: the index walk accepted %v, learnt %d shapes, replayed %d hits; want true, 1, %d", c.name, ok, learnt, replayed, c.replayed)
		}
		checkWalks(t, []Adapter{a}, c.body)
		p, err := a.Parse(c.body, "")
		if err != nil || len(p.Results) != 10 {
			t.Fatalf("%s: %v, %+v", c.name, err, p)
		}
	}
	// A number no path reads, broken in a replayed hit.
	broken := answer(strings.Replace(hit(long, "u"), `"n":1`, `"n":1x`, 1), end)
	if ok, _, _ := shapesLearnt(t, a, broken); ok {
		t.Errorf("the index walk accepted %q", broken)
	}
	if _, err := a.Parse(broken, ""); !errors.Is(err, ErrMalformed) {
		t.Errorf("Parse(%q) = %v, want ErrMalformed", broken, err)
	}
}

// TestShapeBounds: a parse learns no shape from an answer of a few
// hits, and stops replaying one whose hits differ each from the last.
func TestShapeBounds(t *testing.T) {
	a := mustNew(t, Config{Kind: "elasticsearch"})
	for _, name := range []string{"es7-search.json", "opensearch-search.json"} {
		body := read(t, name)
		if ok, learnt, replayed := shapesLearnt(t, a, body); !ok || learnt != 0 || replayed != 0 {
			t.Errorf("%s: the index walk accepted %v, learnt %d shapes, replayed %d hits; want true, 0, 0", name, ok, learnt, replayed)
		}
	}
	body := mixedHits(40)
	if ok, sh := walkShapes(t, a, body); !ok || sh.learnt != 2 || sh.replayed != 0 || sh.misses != shapeMisses {
		t.Errorf("hits in other orders: the index walk accepted %v, learnt %d shapes, replayed %d hits, refused %d; want true, 2, 0, %d",
			ok, sh.learnt, sh.replayed, sh.misses, shapeMisses)
	}
	checkWalks(t, indexAdapters(t), body)
}

// mixedHits returns an Elasticsearch answer of n hits whose members come
// each in another order than the last's.
func mixedHits(n int) []byte {
	var hits []string
	for i := range n {
		m := []string{`"_index":"x"`, fmt.Sprintf(`"_id":"%d"`, i), `"_score":1.5`,
			fmt.Sprintf(`"_source":{"url":"http://h/%d","title":"t"}`, i), fmt.Sprintf(`"k%d":1`, i%7)}
		hits = append(hits, "{"+strings.Join(append(m[i%5:], m[:i%5]...), ",")+"}")
	}
	return []byte(fmt.Sprintf(`{"hits":{"total":{"value":%d},"hits":[%s]}}`, n, strings.Join(hits, ",")))
}

// strings8 renames a hit's "eightchr" key to "eightchR".
func strings8(hit string) string {
	return strings.Replace(hit, `"eightchr"`, `"eightchR"`, 1)
}

// TestShapeMatch compares shapeMatchAVX2 with shapeMatchGo on token
// lists that differ in one token's kind (a number's or literal's
// byte, which does not count, among them) or one key's byte, at every
// place.
func TestShapeMatch(t *testing.T) {
	if !hasStage1AVX2 {
		t.Skip("no AVX2 form on this CPU or build")
	}
	r := rand.New(rand.NewPCG(5, 6))
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	for n := 8; n < 80; n++ {
		hit := make([]uint32, n)
		kinds, kmask := make([]uint32, n), make([]uint32, n)
		for i := range hit {
			hit[i] = uint32(i*40)<<8 | uint32(r.IntN(256))
			if r.IntN(5) > 0 {
				kinds[i], kmask[i] = hit[i]&0xff, 0xff
			}
		}
		var keys []shapeKey
		for i := 0; i < n; i += 1 + r.IntN(4) {
			m := wordMask[1+r.IntN(8)]
			keys = append(keys, shapeKey{le64(b, i*40+1) & m, m, i, 1 + 8*r.IntN(2)})
			keys[len(keys)-1].w = le64(b, i*40+keys[len(keys)-1].off) & m
		}
		check := func(got []uint32, kd []shapeKey) bool {
			t.Helper()
			a := shapeMatchAVX2(&got[0], &kinds[0], &kmask[0], n, &b[0], &kd[0], len(kd))
			if g := shapeMatchGo(got, kinds, kmask, b, kd); g != a {
				t.Fatalf("n %d: Go %v, assembly %v", n, g, a)
			}
			return a
		}
		if !check(hit, keys) {
			t.Fatalf("n %d: a hit does not match its shape", n)
		}
		for i := range n {
			got := append([]uint32(nil), hit...)
			got[i] ^= 1 << uint(r.IntN(8))
			if check(got, keys) != (kmask[i] == 0) {
				t.Fatalf("n %d: token %d's byte changed (mask %x), matched %v", n, i, kmask[i], kmask[i] == 0)
			}
			// Another offset, the same kind: a key there is read
			// elsewhere.
			got[i] = hit[i] + 3<<8
			check(got, keys)
		}
		for i := range keys {
			kd := append([]shapeKey(nil), keys...)
			kd[i].w ^= kd[i].m & (0x20 << (8 * uint(r.IntN(bitsIn(kd[i].m)/8))))
			if check(hit, kd) {
				t.Fatalf("n %d: key %d changed, matched", n, i)
			}
		}
	}
}

// bitsIn returns the number of set bits of a mask of low bytes.
func bitsIn(m uint64) int {
	n := 0
	for ; m != 0; m >>= 1 {
		n++
	}
	return n
}
