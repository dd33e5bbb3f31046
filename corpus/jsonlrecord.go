package corpus

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// recordReader reads the members of a JSON Lines record that its fields
// name, without decoding the others into a map: a generic map of every
// member, each value copied, and encoding/json's validation pass before
// its decoding pass were a fifth of winnow dedup's CPU on a JSONL input.
// jsontext (the streaming layer of encoding/json/v2) validates and walks
// the record in one pass. It is strict where encoding/json is lenient
// (duplicate names, invalid UTF-8) and it leaves escaped names to
// encoding/json, so a record it refuses is read by parseJSONLine instead,
// which gives encoding/json's result and error: the fast path changes no
// document. The zero value is not ready: see newRecordReader. Not safe
// for concurrent use.
type recordReader struct {
	f     JSONLFields
	names []string          // every name f lists, once
	vals  []json.RawMessage // the record's member of each name, nil if absent
	seen  [][]byte          // the names readFlat has met in the record
	rd    bytes.Reader
	dec   jsontext.Decoder
}

func newRecordReader(f JSONLFields) *recordReader {
	var names []string
	for _, l := range [][]string{f.ID, f.URL, f.HTML, f.Text, f.Popularity} {
		for _, k := range l {
			if !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	return &recordReader{f: f, names: names, vals: make([]json.RawMessage, len(names))}
}

// doc is parseJSONLine(line, r.f, n).
func (r *recordReader) doc(line []byte, n int) (Doc, error) {
	if !r.read(line) {
		return parseJSONLine(line, r.f, n)
	}
	return objectDoc(r.get, true, r.f, n)
}

func (r *recordReader) get(k string) (Field, bool) {
	if i := slices.Index(r.names, k); i >= 0 && r.vals[i] != nil {
		return Field{Raw: r.vals[i]}, true
	}
	return Field{}, false
}

// read sets r.vals to the members of the object line, slices of line. It
// returns false if line is anything but one valid JSON object with
// distinct, unescaped names in valid UTF-8.
func (r *recordReader) read(line []byte) bool {
	return r.readFlat(line) || r.readStream(line)
}

// readStream is read with jsontext, for every record.
func (r *recordReader) readStream(line []byte) bool {
	clear(r.vals)
	r.rd.Reset(line)
	r.dec.Reset(&r.rd)
	if tok, err := r.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	for r.dec.PeekKind() == '"' {
		name, err := r.dec.ReadValue()
		if err != nil || bytes.IndexByte(name, '\\') >= 0 {
			return false
		}
		i := slices.IndexFunc(r.names, func(k string) bool { return string(name[1:len(name)-1]) == k })
		if i < 0 {
			if r.dec.SkipValue() != nil {
				return false
			}
			continue
		}
		v, err := r.dec.ReadValue()
		if err != nil {
			return false
		}
		// The value's bytes in line: v itself is valid only until the
		// decoder's next call.
		end := int(r.dec.InputOffset())
		r.vals[i] = line[end-len(v) : end]
	}
	if tok, err := r.dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return false
	}
	// Nothing but white space may follow the object.
	_, err := r.dec.ReadToken()
	return err == io.EOF
}
