package warc

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// rec is one record for the test helpers.
type rec struct {
	typ, uri, id string
	block        string
}

// writeRecord writes one WARC/1.0 record to w as wget writes it.
func writeRecord(w io.Writer, r rec) {
	fmt.Fprintf(w, "WARC/1.0\r\nWARC-Type: %s\r\nWARC-Target-URI: <%s>\r\nWARC-Date: 2024-05-01T10:00:00Z\r\nWARC-Record-ID: %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n",
		r.typ, r.uri, r.id, len(r.block), r.block)
}

// plainWARC returns records as a plain WARC file.
func plainWARC(recs ...rec) []byte {
	var b bytes.Buffer
	for _, r := range recs {
		writeRecord(&b, r)
	}
	return b.Bytes()
}

// gzipMember returns data as one gzip member.
func gzipMember(data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

// memberWARC returns records gzip-compressed one member per record.
func memberWARC(recs ...rec) []byte {
	var b bytes.Buffer
	for _, r := range recs {
		b.Write(gzipMember(plainWARC(r)))
	}
	return b.Bytes()
}

func testRecs(n int) []rec {
	recs := make([]rec, n)
	for i := range recs {
		recs[i] = rec{"resource", fmt.Sprintf("http://example.com/%d", i), fmt.Sprintf("<urn:uuid:%08d>", i),
			strings.Repeat(fmt.Sprintf("page %d text. ", i), i%50+1)}
	}
	return recs
}

// result is what reading a whole file gave: record IDs and block texts,
// "!" plus the sentinel name for errors.
type result []string

func readAll(t testing.TB, data []byte, readContent bool) result {
	t.Helper()
	return readAllFrom(t, bytes.NewReader(data), len(data), readContent)
}

// readAllFrom is readAll of the n bytes that in yields.
func readAllFrom(t testing.TB, in io.Reader, n int, readContent bool) result {
	t.Helper()
	data := make([]byte, n) // for the progress bound only
	r, err := NewReader(in)
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	var res result
	for i := 0; ; i++ {
		if i > len(data)+10 {
			t.Fatalf("Next called %d times on %d bytes: no progress", i, len(data))
		}
		rec, err := r.Next()
		if err == io.EOF {
			return res
		}
		if err != nil {
			res = append(res, errName(t, err))
			continue
		}
		if !readContent {
			res = append(res, rec.RecordID)
			continue
		}
		b, err := io.ReadAll(rec.Content)
		if err != nil {
			res = append(res, rec.RecordID+" "+errName(t, err))
			continue
		}
		res = append(res, rec.RecordID+" "+string(b))
	}
}

func errName(t testing.TB, err error) string {
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is no *warc.Error", err)
	}
	switch {
	case errors.Is(err, ErrTruncated):
		return "!truncated"
	case errors.Is(err, ErrMalformed):
		return "!malformed"
	}
	t.Fatalf("error %v wraps no sentinel", err)
	return ""
}

func ids(recs []rec, content bool) result {
	var res result
	for _, r := range recs {
		if content {
			res = append(res, r.id+" "+r.block)
		} else {
			res = append(res, r.id)
		}
	}
	return res
}

func TestFraming(t *testing.T) {
	recs := testRecs(3)
	plain := plainWARC(recs...)
	garbage := []byte("this is not a record\r\nnor this\r\n")
	bad := func(block string, cl int) []byte { // a record whose Content-Length is cl
		return fmt.Appendf(nil, "WARC/1.0\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:bad>\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n", cl, block)
	}
	noCL := []byte("WARC/1.0\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:nocl>\r\n\r\nsome block\r\n\r\n")
	badVersion := []byte("WARC/2.0\r\nWARC-Type: resource\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n")
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	m := func(b []byte) []byte { return gzipMember(b) }
	r0, r1, r2 := plainWARC(recs[0]), plainWARC(recs[1]), plainWARC(recs[2])
	corrupt := m(r1)
	corrupt = append([]byte(nil), corrupt...)
	for i := 12; i < len(corrupt)-8; i += 7 {
		corrupt[i] ^= 0x5a
	}

	tests := []struct {
		name string
		data []byte
		want result
	}{
		{"plain", plain, ids(recs, true)},
		{"gzip per record", memberWARC(recs...), ids(recs, true)},
		{"whole-file gzip", m(plain), ids(recs, true)},
		{"empty", nil, nil},
		{"blank lines only", []byte("\r\n\r\n\n"), nil},
		{"plain truncated last block", plain[:len(plain)-30], append(ids(recs[:2], true), recs[2].id+" !truncated")},
		{"plain truncated last header", plain[:len(r0)+len(r1)+40], append(ids(recs[:2], true), "!truncated")},
		{"gzip truncated last member", join(m(r0), m(r1), m(r2)[:30]), append(ids(recs[:2], true), "!truncated")},
		{"gzip member with short block", join(m(r0), m(bad("abc", 10)), m(r2)), result{recs[0].id + " " + recs[0].block, "<urn:uuid:bad> !truncated", recs[2].id + " " + recs[2].block}},
		{"gzip member with header cut", join(m(r0), m(r1[:60]), m(r2)), result{recs[0].id + " " + recs[0].block, "!truncated", recs[2].id + " " + recs[2].block}},
		{"plain garbage between", join(r0, garbage, r1), result{recs[0].id + " " + recs[0].block, "!malformed", recs[1].id + " " + recs[1].block}},
		{"plain garbage at end", join(r0, garbage), result{recs[0].id + " " + recs[0].block, "!malformed"}},
		{"gzip garbage between members", join(m(r0), garbage, m(r1)), result{recs[0].id + " " + recs[0].block, "!malformed", recs[1].id + " " + recs[1].block}},
		{"gzip garbage in member", join(m(r0), m(join(garbage, r1))), result{recs[0].id + " " + recs[0].block, "!malformed", recs[1].id + " " + recs[1].block}},
		{"corrupt gzip member", join(m(r0), corrupt, m(r2)), result{recs[0].id + " " + recs[0].block, "!malformed", recs[2].id + " " + recs[2].block}},
		{"no Content-Length", join(r0, noCL, r1), result{recs[0].id + " " + recs[0].block, "!malformed", recs[1].id + " " + recs[1].block}},
		{"no Content-Length gzip", join(m(r0), m(noCL), m(r1)), result{recs[0].id + " " + recs[0].block, "!malformed", recs[1].id + " " + recs[1].block}},
		{"bad version", join(r0, badVersion, r1), result{recs[0].id + " " + recs[0].block, "!malformed", recs[1].id + " " + recs[1].block}},
		{"bad Content-Length", join(r0, bad("abc", -3), r1), result{recs[0].id + " " + recs[0].block, "!malformed", recs[1].id + " " + recs[1].block}},
		{"two records in a member", join(m(join(r0, r1)), m(r2)), ids(recs, true)},
		{"zero-length block", plainWARC(rec{"revisit", "http://x/", "<urn:uuid:z>", ""}), result{"<urn:uuid:z> "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, content := range []bool{true, false} {
				got := readAll(t, tt.data, content)
				want := tt.want
				if !content {
					want = nil
					for _, w := range tt.want {
						id, rest, _ := strings.Cut(w, " ")
						if strings.HasPrefix(id, "!") || rest == "!truncated" && id != "" {
							// An unread truncated block is reported by the next Next.
							if rest == "!truncated" {
								want = append(want, id, "!truncated")
								continue
							}
						}
						want = append(want, id)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("read (content %v) = %.300q, want %.300q", content, got, want)
				}
			}
		})
	}
}

func TestThousandRecords(t *testing.T) {
	recs := testRecs(1000)
	for name, data := range map[string][]byte{"plain": plainWARC(recs...), "gzip": memberWARC(recs...)} {
		t.Run(name, func(t *testing.T) {
			got := readAll(t, data, name == "plain")
			want := ids(recs, name == "plain")
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("read %d records, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
		})
	}
}

func firstDiff(a, b result) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// wgetRecord is what testdata/wget.warc.gz holds, in order.
var wgetRecords = []struct{ typ, uri string }{
	{"warcinfo", ""},
	{"request", "http://127.0.0.1:8765/llvm13/FAQ.html"},
	{"response", "http://127.0.0.1:8765/llvm13/FAQ.html"},
	{"request", "http://127.0.0.1:8765/llvm22/FAQ.html"},
	{"response", "http://127.0.0.1:8765/llvm22/FAQ.html"},
	{"request", "http://127.0.0.1:8765/llvm22/CodeReview.html"},
	{"response", "http://127.0.0.1:8765/llvm22/CodeReview.html"},
	{"request", "http://127.0.0.1:8765/missing.html"},
	{"response", "http://127.0.0.1:8765/missing.html"},
	{"metadata", "metadata://gnu.org/software/wget/warc/MANIFEST.txt"},
	{"resource", "metadata://gnu.org/software/wget/warc/wget_arguments.txt"},
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gunzip(t testing.TB, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWget reads a file that wget wrote, in its three forms, and checks
// that each record's Offset leads back to it.
func TestWget(t *testing.T) {
	gz := readFile(t, "testdata/wget.warc.gz")
	plain := gunzip(t, gz)
	for _, f := range []struct {
		name string
		data []byte
	}{{"gzip per record", gz}, {"plain", plain}, {"whole-file gzip", gzipMember(plain)}} {
		t.Run(f.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(f.data))
			if err != nil {
				t.Fatal(err)
			}
			var n int
			for ; ; n++ {
				rec, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("record %d: %v", n, err)
				}
				if n >= len(wgetRecords) {
					t.Fatalf("more than %d records", len(wgetRecords))
				}
				if w := wgetRecords[n]; rec.Type != w.typ || rec.TargetURI != w.uri {
					t.Errorf("record %d = %q %q, want %q %q", n, rec.Type, rec.TargetURI, w.typ, w.uri)
				}
				if rec.Version != "1.0" || rec.Date.Year() != 2026 || !strings.HasPrefix(rec.RecordID, "<urn:uuid:") {
					t.Errorf("record %d: version %q date %v id %q", n, rec.Version, rec.Date, rec.RecordID)
				}
				if f.name == "whole-file gzip" {
					if rec.Offset != 0 {
						t.Errorf("record %d: Offset = %d, want 0 (one member)", n, rec.Offset)
					}
					continue
				}
				// Reading from Offset gives this record first.
				r2, err := NewReader(bytes.NewReader(f.data[rec.Offset:]))
				if err != nil {
					t.Fatal(err)
				}
				rec2, err := r2.Next()
				if err != nil || rec2.RecordID != rec.RecordID {
					t.Errorf("record %d at Offset %d: got %v, %v", n, rec.Offset, rec2, err)
				}
				if rec.Type == "response" && n == 2 {
					status, h, body, err := ParseHTTPResponse(rec.Content)
					if err != nil {
						t.Fatal(err)
					}
					b, err := io.ReadAll(body)
					if err != nil {
						t.Fatal(err)
					}
					if status != 200 || h.Get("Content-Type") != "text/html" || len(b) != 42285 || !bytes.Contains(b, []byte("Frequently Asked Questions")) {
						t.Errorf("response: status %d, type %q, %d body bytes", status, h.Get("Content-Type"), len(b))
					}
				}
			}
			if n != len(wgetRecords) {
				t.Errorf("read %d records, want %d", n, len(wgetRecords))
			}
		})
	}
}

// TestSpec checks records written after the examples of the WARC 1.1
// standard, field by field.
func TestSpec(t *testing.T) {
	r, err := NewReader(bytes.NewReader(readFile(t, "testdata/spec.warc")))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		typ, uri, id, ctype string
		date                time.Time
		length              int64
	}{
		{"warcinfo", "", "<urn:uuid:d7ae5c10-e6b3-4d27-967d-34780c58ba39>", "application/warc-fields", time.Date(2016, 9, 19, 17, 20, 14, 0, time.UTC), 200},
		{"request", "http://www.archive.org/images/logoc.jpg", "<urn:uuid:4885803b-eebd-4b27-a090-144450c11594>", "application/http;msgtype=request", time.Date(2016, 9, 19, 17, 20, 24, 0, time.UTC), 114},
		{"response", "http://www.archive.org/index.html", "<urn:uuid:92283950-ef2f-4d72-b224-f54c6ec90bb0>", "application/http;msgtype=response", time.Date(2016, 9, 19, 17, 20, 24, 123456000, time.UTC), 215},
		{"resource", "file://var/www/htdoc/index.txt", "<urn:uuid:b8e5b1a5-2d24-4c36-a6a2-f1b5ff6bd5b1>", "text/plain", time.Date(2016, 9, 19, 17, 20, 24, 0, time.UTC), 36},
		{"metadata", "http://www.archive.org/images/logoc.jpg", "<urn:uuid:16da6da0-bcdc-49c3-927e-57494593b943>", "application/warc-fields", time.Date(2016, 9, 19, 17, 20, 24, 0, time.UTC), 65},
		{"revisit", "http://www.archive.org/images/logoc.jpg", "<urn:uuid:16da6da0-bcdc-49c3-927e-57494593bbbb>", "message/http", time.Date(2016, 9, 19, 17, 20, 24, 0, time.UTC), 0},
	}
	for i, w := range want {
		rec, err := r.Next()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if rec.Version != "1.1" || rec.Type != w.typ || rec.TargetURI != w.uri || rec.RecordID != w.id || rec.ContentType != w.ctype || !rec.Date.Equal(w.date) || rec.ContentLength != w.length {
			t.Errorf("record %d = %s %q %q %q %q %v %d, want 1.1 %q %q %q %q %v %d", i, rec.Version, rec.Type, rec.TargetURI, rec.RecordID, rec.ContentType, rec.Date, rec.ContentLength,
				w.typ, w.uri, w.id, w.ctype, w.date, w.length)
		}
		if i == 4 {
			if got := rec.Header.Get("WARC-Concurrent-To"); got != "<urn:uuid:92283950-ef2f-4d72-b224-f54c6ec90bb0>" {
				t.Errorf("WARC-Concurrent-To = %q", got)
			}
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the last record: %v, want io.EOF", err)
	}
}

func TestHeaderFields(t *testing.T) {
	data := "WARC/1.1\r\nWARC-Type: resource\r\nWARC-Target-URI: http://example.com/a\r\nX-Folded: one\r\n  two\r\nwarc-record-id:<urn:uuid:lc>\r\nContent-Length: 2\r\n\r\nhi\r\n\r\n"
	r, _ := NewReader(strings.NewReader(data))
	rec, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ key, want string }{
		{"X-Folded", "one two"}, {"WARC-Record-ID", "<urn:uuid:lc>"}, {"WARC-Target-URI", "http://example.com/a"},
	} {
		if got := rec.Header.Get(c.key); got != c.want {
			t.Errorf("Header.Get(%q) = %q, want %q", c.key, got, c.want)
		}
	}
}

func TestHeaderCap(t *testing.T) {
	long := "WARC/1.0\r\nWARC-Type: resource\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", 1100) + "Content-Length: 0\r\n\r\n\r\n\r\n"
	longLine := "WARC/1.0\r\nX-Long: " + strings.Repeat("p", 70<<10) + "\r\nContent-Length: 0\r\n\r\n\r\n\r\n"
	next := string(plainWARC(testRecs(1)...))
	for name, data := range map[string]string{"header": long, "line": longLine} {
		got := readAll(t, []byte(data+next), false)
		if want := (result{"!malformed", "<urn:uuid:00000000>"}); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s over the cap: read %q, want %q", name, got, want)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	recs := testRecs(2)
	data := plainWARC(recs...)
	r, _ := NewReader(bytes.NewReader(data[:len(data)-20]))
	r.Next()
	r.Next()
	_, err := r.Next()
	want := fmt.Sprintf("warc: truncated record at offset %d (record <urn:uuid:00000001>): block has %d of %d bytes", len(plainWARC(recs[0])), len(recs[1].block)-16, len(recs[1].block))
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

type failReader struct{ n int }

func (f *failReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("disk on fire")
	}
	n := copy(p, bytes.Repeat([]byte("x"), min(len(p), f.n)))
	f.n -= n
	return n, nil
}

// TestInputError checks that an input failure is returned, and again.
func TestInputError(t *testing.T) {
	r, err := NewReader(io.MultiReader(bytes.NewReader(plainWARC(testRecs(1)...)), &failReader{n: 10}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		_, err := r.Next()
		if err == nil || errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "disk on fire") {
			t.Errorf("call %d: Next() = %v, want the input error", i, err)
		}
	}
}

// addSeeds adds the fuzz seeds: intact files in three compressions, the
// spec's records, a short block and a folded header line.
func addSeeds(f *testing.F) {
	recs := testRecs(3)
	f.Add(plainWARC(recs...))
	f.Add(memberWARC(recs...))
	f.Add(gzipMember(plainWARC(recs...)))
	f.Add(readFile(f, "testdata/spec.warc"))
	f.Add([]byte("WARC/1.0\r\nContent-Length: 5\r\n\r\nab"))
	f.Add([]byte("WARC/1.1\r\nA: b\r\n c\r\nContent-Length: 0\r\n\r\nWARC/1.0\r\n"))
}

func FuzzReader(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			// Every call consumes input, so len(data)+2 calls end it
			// (gzip data can expand, hence the factor).
			if i > 1100*len(data)+10 {
				t.Fatalf("no progress after %d calls", i)
			}
			rec, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTruncated) {
					t.Fatalf("Next: %v wraps no sentinel", err)
				}
				continue
			}
			if i%2 == 0 {
				n, err := io.Copy(io.Discard, rec.Content)
				if err == nil && n != rec.ContentLength {
					t.Fatalf("read %d block bytes, want %d", n, rec.ContentLength)
				}
			}
		}
	})
}

// drain reads every record of data and its block, as a benchmark does.
func drain(data []byte) {
	r, _ := NewReader(bytes.NewReader(data))
	for {
		rec, err := r.Next()
		if err != nil {
			return
		}
		io.Copy(io.Discard, rec.Content)
	}
}

func BenchmarkReader(b *testing.B) {
	gz := readFile(b, "testdata/wget.warc.gz")
	plain := gunzip(b, gz)
	for _, f := range []struct {
		name string
		data []byte
	}{{"plain", plain}, {"gzip", gz}} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(plain)))
			for b.Loop() {
				drain(f.data)
			}
		})
	}
}

// TestTruncatedMemberResync: a gzip member cut short runs into the next
// member, whose bytes the inflater eats before it fails; the reader finds
// that member again and reads every record after the cut, at its offset.
func TestTruncatedMemberResync(t *testing.T) {
	recs := testRecs(4)
	var data []byte
	var offsets []int64
	for i, r := range recs {
		m := memberWARC(r)
		if i == 1 {
			m = m[:len(m)/2]
		}
		offsets = append(offsets, int64(len(data)))
		data = append(data, m...)
	}
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		record, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			got = append(got, errName(t, err))
			continue
		}
		b, err := io.ReadAll(record.Content)
		id := record.RecordID
		if i := slices.IndexFunc(recs, func(r rec) bool { return r.id == id }); err != nil || i < 0 || string(b) != recs[i].block {
			t.Errorf("record %s: block of %d bytes, %v", id, len(b), err)
		}
		got = append(got, fmt.Sprintf("%s@%d", id, record.Offset))
	}
	want := []string{
		fmt.Sprintf("%s@%d", recs[0].id, offsets[0]),
		"!truncated",
		fmt.Sprintf("%s@%d", recs[2].id, offsets[2]),
		fmt.Sprintf("%s@%d", recs[3].id, offsets[3]),
	}
	if strings.Join(got, " ") != strings.Join(want, " ") && strings.Join(got, " ") != strings.Replace(strings.Join(want, " "), "!truncated", "!malformed", 1) {
		t.Errorf("read %q, want %q", got, want)
	}
}

// eachRecord calls f with each record of the undamaged WARC data, whose
// Content f may read.
func eachRecord(t testing.TB, data []byte, f func(*Record)) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		f(rec)
	}
}

// TestLyingContentLength reads wget's WARC file with the Content-Length of
// its first response record made false: 700 bytes too large (the block
// runs into the next record), 2 GB (it runs to the end of the file), 100
// bytes too small (the block ends inside the record). In plain,
// whole-file gzip and per-record gzip form, every other record is read
// whole, and the damaged one gives exactly one error.
func TestLyingContentLength(t *testing.T) {
	plain := gunzip(t, readFile(t, "testdata/wget.warc.gz"))
	// The records' bytes, split at their offsets.
	var starts []int
	eachRecord(t, plain, func(rec *Record) { starts = append(starts, int(rec.Offset)) })
	starts = append(starts, len(plain))
	want := map[string]string{}
	for _, line := range readAll(t, plain, true) {
		id, block, _ := strings.Cut(line, " ")
		want[id] = block
	}
	const victim = 2 // the first response
	rec := plain[starts[victim]:starts[victim+1]]
	cl := regexp.MustCompile(`Content-Length: (\d+)\r\n`)
	n, _ := strconv.Atoi(string(cl.FindSubmatch(rec)[1]))
	victimID := string(regexp.MustCompile(`WARC-Record-ID: (\S+)\r\n`).FindSubmatch(rec)[1])
	for _, lie := range []struct {
		name string
		cl   int
	}{{"700 too large", n + 700}, {"2 GB", 2_000_000_000}, {"100 too small", n - 100}} {
		bad := cl.ReplaceAll(rec, fmt.Appendf(nil, "Content-Length: %d\r\n", lie.cl))
		records := [][]byte{}
		for i := range len(starts) - 1 {
			if i == victim {
				records = append(records, bad)
			} else {
				records = append(records, plain[starts[i]:starts[i+1]])
			}
		}
		var perRecord []byte
		for _, b := range records {
			perRecord = append(perRecord, gzipMember(b)...)
		}
		for _, form := range []struct {
			name    string
			data    []byte
			oneByte bool // read one byte a call: version lines split across reads
		}{{"plain", bytes.Join(records, nil), false}, {"plain one byte a read", bytes.Join(records, nil), true},
			{"whole-file gzip", gzipMember(bytes.Join(records, nil)), false}, {"gzip per record", perRecord, false}} {
			t.Run(lie.name+"/"+form.name, func(t *testing.T) {
				var in io.Reader = bytes.NewReader(form.data)
				if form.oneByte {
					in = iotest.OneByteReader(in)
				}
				got := readAllFrom(t, in, len(form.data), true)
				var errs []string
				read := 0
				for _, line := range got {
					id, block, _ := strings.Cut(line, " ")
					switch {
					case strings.HasPrefix(id, "!") || strings.HasPrefix(block, "!"):
						errs = append(errs, line)
					case id == victimID:
						t.Errorf("the damaged record was read as whole (%d bytes)", len(block))
					case block != want[id]:
						t.Errorf("record %s: %d bytes, want %d", id, len(block), len(want[id]))
					default:
						read++
					}
				}
				if read != len(want)-1 {
					t.Errorf("%d of the %d other records read whole; got %.200q", read, len(want)-1, got)
				}
				if len(errs) != 1 {
					t.Errorf("errors %q, want one for the damaged record", errs)
				}
			})
		}
	}
}
