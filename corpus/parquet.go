package corpus

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// ErrCorrupt is wrapped by the error for data whose checksum does not
// match: a Parquet page whose CRC, written by pyarrow's
// write_page_checksum or parquet-go's writer, differs from its bytes.
var ErrCorrupt = errors.New("corpus: checksum mismatch")

// parquetBatch is how many rows are read at a time.
const parquetBatch = 64

// Parquet yields one document per row of the Parquet file r of size
// bytes, a table with a column per field, as datasets ship on the Hugging
// Face hub or write with pandas, pyarrow, Spark or DuckDB. Columns are
// found by the names of f, as for [Options.JSONL] (the first present
// column of each list; only top-level columns): id (a string or an
// integer; without it the row number), url, html, text (HTML if it starts
// with a doctype or <html> tag), popularity (a number). A row with no html
// or text yields an error naming its row (1-based) and the walk goes on; a
// row group that cannot be read yields one error naming the rows it lost
// (all of it that was not yielded) and the walk goes on with the next; a
// file that is no Parquet file yields one error.
//
// The reader is github.com/parquet-go/parquet-go (pure Go; the codecs that
// writers use: snappy, gzip, zstd, brotli, LZ4_RAW; not the older LZ4 that
// Spark's lz4 and fastparquet's LZ4 write, whose row groups are errors).
func (o Options) Parquet(r io.ReaderAt, size int64, f JSONLFields) iter.Seq2[Doc, error] {
	return o.parquet(r, size, f, "")
}

// parquetColumns are the column indexes of the fields, -1 when absent.
type parquetColumns struct {
	id, url, html, popularity int
	text                      []int // every text column present, in the order of the names
	htmlNames, textNames      []string
	// unicode holds the string columns (STRING / UTF8 annotated): their
	// values are Unicode whatever a page's <meta> says; a binary
	// column's are bytes of their own charset.
	unicode map[int]bool
	// unsigned holds the unsigned integer columns (uint32, uint64 of
	// pandas or pyarrow: hashes as IDs), whose values past the signed
	// range are not negative.
	unsigned map[int]bool
}

func lookupColumns(s *parquet.Schema, f JSONLFields) parquetColumns {
	c := parquetColumns{htmlNames: f.HTML, textNames: f.Text, unicode: map[int]bool{}, unsigned: map[int]bool{}}
	find := func(names []string) int {
		for _, n := range names {
			if leaf, ok := s.Lookup(n); ok && leaf.Node != nil && leaf.Node.Leaf() {
				c.unicode[leaf.ColumnIndex] = isString(leaf.Node.Type())
				c.unsigned[leaf.ColumnIndex] = isUnsigned(leaf.Node.Type())
				return leaf.ColumnIndex
			}
		}
		return -1
	}
	c.id, c.url, c.html, c.popularity = find(f.ID), find(f.URL), find(f.HTML), find(f.Popularity)
	for _, n := range f.Text {
		if i := find([]string{n}); i >= 0 {
			c.text = append(c.text, i)
		}
	}
	return c
}

func (o Options) parquet(r io.ReaderAt, size int64, f JSONLFields, input string) iter.Seq2[Doc, error] {
	f = f.withDefaults()
	return func(yield func(Doc, error) bool) {
		file, err := parquet.OpenFile(r, size)
		if err != nil {
			yield(Doc{}, &Error{Input: input, Offset: -1, Err: fmt.Errorf("parquet: %w", err)})
			return
		}
		cols := lookupColumns(file.Schema(), f)
		if cols.html < 0 && len(cols.text) == 0 {
			yield(Doc{}, &Error{Input: input, Offset: -1, Err: fmt.Errorf("parquet: no column named %s",
				strings.Join(append(append([]string{}, f.HTML...), f.Text...), ", "))})
			return
		}
		buf := make([]parquet.Row, parquetBatch)
		row := 0
		for _, rg := range file.RowGroups() {
			start := row
			rows := rg.Rows()
			for {
				n, err := rows.ReadRows(buf)
				for _, values := range buf[:n] {
					row++
					doc, derr := cols.doc(values, row, o.maxFile())
					if derr != nil {
						derr = &Error{Input: input, Row: row, Offset: -1, Err: derr}
					}
					if !yield(doc, derr) {
						rows.Close()
						return
					}
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					rows.Close()
					// The rest of the row group is lost: say how much.
					first, last := row+1, start+int(rg.NumRows())
					row = last
					if errors.Is(err, parquet.ErrCorrupted) && strings.Contains(err.Error(), "checksum") {
						err = fmt.Errorf("%w: %w", ErrCorrupt, err)
					}
					if !yield(Doc{}, &Error{Input: input, Row: first, Offset: -1, Err: fmt.Errorf("parquet: row group: rows %d to %d lost: %w", first, last, err)}) {
						return
					}
					break
				}
			}
			rows.Close()
		}
	}
}

// doc builds the document of one row.
func (c parquetColumns) doc(values parquet.Row, row int, maxBody int64) (Doc, error) {
	get := func(col int) (parquet.Value, bool) {
		if col < 0 {
			return parquet.Value{}, false
		}
		for _, v := range values {
			if v.Column() == col {
				return v, !v.IsNull()
			}
		}
		return parquet.Value{}, false
	}
	str := func(col int) (string, error) {
		v, ok := get(col)
		if !ok {
			return "", nil
		}
		if v.Kind() != parquet.ByteArray && v.Kind() != parquet.FixedLenByteArray {
			return "", fmt.Errorf("column %d is not a string", col)
		}
		if int64(len(v.ByteArray())) > maxBody {
			return "", fmt.Errorf("%w: value of %d bytes over the %d byte cap", ErrTooLarge, len(v.ByteArray()), maxBody)
		}
		return string(v.ByteArray()), nil
	}
	doc := Doc{ID: strconv.Itoa(row)}
	if v, ok := get(c.id); ok {
		switch v.Kind() {
		case parquet.ByteArray, parquet.FixedLenByteArray:
			doc.ID = string(v.ByteArray())
		case parquet.Int32, parquet.Int64:
			doc.ID = strconv.FormatInt(v.Int64(), 10)
			switch {
			case c.unsigned[c.id] && v.Kind() == parquet.Int32:
				doc.ID = strconv.FormatUint(uint64(v.Uint32()), 10)
			case c.unsigned[c.id]:
				doc.ID = strconv.FormatUint(v.Uint64(), 10)
			}
		default:
			return Doc{}, errors.New("id column is neither a string nor an integer")
		}
	}
	if v, ok := get(c.popularity); ok {
		switch v.Kind() {
		case parquet.Double:
			doc.Popularity = v.Double()
		case parquet.Float:
			doc.Popularity = float64(v.Float())
		case parquet.Int32, parquet.Int64:
			doc.Popularity = float64(v.Int64())
		default:
			return Doc{}, errors.New("popularity column is not a number")
		}
		if math.IsNaN(doc.Popularity) || math.IsInf(doc.Popularity, 0) {
			return Doc{}, errors.New("popularity is not finite")
		}
	}
	var err error
	if doc.URL, err = str(c.url); err != nil {
		return Doc{}, err
	}
	html, err := str(c.html)
	if err != nil {
		return Doc{}, err
	}
	if html != "" {
		doc.Body, doc.ContentType = []byte(html), c.contentType(c.html, "text/html")
		return doc, nil
	}
	for _, col := range c.text {
		text, err := str(col)
		if err != nil {
			return Doc{}, err
		}
		if text != "" {
			doc.Body, doc.ContentType = []byte(text), c.contentType(col, "text/plain")
			if looksLikeHTML(doc.Body) {
				doc.ContentType = c.contentType(col, "text/html")
			}
			return doc, nil
		}
	}
	return Doc{}, fmt.Errorf("no non-empty string in %s", strings.Join(append(append([]string{}, c.htmlNames...), c.textNames...), ", "))
}

// isString reports whether a column of type t holds strings: the STRING
// logical type, or the UTF8 converted type of older writers.
func isString(t parquet.Type) bool {
	if lt := t.LogicalType(); lt != nil {
		if _, ok := lt.Value.(*format.StringType); ok {
			return true
		}
	}
	ct := t.ConvertedType()
	return ct != nil && *ct == deprecated.UTF8
}

// isUnsigned reports whether a column of type t holds unsigned integers:
// the INTEGER logical type unsigned, or the UINT_* converted types.
func isUnsigned(t parquet.Type) bool {
	if lt := t.LogicalType(); lt != nil {
		if it, ok := lt.Value.(*format.IntType); ok {
			return !it.IsSigned
		}
	}
	ct := t.ConvertedType()
	return ct != nil && *ct >= deprecated.Uint8 && *ct <= deprecated.Uint64
}

// contentType is mediaType for a value of column col, said to be UTF-8 if
// the column holds strings.
func (c parquetColumns) contentType(col int, mediaType string) string {
	if c.unicode[col] {
		return mediaType + "; charset=utf-8"
	}
	return mediaType
}
