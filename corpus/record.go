package corpus

import (
	"encoding/json"
	"errors"
)

// ErrNoBody is wrapped by the error for a record that has none of the
// HTML and text fields as a non-empty string; the Doc returned with it
// carries the record's ID and URL, so a caller may fetch the page.
var ErrNoBody = errors.New("no non-empty string")

// Object returns the document of one decoded JSON object as a line of
// [Options.JSONL] gives it, under the fields f (nil lists: the defaults);
// n is its ID when it has no ID field. A search engine's stored document
// (an Elasticsearch _source, a Solr document) is read this way, so that
// `winnow index` and `winnow dedup` take the same fields.
func (f JSONLFields) Object(obj map[string]json.RawMessage, n int) (Doc, error) {
	return objectDoc(func(k string) json.RawMessage { return obj[k] }, false, f.withDefaults(), n)
}
