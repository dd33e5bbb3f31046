package warc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/nlnwa/gowarc"
)

// This file measures github.com/nlnwa/gowarc v1.6.0, the maintained Go WARC
// library, against this package on the same inputs: what each recovers
// from damaged files, and (BenchmarkCompareGowarc) how fast each reads.
// The package keeps its own reader because it recovers more records from
// damaged input and reads faster; see doc.go.

// errSpin is the panic of a spinReader.
var errSpin = errors.New("reader called 100000 times after EOF")

// spinReader reads data, then panics with errSpin when its reader goes on
// calling Read long after EOF: a parser that makes no progress.
type spinReader struct {
	r     io.Reader
	atEOF int
}

func (s *spinReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err == io.EOF {
		if s.atEOF++; s.atEOF > 100000 {
			panic(errSpin)
		}
	}
	return n, err
}

// gowarcOptions are gowarc's most lenient options that still end on
// damaged input: with its syntax error policy at ErrIgnore or ErrWarn (the
// default), its header parser loops for ever on a gzip member cut short
// (warcfieldsparser.go: the error of readLine is dropped and the loop
// reads again), growing its list of warnings under ErrWarn.
var gowarcOptions = []gowarc.WarcRecordOption{
	gowarc.WithSyntaxErrorPolicy(gowarc.ErrFail), gowarc.WithSpecViolationPolicy(gowarc.ErrIgnore),
	gowarc.WithUnknownRecordTypePolicy(gowarc.ErrIgnore), gowarc.WithBlockErrorPolicy(gowarc.ErrIgnore),
}

// gowarcIDs reads data with gowarc as leniently as it allows and returns
// the record IDs it yields (blocks read to the end), "!" for each error,
// and what went wrong past errors: "panic" or "no progress" (it kept
// reading at EOF for ever).
func gowarcIDs(data []byte) (res result, failure string) {
	defer func() {
		if v := recover(); v != nil {
			failure = "panic"
			if v == errSpin {
				failure = "no progress at EOF"
			}
		}
	}()
	r, err := gowarc.NewWarcFileReaderFromStream(&spinReader{r: bytes.NewReader(data)}, 0, gowarcOptions...)
	if err != nil {
		return result{"!" + err.Error()}, ""
	}
	for i := 0; i < len(data)+10; i++ {
		rec, _, _, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			res = append(res, "!")
			// gowarc does not resync after an error: a second error at
			// the same place ends the file.
			if len(res) > 1 && res[len(res)-2] == "!" {
				break
			}
			continue
		}
		b, err := rec.Block().RawBytes()
		if err == nil {
			_, err = io.Copy(io.Discard, b)
		}
		if err != nil {
			res = append(res, "<"+rec.RecordId()+"> !")
			continue
		}
		res = append(res, "<"+rec.RecordId()+">")
	}
	return res, ""
}

// oursIDs is the same for this package.
func oursIDs(t testing.TB, data []byte) (res result) {
	for _, s := range readAll(t, data, true) {
		id, rest, _ := strings.Cut(s, " ")
		if strings.HasPrefix(s, "!") {
			res = append(res, "!")
		} else if strings.HasSuffix(rest, "!truncated") || strings.HasSuffix(rest, "!malformed") {
			res = append(res, id+" !")
		} else {
			res = append(res, id)
		}
	}
	return res
}

func good(res result) int {
	n := 0
	for _, s := range res {
		if !strings.Contains(s, "!") {
			n++
		}
	}
	return n
}

// TestCompareGowarc reads the same files, intact and damaged, with both
// readers: on intact files both read every record, and on damaged ones
// this package recovers at least as many intact records as gowarc.
func TestCompareGowarc(t *testing.T) {
	gz := readFile(t, "testdata/wget.warc.gz")
	plain := gunzip(t, gz)
	recs := testRecs(6)
	members := make([][]byte, len(recs))
	for i, r := range recs {
		members[i] = memberWARC(r)
	}
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	noLength := strings.Replace(string(plainWARC(recs[1])), "Content-Length:", "X-Length:", 1)
	inputs := []struct {
		name   string
		data   []byte
		intact bool
	}{
		{"wget gzip per record", gz, true},
		{"wget plain", plain, true},
		{"wget whole-file gzip", gzipMember(plain), true},
		{"spec records", readFile(t, "testdata/spec.warc"), true},
		{"truncated member", join(members[0], members[1][:len(members[1])/2], members[2], members[3]), false},
		{"garbage between records", join(members[0], []byte("<html>not a record</html>\n"), members[1], members[2]), false},
		{"corrupt gzip member", join(members[0], append(append([]byte{}, members[1][:12]...), bytes.Repeat([]byte{0xff}, 40)...), members[2]), false},
		{"plain truncated block", join(plainWARC(recs[0]), plainWARC(recs[1])[:80], plainWARC(recs[2], recs[3])), false},
		{"missing Content-Length", join(plainWARC(recs[0]), []byte(noLength), plainWARC(recs[2])), false},
		// Found by go test -fuzz FuzzGowarcSeeds within a second: gowarc
		// panics (index out of range, unmarshaler.go:123).
		{"fuzz find WARC/\\n0", []byte("WARC/\n0"), false},
		{"fuzz find before records", join([]byte("WARC/\n0"), plainWARC(recs[0], recs[1])), false},
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-26s %6s %6s\n", "input", "ours", "gowarc")
	for _, in := range inputs {
		ours := oursIDs(t, in.data)
		theirs, failure := gowarcIDs(in.data)
		fmt.Fprintf(&table, "%-26s %6d %6d", in.name, good(ours), good(theirs))
		if failure != "" {
			table.WriteString(" (gowarc: " + failure + ")")
		}
		table.WriteString("\n")
		if in.intact && (good(ours) != len(ours) || fmt.Sprint(ours) != fmt.Sprint(theirs)) && !strings.Contains(in.name, "whole-file") {
			t.Errorf("%s: ours read %v, gowarc %v; want the same records, no error", in.name, ours, theirs)
		}
		if good(ours) < good(theirs) {
			t.Errorf("%s: ours recovered %d records %v, gowarc %d %v", in.name, good(ours), ours, good(theirs), theirs)
		}
	}
	t.Logf("intact records recovered:\n%s", table.String())
}

// FuzzGowarcSeeds runs the fuzz seeds of FuzzReader through gowarc to see
// whether it survives them (go test -run FuzzGowarcSeeds -v).
func FuzzGowarcSeeds(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, failure := gowarcIDs(data); failure != "" {
			t.Errorf("gowarc: %s on %q", failure, data)
		}
	})
}

// BenchmarkCompareGowarc reads a large WARC (the wget file's records
// repeated to 64 MiB) with both readers, blocks drained, per-record gzip,
// whole-file gzip and plain.
func BenchmarkCompareGowarc(b *testing.B) {
	gz := readFile(b, "testdata/wget.warc.gz")
	var big, bigPlain bytes.Buffer
	plain := gunzip(b, gz)
	for bigPlain.Len() < 64<<20 {
		big.Write(gz)
		bigPlain.Write(plain)
	}
	whole := gzipMember(bigPlain.Bytes())
	for _, f := range []struct {
		name string
		data []byte
	}{{"gzip-per-record", big.Bytes()}, {"gzip-whole-file", whole}, {"plain", bigPlain.Bytes()}} {
		b.Run("ours/"+f.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(bigPlain.Len()))
			for b.Loop() {
				drain(f.data)
			}
		})
		b.Run("gowarc/"+f.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(bigPlain.Len()))
			for b.Loop() {
				r, _ := gowarc.NewWarcFileReaderFromStream(bytes.NewReader(f.data), 0, gowarcOptions...)
				for {
					rec, _, _, err := r.Next()
					if err != nil {
						break
					}
					if blk, err := rec.Block().RawBytes(); err == nil {
						io.Copy(io.Discard, blk)
					}
				}
				r.Close()
			}
		})
	}
}
