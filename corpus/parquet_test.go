package corpus

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParquet reads testdata/pages.parquet, which DuckDB 1.5.6 wrote
// (zstd, row groups of 2; see testdata/README.md), with the default field
// names: content holds HTML documents and a plain text.
func TestParquet(t *testing.T) {
	got := summary(Open("testdata/pages.parquet"))
	want := []string{
		`1 "http://example.org/13/llvm-link.html" text/html; charset=utf-8 10631`,
		`2 "https://example.org/16/llvm-link.html" text/html; charset=utf-8 10629`,
		`3 "https://example.org/22/llvm-link.html" text/html; charset=utf-8 10628`,
		`4 "https://example.org/LICENSE-2.0.txt" text/plain; charset=utf-8 2000`,
	}
	check(t, "Open(pages.parquet)", got, want)

	var pops []float64
	for doc, err := range Open("testdata/pages.parquet") {
		if err == nil {
			pops = append(pops, doc.Popularity)
		}
	}
	if len(pops) != 4 || pops[0] != 2 || pops[1] != 0 || pops[3] != 0.5 {
		t.Errorf("popularity = %v, want [2 0 2 0.5] (null is 0)", pops)
	}

	// Other names: the dump column as the text, the url column as the ID.
	o := Options{Fields: JSONLFields{ID: []string{"url"}, Text: []string{"dump"}, HTML: []string{"none"}}}
	got = summary(o.Open("testdata/pages.parquet"))
	if len(got) != 4 || !strings.HasPrefix(got[0], `http://example.org/13/llvm-link.html "http://example.org/13/llvm-link.html" text/plain; charset=utf-8 7`) {
		t.Errorf("Open with other field names = %q", got)
	}
	o = Options{Fields: JSONLFields{Text: []string{"missing"}, HTML: []string{"none"}}}
	got = summary(o.Open("testdata/pages.parquet"))
	if len(got) != 1 || got[0] != "error: corpus: testdata/pages.parquet: parquet: no column named none, missing" {
		t.Errorf("Open with no text column = %q", got)
	}

	// A damaged file: one error, no panic.
	data, err := os.ReadFile("testdata/pages.parquet")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{data[:len(data)/2], append(bytes.Repeat([]byte{0}, 100), data[100:]...), []byte("PAR1")} {
		n := 0
		for _, err := range (Options{}).Parquet(bytes.NewReader(bad), int64(len(bad)), JSONLFields{}) {
			if err == nil {
				continue
			}
			n++
		}
		if n == 0 {
			t.Errorf("damaged Parquet file of %d bytes: no error", len(bad))
		}
	}
}

// TestParquetUnsignedID reads testdata/uint64.parquet, which pandas 3.1.1
// wrote from a uint64 id column (hashes as IDs): an ID past 2^63 is that
// number, not a negative one.
func TestParquetUnsignedID(t *testing.T) {
	got := summary(Open("testdata/uint64.parquet"))
	check(t, "Open(uint64.parquet)", got, []string{
		`18446744073709551615 "" text/plain; charset=utf-8 55`,
		`9223372036854775808 "" text/plain; charset=utf-8 18`,
		`1 "" text/plain; charset=utf-8 11`,
	})
}

// TestParquetChecksum reads testdata/pages-crc.parquet, which pyarrow
// wrote with page checksums (see testdata/README.md), and a copy with one
// byte of a page's text changed: the damaged row group is one error
// naming the file and the rows it held and wrapping ErrCorrupt, and the
// other row group is read.
func TestParquetChecksum(t *testing.T) {
	data, err := os.ReadFile("testdata/pages-crc.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(Open("testdata/pages-crc.parquet")); len(got) != 3 || strings.HasPrefix(got[0], "error") {
		t.Fatalf("Open(pages-crc.parquet) = %q, want 3 documents", got)
	}
	i := bytes.Index(data, []byte("LLVM bitcode linker"))
	if i < 0 {
		t.Fatal("no page text found")
	}
	bad := bytes.Clone(data)
	bad[i] = 'X' // "XLVM": still text, only the checksum tells
	path := filepath.Join(t.TempDir(), "damaged.parquet")
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	var docs []string
	var errs []error
	for doc, err := range Open(path) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		docs = append(docs, doc.ID)
	}
	if len(errs) != 1 || !errors.Is(errs[0], ErrCorrupt) || !strings.Contains(errs[0].Error(), path) || !strings.Contains(errs[0].Error(), "rows 1 to 2 lost") {
		t.Errorf("errors %v, want one wrapping ErrCorrupt, naming %s and the rows lost", errs, path)
	}
	if len(docs) != 1 {
		t.Errorf("documents %q, want the one of the undamaged row group", docs)
	}
}
