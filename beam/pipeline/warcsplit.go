package pipeline

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/winnow-search/winnow/warc"
)

// WARC files in record ranges. A WARC file compressed record by record
// (each record its own gzip member, as the WARC standard recommends and
// wget, Heritrix and Common Crawl write it) can be read from any member
// that starts a record, and a plain WARC file from any record's version
// line. warcRanges cuts a file near every RangeBytes: from each cut it
// scans forward for a candidate start (the gzip magic 1f 8b 08, or
// "WARC/1." at a line start) and keeps the first that package warc reads
// as a whole record followed by another record or the end of the file, so
// a byte pattern inside compressed data or a record's payload is passed
// over. A file compressed whole (one member) has no candidate after its
// start and stays one range. The driver reads only around the cuts.

// isWARC reports a WARC file name (lower case).
func isWARC(name string) bool {
	return strings.HasSuffix(name, ".warc") || strings.HasSuffix(name, ".warc.gz")
}

// warcRanges returns the KindWARC shards of the file at path of size
// bytes, cut near every rangeBytes at record starts.
func warcRanges(path string, size, rangeBytes int64) ([]Shard, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz := strings.HasSuffix(strings.ToLower(path), ".gz")
	starts := []int64{0}
	for cut := rangeBytes; cut < size; {
		s, err := nextRecordStart(f, cut, size, gz)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if s < 0 {
			break
		}
		starts = append(starts, s)
		cut = max(s+1, starts[len(starts)-1]+rangeBytes)
	}
	out := make([]Shard, len(starts))
	for i, s := range starts {
		end := int64(math.MaxInt64)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		out[i] = Shard{Kind: KindWARC, Path: path, Start: s, End: end}
	}
	return out, nil
}

// nextRecordStart returns the first offset at or after from where a record
// starts (see validStart), or -1 if none does before size.
func nextRecordStart(f *os.File, from, size int64, gz bool) (int64, error) {
	pattern := []byte("\nWARC/1.")
	skip := 1 // the pattern's newline precedes the start
	if gz {
		pattern, skip = []byte{0x1f, 0x8b, 8}, 0
	}
	const window = 1 << 20
	buf := make([]byte, window+len(pattern))
	for pos := from - int64(skip); pos < size; pos += window {
		n, err := f.ReadAt(buf, pos)
		if err != nil && !errors.Is(err, io.EOF) {
			return -1, err
		}
		data := buf[:n]
		for i := 0; ; {
			k := bytes.Index(data[i:], pattern)
			if k < 0 || int64(i+k) >= window {
				break
			}
			at := pos + int64(i+k+skip)
			if at >= from && validStart(f, at) {
				return at, nil
			}
			i += k + 1
		}
	}
	return -1, nil
}

// validStart reports that package warc reads a whole record at offset at
// of f, followed by another record or the end of the file.
func validStart(f *os.File, at int64) bool {
	wr, err := warc.NewReader(bufio.NewReader(io.NewSectionReader(f, at, math.MaxInt64-at)))
	if err != nil {
		return false
	}
	rec, err := wr.Next()
	if err != nil || rec.Offset != 0 || !strings.HasPrefix(rec.Version, "1.") {
		return false
	}
	if _, err := io.Copy(io.Discard, rec.Content); err != nil {
		return false
	}
	_, err = wr.Next()
	return err == nil || errors.Is(err, io.EOF)
}

// warcInputs returns the WARC inputs of shards in input order when more
// than one shard reads WARC records, else nil (one shard resolves its
// revisits itself).
func warcInputs(shards []Shard) []string {
	var paths []string
	n := 0
	for _, sh := range shards {
		if sh.readsWARC() {
			n++
			if len(paths) == 0 || paths[len(paths)-1] != sh.Path {
				paths = append(paths, sh.Path)
			}
		}
	}
	if n < 2 {
		return nil
	}
	return paths
}

// readsWARC reports a shard that reads WARC records.
func (s Shard) readsWARC() bool {
	return s.Kind == KindWARC || s.Kind == KindWhole && isWARC(strings.ToLower(s.Path))
}
