package corpus

import (
	"encoding/json"
	"errors"
)

// ErrNoBody is wrapped by the error for a record that has none of the
// HTML and text fields as a non-empty string; the Doc returned with it
// carries the record's ID and URL, so a caller may fetch the page.
var ErrNoBody = errors.New("no non-empty string")

// Field is one field of a stored document: a string already decoded
// (Str, with Raw nil), or any JSON value as it is written (Raw: a number,
// a list, an object, null, or a string still quoted). A streaming reader
// of an engine's answer decodes each string once into Str; a JSON Lines
// record keeps its fields in Raw and decodes the ones read.
type Field struct {
	Str string
	Raw json.RawMessage
}

// null reports a JSON null.
func (v Field) null() bool { return v.Raw != nil && string(v.Raw) == "null" }

// bytes returns the string v holds in a new slice, or an error when it
// holds another value; strict is as for jsonBytes.
func (v Field) bytes(strict bool) ([]byte, error) {
	if v.Raw == nil {
		return []byte(v.Str), nil
	}
	return jsonBytes(v.Raw, strict)
}

// Object returns the document of one decoded JSON object as a line of
// [Options.JSONL] gives it, under the fields f (nil lists: the defaults);
// n is its ID when it has no ID field. A search engine's stored document
// (an Elasticsearch _source, a Solr document) is read this way, so that
// `winnow index` and `winnow dedup` take the same fields.
func (f JSONLFields) Object(obj map[string]Field, n int) (Doc, error) {
	return objectDoc(func(k string) (Field, bool) {
		v, ok := obj[k]
		return v, ok
	}, false, f.withDefaults(), n)
}
