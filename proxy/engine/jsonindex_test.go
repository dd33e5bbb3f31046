package engine

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// refTokens is the structural index computed a byte at a time, as the
// definition in jsonindex.go reads: a backslash not itself escaped
// escapes the next byte, in strings or not.
func refTokens(b []byte) ([]uint32, bool) {
	// (The backslash flag of tokens is bytes.IndexByte(b, '\\') >= 0.)
	var out []uint32
	in, esc, scalar := false, false, false
	for i, c := range b {
		tok := false
		switch {
		case c == '"' && !esc:
			tok, in = !in, !in
			scalar = false
		case in || c == ' ' || c == '\t' || c == '\n' || c == '\r':
			scalar = false
		case c|0x20 == ':' || c|0x20 == '{' || c|0x20 == ',' || c|0x20 == '}':
			tok, scalar = true, false
		default:
			tok, scalar = !scalar, true
		}
		if tok {
			out = append(out, uint32(i)<<8|uint32(c))
		}
		esc = c == '\\' && !esc
	}
	for range ixSentinels {
		out = append(out, uint32(len(b))<<8)
	}
	return out, !in
}

// checkTokens compares the index of b by stage1 (the assembly where the
// CPU has it), by stage1Go and by refTokens.
func checkTokens(t *testing.T, b []byte) {
	t.Helper()
	want, wok := refTokens(b)
	wbs := bytes.IndexByte(b, '\\') >= 0
	for _, goOnly := range []bool{false, true} {
		got, ok, bs := tokens(b, nil, goOnly)
		if ok != wok || bs != wbs || !slices.Equal(got, want) {
			t.Fatalf("stage1Go only %v, %q:\n got %v %v %x\nwant %v %v %x", goOnly, b, ok, bs, got, wok, wbs, want)
		}
	}
}

// jsonAlphabet is what random answers are made of: every byte class of
// the index, runs of backslashes and quotes among them.
const jsonAlphabet = "\"\"\\\\\\{}[]:,  \t\n\rtrue-1.5e9ax\x0c\x1a\x00\xe9"

func randomJSONish(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = jsonAlphabet[r.IntN(len(jsonAlphabet))]
	}
	return b
}

// TestStage1 checks the index of the engines' answers in testdata, of
// random bytes of every length around the 64-byte blocks and of long
// runs of backslashes across blocks.
func TestStage1(t *testing.T) {
	if !hasStage1AVX2 {
		t.Log("no AVX2 form on this CPU or build: stage1 is stage1Go")
	}
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata: %v %v", files, err)
	}
	for _, f := range files {
		b := read(t, filepath.Base(f))
		checkTokens(t, b)
		for _, cut := range []int{1, 63, 64, 65, 127, 128, 1000} {
			if cut < len(b) {
				checkTokens(t, b[:len(b)-cut])
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		for range 20 {
			checkTokens(t, randomJSONish(r, n))
		}
	}
	for run := 1; run < 140; run++ {
		for _, at := range []int{0, 1, 30, 62, 63, 64, 100} {
			b := bytes.Repeat([]byte("a"), at)
			b = append(append(append(b, '"'), bytes.Repeat([]byte(`\`), run)...), `"x":1,"`...)
			checkTokens(t, b)
			checkTokens(t, b[1:])
		}
	}
}

func FuzzStage1(f *testing.F) {
	f.Add(read(f, "demo-es-53.json"))
	f.Add([]byte(`{"a\\":"\"\\\"",[1,-2e3,true]}`))
	f.Add(bytes.Repeat([]byte(`\`), 130))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > ixMaxLen {
			return
		}
		checkTokens(t, b)
	})
}

// indexAdapters are the adapters the walks are compared with: the kinds
// of FuzzParseJSON, each also with URLOnly, and a generic one whose URL
// indexes an array.
func indexAdapters(t testing.TB) []Adapter {
	var out []Adapter
	for _, c := range []Config{{Kind: "elasticsearch"}, {Kind: "solr"}, {Kind: "searxng"},
		{Kind: "json", Fields: FieldPaths{Results: "results", Total: "number_of_results", URL: "parsed_url.1"}},
		{Kind: "json", Fields: FieldPaths{Results: ".", URL: "u"}},
		{Kind: "json", Fields: FieldPaths{Results: "results", URL: "a_field_name_of_more_than_32_bytes_long", Title: "t\"q"}}} {
		out = append(out, mustNew(t, c))
		c.URLOnly = true
		out = append(out, mustNew(t, c))
	}
	return out
}

// checkWalks parses body with and without the structural index and
// wants the same Parsed, or the same error.
func checkWalks(t *testing.T, adapters []Adapter, body []byte) {
	t.Helper()
	defer func(old bool) { useIndex = old }(useIndex)
	for _, a := range adapters {
		useIndex = true
		p, err := a.Parse(body, "application/json")
		useIndex = false
		wp, werr := a.Parse(body, "application/json")
		if fmt.Sprint(err) != fmt.Sprint(werr) || !reflect.DeepEqual(p, wp) {
			t.Fatalf("%s: with the index %+v, %v\nwithout %+v, %v\nbody %q", a.Name(), p, err, wp, werr, body)
		}
		// What Parse accepts, the index walk accepts on its own (only
		// deep nesting is left to the walk without it).
		if err == nil && nesting(body) <= ixMaxDepth && !indexAccepts(t, a, body) {
			t.Fatalf("%s: the index walk refused an answer Parse accepts: %q", a.Name(), body)
		}
	}
}

// TestIndexWalk compares the walk over the index with the walk without
// it on the answers in testdata, the broken demo answers, and answers
// edited at random (bytes removed, replaced, inserted).
func TestIndexWalk(t *testing.T) {
	adapters := indexAdapters(t)
	files, _ := filepath.Glob("testdata/*.json")
	var bodies [][]byte
	for _, f := range files {
		bodies = append(bodies, read(t, filepath.Base(f)))
	}
	for _, b := range brokenDemo(t, 97) {
		checkWalks(t, adapters, b)
	}
	bodies = append(bodies, []byte(`[{"u":"a"},{"u":"b","v":[1,{"w":null}]}]`),
		[]byte(`{"results":[{"parsed_url":["http","h",3]},{"parsed_url":{"1":2}}],"number_of_results":2}`),
		[]byte(`{"results":[{"a_field_name_of_more_than_32_bytes_long":"http://h/1","a_field_name_of_more_than_32_bytes_lonG":2},{"t\"q":"x","a_field_name_of_more_than_32_bytes_long":"http://h/2"}]}`),
		[]byte(`{"results":[{"a_field_name_of_more_than_32_bytes_long":"http://h/1","t\u0022q":"y"}]}`),
		[]byte(`{"results":[{"a_field_name_of_more_than_32_bytes_long":"http://h/3"}]}`))
	r := rand.New(rand.NewPCG(3, 4))
	edits := 300
	if testing.Short() {
		edits = 60
	}
	for _, body := range bodies {
		checkWalks(t, adapters, body)
		for range edits {
			b := slices.Clone(body)
			for n := 1 + r.IntN(3); n > 0 && len(b) > 0; n-- {
				i := r.IntN(len(b))
				switch c := jsonAlphabet[r.IntN(len(jsonAlphabet))]; r.IntN(3) {
				case 0:
					b = slices.Delete(b, i, i+1)
				case 1:
					b[i] = c
				default:
					b = slices.Insert(b, i, c)
				}
			}
			checkWalks(t, adapters, b)
		}
	}
}

func FuzzIndexWalk(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		f.Add(read(f, filepath.Base(name)))
	}
	for _, b := range brokenDemo(f, 4096) {
		f.Add(b)
	}
	// Hits that differ from the first one's shape, or are broken where
	// only the replay of that shape reads them.
	for _, v := range shapeVariants(f) {
		f.Add(v.body)
	}
	for _, b := range brokenHits(f) {
		f.Add(b)
	}
	adapters := indexAdapters(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		checkWalks(t, adapters, body)
	})
}

// nesting returns how deep the objects and arrays of body nest.
func nesting(body []byte) int {
	tk, _ := refTokens(body)
	d, most := 0, 0
	for _, v := range tk {
		switch byte(v) {
		case '{', '[':
			d++
			most = max(most, d)
		case '}', ']':
			d--
		}
	}
	return most
}

// indexAccepts reports whether a's walk over the index accepts body on
// its own, without the walk again that Parse falls back to.
func indexAccepts(t testing.TB, a Adapter, body []byte) bool {
	ja, ok := a.(*jsonAdapter)
	if s, isSearx := a.(*searxng); isSearx {
		ja, ok = &s.jsonAdapter, true
	}
	if !ok {
		t.Fatalf("%T is no JSON adapter", a)
	}
	tk, ok, bs := tokens(body, nil, false)
	if !ok || len(tk) == ixSentinels {
		return false
	}
	pl := &ja.plan
	w := walker{b: body, hit: &pl.hit, nhit: pl.nhit, t: tk, noBS: !bs, shape: new(hitShape)}
	caps := make([]span, max(pl.nroot, rSlots+16))
	var k int
	if ja.kind == kindGeneric && pl.list == nil && byte(tk[0]) == '[' {
		k, _, ok = w.iwalkList(0, 0)
	} else {
		k, _, ok = w.iwalk(&pl.root, caps, 0, 0)
	}
	return ok && k == len(tk)-ixSentinels
}

// TestIndexWalkUsed: the engines' valid answers are walked over the index,
// not refused by it and walked again.
func TestIndexWalkUsed(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		body := read(t, filepath.Base(name))
		for _, a := range indexAdapters(t) {
			if _, err := a.Parse(body, ""); err == nil && !indexAccepts(t, a, body) {
				t.Errorf("%s, %s: the index walk refused a valid answer", filepath.Base(name), a.Name())
			}
		}
	}
}

// BenchmarkStage1 measures the index of the demo answer alone: stage1
// (the assembly where the CPU has it) and stage1Go.
func BenchmarkStage1(b *testing.B) {
	body := read(b, "demo-es-53.json")
	for _, goOnly := range []bool{false, true} {
		b.Run(fmt.Sprint("goOnly=", goOnly), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			var t []uint32
			for b.Loop() {
				t, _, _ = tokens(body, t, goOnly)
			}
		})
	}
}
