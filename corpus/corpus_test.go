package corpus

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/warc"
)

// summary lists what a walk yielded: "ID url type len" per Doc and
// "error: msg" per error.
func summary(seq iter.Seq2[Doc, error]) []string {
	var out []string
	for doc, err := range seq {
		if err != nil {
			out = append(out, "error: "+err.Error())
			continue
		}
		out = append(out, fmt.Sprintf("%s %q %s %d", doc.ID, doc.URL, doc.ContentType, len(doc.Body)))
	}
	return out
}

func check(t *testing.T, name string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s yielded\n\t%s\nwant\n\t%s", name, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

func size(t *testing.T, name string) int {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return int(fi.Size())
}

func TestDir(t *testing.T) {
	d := "testdata/dir"
	want := []string{
		fmt.Sprintf(`Apache-2.0.txt "" text/plain %d`, size(t, d+"/Apache-2.0.txt")),
		fmt.Sprintf(`CommandGuide/llvm-link.html "" text/html %d`, size(t, d+"/CommandGuide/llvm-link.html")),
		fmt.Sprintf(`HashTable.xhtml "" text/html %d`, size(t, d+"/HashTable.xhtml")),
		fmt.Sprintf(`tutorial/INDEX.HTM "" text/html %d`, size(t, d+"/tutorial/INDEX.HTM")),
	}
	check(t, "Dir", summary(Dir(d)), want)

	// With a cap below two of the files, they give errors and the walk
	// goes on.
	o := Options{MaxFileSize: 10700}
	got := summary(o.Dir(d))
	want = []string{
		"error: corpus: testdata/dir/Apache-2.0.txt: corpus: too large: file of 11358 bytes over the 10700 byte cap",
		want[1],
		"error: corpus: testdata/dir/HashTable.xhtml: corpus: too large: file of 10939 bytes over the 10700 byte cap",
		want[3],
	}
	check(t, "Dir with a cap", got, want)
	for _, err := range o.Dir(d) {
		if err != nil && !errors.Is(err, ErrTooLarge) {
			t.Errorf("error %v does not wrap ErrTooLarge", err)
		}
	}

	got = summary(Dir("testdata/missing"))
	if len(got) != 1 || !strings.HasPrefix(got[0], "error: corpus: testdata/missing") {
		t.Errorf("Dir(missing) = %q, want one error", got)
	}
}

func TestDirUnreadable(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root reads everything")
	}
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, "a.html"), []byte("<p>a</p>"), 0o644)
	os.WriteFile(filepath.Join(d, "b.html"), []byte("<p>b</p>"), 0o000)
	os.WriteFile(filepath.Join(d, "c.txt"), []byte("c"), 0o644)
	got := summary(Dir(d))
	if len(got) != 3 || !strings.HasPrefix(got[1], "error: ") {
		t.Errorf("Dir with an unreadable file = %q", got)
	}
}

func TestDirStop(t *testing.T) {
	n := 0
	for range Dir("testdata/dir") {
		n++
		break
	}
	if n != 1 {
		t.Errorf("break after the first Doc: %d iterations", n)
	}
}

func TestJSONL(t *testing.T) {
	f, err := os.Open("testdata/pages.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := summary(JSONL(f, JSONLFields{}))
	want := []string{
		`llvm-link-13 "https://example.org/13/llvm-link.html" text/html; charset=utf-8 10631`,
		"error: corpus: line 2: not a JSON object: unexpected end of JSON input",
		`42 "" text/plain; charset=utf-8 2000`,
		`error: corpus: line 5: no non-empty string in html, text, content, raw_content, body`,
		`6 "" text/html; charset=utf-8 10629`,
		"error: corpus: line 7: not a JSON object: json: cannot unmarshal array into Go value of type map[string]json.RawMessage",
		`llvm-link-22 "" text/html; charset=utf-8 10628`,
	}
	check(t, "JSONL", got, want)

	got = summary(JSONL(strings.NewReader(`{"doc":"x","plain":"hello"}`), JSONLFields{ID: []string{"doc"}, Text: []string{"plain"}}))
	check(t, "JSONL with fields", got, []string{`x "" text/plain; charset=utf-8 5`})

	got = summary(JSONL(strings.NewReader(`{"id":{"a":1},"text":"x"}`+"\n"+`{"id":"ok","text":7}`), JSONLFields{}))
	check(t, "JSONL bad types", got, []string{
		`error: corpus: line 1: field "id" is neither a string nor a number`,
		`error: corpus: line 2: field "text" is not a string`,
	})
}

// TestJSONLDatasets reads records shaped as common web datasets ship them,
// with the default field names.
func TestJSONLDatasets(t *testing.T) {
	in := strings.Join([]string{
		`{"text": "C4 text", "timestamp": "2019-04-25T12:57:54Z", "url": "https://c4.example/a"}`,
		`{"content": "RefinedWeb content", "url": "https://rw.example/b", "dump": "CC-MAIN-2023-06", "segment": "x"}`,
		`{"raw_content": "RedPajama raw content", "doc_id": "x"}`,
		`{"id": 7, "body": "<!DOCTYPE html><html><body>crawl dump</body></html>", "url": "https://dump.example/c", "popularity": 12.5}`,
		`{"id": "h", "html": "<p>html field</p>", "text": "its text"}`,
		`{"id": "p", "text": "x", "popularity": "high"}`,
	}, "\n")
	var got []string
	for doc, err := range JSONL(strings.NewReader(in), JSONLFields{}) {
		if err != nil {
			got = append(got, "error: "+err.Error())
			continue
		}
		got = append(got, fmt.Sprintf("%s %q %s %q %g", doc.ID, doc.URL, doc.ContentType, doc.Body, doc.Popularity))
	}
	check(t, "JSONL datasets", got, []string{
		`1 "https://c4.example/a" text/plain; charset=utf-8 "C4 text" 0`,
		`2 "https://rw.example/b" text/plain; charset=utf-8 "RefinedWeb content" 0`,
		`3 "" text/plain; charset=utf-8 "RedPajama raw content" 0`,
		`7 "https://dump.example/c" text/html; charset=utf-8 "<!DOCTYPE html><html><body>crawl dump</body></html>" 12.5`,
		`h "" text/html; charset=utf-8 "<p>html field</p>" 0`,
		`error: corpus: line 6: field "popularity" is not a finite number`,
	})
}

func TestJSONLLongLine(t *testing.T) {
	long := `{"id":"long","text":"` + strings.Repeat("x", 200<<10) + `"}`
	in := `{"id":"a","text":"first"}` + "\n" + long + "\n" + `{"id":"b","text":"last"}`
	got := summary(Options{MaxLineSize: 100 << 10}.JSONL(strings.NewReader(in), JSONLFields{}))
	check(t, "JSONL with a long line", got, []string{
		`a "" text/plain; charset=utf-8 5`,
		"error: corpus: line 2: corpus: too large: line over the 102400 byte cap",
		`b "" text/plain; charset=utf-8 4`,
	})
	got = summary(JSONL(strings.NewReader(in), JSONLFields{}))
	if len(got) != 3 || !strings.HasPrefix(got[1], "long ") {
		t.Errorf("JSONL under the default cap = %.200q", got)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestJSONLReadError(t *testing.T) {
	got := summary(JSONL(io.MultiReader(strings.NewReader(`{"id":"a","text":"x"}`+"\n"), errReader{}), JSONLFields{}))
	check(t, "JSONL with a read error", got, []string{`a "" text/plain; charset=utf-8 1`, "error: corpus: line 2: disk on fire"})
}

// TestOpenCompressedJSONL reads JSON Lines as datasets ship them, each
// file written by pandas 3.1.1 (to_json(orient="records", lines=True,
// compression=...)): C4's and Dolma's .json.gz, the Pile's .jsonl.zst,
// and .jsonl.bz2.
func TestOpenCompressedJSONL(t *testing.T) {
	for _, name := range []string{"c4.json.gz", "pile.jsonl.zst", "pages.jsonl.bz2"} {
		got := summary(Open("testdata/" + name))
		check(t, name, got, []string{`1 "https://example.org/a" text/plain; charset=utf-8 94`, `2 "https://example.org/b" text/plain; charset=utf-8 75`})
	}
}

// TestWARCTruncatedPayload reads a response whose gzip payload the
// crawler cut at 1 KiB and marked so (WARC-Truncated: length;
// testdata/truncated.warc.gz, written by warcio): the part it holds is
// the page as captured, not an error.
func TestWARCTruncatedPayload(t *testing.T) {
	var docs []Doc
	for doc, err := range Open("testdata/truncated.warc.gz") {
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		docs = append(docs, doc)
	}
	if len(docs) != 1 || !strings.HasPrefix(string(docs[0].Body), "<html><body><p>") || len(docs[0].Body) != 2660 {
		t.Errorf("documents %d, want one: the page's first 2660 bytes", len(docs))
	}
}

// TestJSONLByteOrderMark reads a file pandas 3.1.1 wrote through a file
// opened with Python's utf-8-sig codec and CRLF line ends (as on Windows):
// the byte order mark is no part of the first record; and one written
// through Python's utf-16 codec, as Windows PowerShell 5 writes text:
// UTF-16 with a byte order mark, decoded.
func TestJSONLByteOrderMark(t *testing.T) {
	got := summary(Open("testdata/bom.jsonl"))
	check(t, "JSONL with a byte order mark", got, []string{`a "" text/plain; charset=utf-8 89`, `b "" text/plain; charset=utf-8 45`})
	got = summary(Open("testdata/utf16.jsonl"))
	check(t, "JSONL in UTF-16", got, []string{`a "" text/plain; charset=utf-8 102`, `b "" text/plain; charset=utf-8 45`})
}

// wgetDocs is what testdata/wget.warc.gz gives: three 200 responses; the
// 404, requests, metadata and warcinfo are skipped (the wget_arguments
// resource is text/plain).
func wgetDocs(t *testing.T, ids map[string]string) []string {
	return []string{
		fmt.Sprintf(`%s "http://127.0.0.1:8765/llvm13/FAQ.html" text/html 42285`, ids["llvm13/FAQ"]),
		fmt.Sprintf(`%s "http://127.0.0.1:8765/llvm22/FAQ.html" text/html 42015`, ids["llvm22/FAQ"]),
		fmt.Sprintf(`%s "http://127.0.0.1:8765/llvm22/CodeReview.html" text/html 24194`, ids["llvm22/CodeReview"]),
	}
}

// records splits testdata/wget.warc.gz into its gzip members and maps
// short names to record IDs.
func records(t *testing.T) (members [][]byte, ids map[string]string) {
	data, err := os.ReadFile("testdata/wget.warc.gz")
	if err != nil {
		t.Fatal(err)
	}
	r, err := warc.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	ids = map[string]string{}
	var offs []int64
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, rec.Offset)
		if rec.Type == "response" || rec.Type == "resource" {
			u := strings.TrimSuffix(rec.TargetURI, ".html")
			u = strings.TrimSuffix(u, ".txt")
			ids[u[strings.LastIndex(u[:strings.LastIndex(u, "/")], "/")+1:]] = rec.RecordID
			ids[u[strings.LastIndex(u, "/")+1:]] = rec.RecordID
		}
	}
	offs = append(offs, int64(len(data)))
	for i := range len(offs) - 1 {
		members = append(members, data[offs[i]:offs[i+1]])
	}
	return members, ids
}

func TestWARC(t *testing.T) {
	members, ids := records(t)
	data := bytes.Join(members, nil)
	check(t, "WARC", summary(WARC(bytes.NewReader(data))), wgetDocs(t, ids))

	// Damage: a truncated member after the first response, garbage after
	// the second, and a response whose gzip payload is broken.
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	block := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\nnot gzip at all"
	fmt.Fprintf(zw, "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:badgzip>\r\nContent-Type: application/http;msgtype=response\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n", len(block), block)
	zw.Close()
	var damaged bytes.Buffer
	for i, m := range members {
		damaged.Write(m)
		switch i {
		case 2:
			damaged.Write(members[4][:len(members[4])/2])
		case 4:
			damaged.WriteString("garbage between records\n")
		case 6:
			damaged.Write(zb.Bytes())
		}
	}
	off2, off4, off6 := len(bytes.Join(members[:3], nil)), len(bytes.Join(members[:5], nil))+len(members[4])/2, len(bytes.Join(members[:7], nil))+len(members[4])/2+len("garbage between records\n")
	want := wgetDocs(t, ids)
	want = []string{
		want[0],
		fmt.Sprintf("error: corpus: warc: truncated record at offset %d (record %s): block has 16384 of 42203 bytes: unexpected EOF", off2, ids["llvm22/FAQ"]),
		want[1],
		fmt.Sprintf("error: corpus: warc: malformed record at offset %d: 24 bytes that are not a record skipped", off4),
		want[2],
		fmt.Sprintf("error: corpus: offset %d: record <urn:uuid:badgzip>: warc: malformed record: gzip body: gzip: invalid header", off6),
	}
	got := summary(WARC(bytes.NewReader(damaged.Bytes())))
	if len(got) != len(want) {
		check(t, "damaged WARC", got, want)
		return
	}
	// The cut member runs into the next one, whose bytes flate reads as
	// corrupt data or as the end of input: either way the record is
	// reported and the next one read.
	if !strings.Contains(got[1], fmt.Sprintf(" record at offset %d (record %s): block has ", off2, ids["llvm22/FAQ"])) {
		t.Errorf("truncated record: got %q", got[1])
	}
	got[1] = want[1]
	check(t, "damaged WARC", got, want)
}

func TestWARCAccept(t *testing.T) {
	data, _ := os.ReadFile("testdata/wget.warc.gz")
	skips := map[string]int{}
	o := Options{
		Accept: func(mt string) bool { return mt == "text/plain" },
		OnSkip: func(s Skip) { skips[s.Kind]++ },
	}
	got := summary(o.WARC(bytes.NewReader(data)))
	// wget's arguments and log are text/plain resource records, but of
	// metadata: URIs: no page.
	want := map[string]int{"warcinfo": 1, "request": 4, "media text/html": 3, "response 404": 1, "metadata": 1, "resource metadata:": 1}
	if len(got) != 0 || fmt.Sprint(skips) != fmt.Sprint(want) {
		t.Errorf("WARC accepting text/plain only = %q, skipped %v, want nothing and skipped %v", got, skips, want)
	}
	o = Options{MaxFileSize: 30000}
	n := 0
	for _, err := range o.WARC(bytes.NewReader(data)) {
		if errors.Is(err, ErrTooLarge) {
			n++
		}
	}
	if n != 2 {
		t.Errorf("WARC with a 30000 byte cap: %d ErrTooLarge, want 2", n)
	}
}

func TestWARCReadError(t *testing.T) {
	data, _ := os.ReadFile("testdata/wget.warc.gz")
	members, _ := records(t)
	in := io.MultiReader(bytes.NewReader(data[:len(bytes.Join(members[:3], nil))]), errReader{})
	got := summary(WARC(in))
	if len(got) != 2 || got[1] != "error: corpus: warc: disk on fire" {
		t.Errorf("WARC with a read error = %q", got)
	}
}

func TestOpen(t *testing.T) {
	_, ids := records(t)
	tmp := t.TempDir()
	gzPath := filepath.Join(tmp, "docs.ndjson.gz")
	plain, _ := os.ReadFile("testdata/fields.ndjson")
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(plain)
	zw.Close()
	os.WriteFile(gzPath, zb.Bytes(), 0o644)
	os.WriteFile(filepath.Join(tmp, "notes.pdf"), []byte("%PDF"), 0o644)

	tests := []struct {
		path string
		o    Options
		want []string
	}{
		{"testdata/dir", Options{}, summary(Dir("testdata/dir"))},
		{"testdata/wget.warc.gz", Options{}, wgetDocs(t, ids)},
		{"testdata/pages.jsonl.gz", Options{}, func() []string {
			f, _ := os.Open("testdata/pages.jsonl")
			defer f.Close()
			var out []string
			for _, s := range summary(JSONL(f, JSONLFields{})) {
				out = append(out, strings.Replace(s, "corpus: line", "corpus: testdata/pages.jsonl.gz: line", 1))
			}
			return out
		}()},
		{gzPath, Options{Fields: JSONLFields{ID: []string{"doc"}, URL: []string{"link"}, HTML: []string{"content"}, Text: []string{"plain"}}}, []string{
			`a "https://example.org/a" text/html; charset=utf-8 12`, `b "" text/plain; charset=utf-8 9`,
		}},
		{"testdata/dir/CommandGuide/llvm-link.html", Options{}, []string{`testdata/dir/CommandGuide/llvm-link.html "" text/html 10631`}},
		{"testdata/dir/Apache-2.0.txt", Options{MaxFileSize: 100}, []string{"error: corpus: testdata/dir/Apache-2.0.txt: corpus: too large: file of 11358 bytes over the 100 byte cap"}},
		{filepath.Join(tmp, "notes.pdf"), Options{}, []string{"error: corpus: " + filepath.ToSlash(filepath.Join(tmp, "notes.pdf")) + ": unknown input kind (want a directory, .jsonl, .ndjson or .json, each also .gz, .zst or .bz2, .parquet, .warc or .warc.gz, .wet.gz, .html or .txt)"}},
		{"testdata/nonexistent.warc", Options{}, []string{"error: corpus: testdata/nonexistent.warc: stat testdata/nonexistent.warc: no such file or directory"}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			check(t, fmt.Sprintf("Open(%q)", tt.path), summary(tt.o.Open(tt.path)), tt.want)
		})
	}
}

func BenchmarkWARC(b *testing.B) {
	data, err := os.ReadFile("testdata/wget.warc.gz")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for _, err := range WARC(bytes.NewReader(data)) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkJSONL(b *testing.B) {
	data, err := os.ReadFile("testdata/pages.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for range JSONL(bytes.NewReader(data), JSONLFields{}) {
		}
	}
}

// TestWARCLyingLength: in wget's file, uncompressed, the first response's
// Content-Length is made 700 bytes too large, 2 GB, or 100 bytes too
// small: the two other pages are read, and the damaged record is one
// error naming it, not a page.
func TestWARCLyingLength(t *testing.T) {
	members, ids := records(t)
	var plain [][]byte
	for _, m := range members {
		zr, err := gzip.NewReader(bytes.NewReader(m))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		plain = append(plain, b)
	}
	cl := regexp.MustCompile(`Content-Length: (\d+)\r\n`)
	n, _ := strconv.Atoi(string(cl.FindSubmatch(plain[2])[1]))
	for _, lie := range []int{n + 700, 2_000_000_000, n - 100} {
		recs := slices.Clone(plain)
		recs[2] = cl.ReplaceAll(plain[2], fmt.Appendf(nil, "Content-Length: %d\r\n", lie))
		got := summary(WARC(bytes.NewReader(bytes.Join(recs, nil))))
		want := wgetDocs(t, ids)[1:]
		if len(got) != 3 || !slices.Equal(got[1:], want) || !strings.Contains(got[0], "record "+ids["llvm13/FAQ"]) ||
			!strings.Contains(got[0], "warc: malformed record") {
			t.Errorf("Content-Length %d (true %d): got %q, want one error naming %s then %q", lie, n, got, ids["llvm13/FAQ"], want)
		}
	}
}

// TestWARCContentTypes reads a wget response record (testdata/wget.warc.gz)
// under the Content-Type spellings of real WARC writers and servers, on
// the record and on its HTTP payload: a payload type with no
// type/subtype is sniffed from the body, as browsers sniff it, instead of
// skipping the page.
func TestWARCContentTypes(t *testing.T) {
	members, _ := records(t)
	var rec *warc.Record
	var block []byte
	for _, m := range members {
		r, err := warc.NewReader(bytes.NewReader(m))
		if err != nil {
			t.Fatal(err)
		}
		rec, err = r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if rec.Type == "response" && strings.HasSuffix(rec.TargetURI, "/llvm22/CodeReview.html") {
			block, err = io.ReadAll(rec.Content)
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	head, body, ok := bytes.Cut(block, []byte("\r\n\r\n"))
	if !ok || !bytes.Contains(head, []byte("\r\nContent-type: text/html\r\n")) {
		t.Fatalf("no CodeReview.html response with Content-type: text/html in testdata/wget.warc.gz")
	}
	tests := []struct {
		record, payload string
		want            string // the document's Content-Type, or "skip KIND"
	}{
		{"application/http;msgtype=response", "text/html", "text/html"},                                // wget
		{"application/http; msgtype=response", "text/html; charset=utf-8", "text/html; charset=utf-8"}, // pywb
		{"APPLICATION/HTTP; MSGTYPE=RESPONSE", "TEXT/HTML;CHARSET=UTF-8", "TEXT/HTML;CHARSET=UTF-8"},   // Tomcat's spelling
		{"application/http;msgtype=response;;", "text/html;charset=Shift_JIS;foo", "text/html;charset=Shift_JIS;foo"},
		{"application/http; msgtype=response; msgtype=response2", "text/html", "text/html"}, // mime.ParseMediaType refuses
		{"application/http;msgtype=response", "text/html, text/html", "text/html"},          // no type/subtype: sniffed
		{"application/http;msgtype=response", "text", "text/html"},
		{"application/http;msgtype=response", "image/png", "skip media image/png"},
		{"message/http", "text/html", "skip response no http"},
		{"application/http", "text/html", "text/html"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		blk := "HTTP/1.1 200 OK\r\nContent-Type: " + tt.payload + "\r\n\r\n" + string(body)
		fmt.Fprintf(&b, "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:ct>\r\nWARC-Target-URI: http://127.0.0.1:8765/p.html\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n", tt.record, len(blk), blk)
		var got []string
		o := Options{OnSkip: func(s Skip) { got = append(got, "skip "+s.Kind) }}
		for doc, err := range o.WARC(&b) {
			if err != nil {
				got = append(got, "error: "+err.Error())
				continue
			}
			got = append(got, doc.ContentType)
			if len(doc.Body) != len(body) {
				t.Errorf("record %q, payload %q: body of %d bytes, want %d", tt.record, tt.payload, len(doc.Body), len(body))
			}
		}
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("record %q, payload %q: %q, want %q", tt.record, tt.payload, got, tt.want)
		}
	}
}
