package indextag

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/winnow-search/winnow/corpus"
)

// The answers that carry stored documents (a search page, a Solr select
// or get) are decoded as they stream, and each stored string (the HTML of
// a page above all) is decoded once, into the corpus.Field the page is
// read from: encoding/json would scan the answer to find each value, copy
// it, and then decode each string again. jsontext (the tokenizer of
// encoding/json/v2) reads a string's bytes, checks them and unescapes
// them without a second scan of the answer.

// streamer is an answer [conn.once] decodes from the stream itself.
type streamer interface {
	// reset empties what an earlier decode left, keeping the settings.
	reset()
	decode(dec *jsontext.Decoder) error
}

// decodeStream decodes an answer body into s. Like encoding/json, it
// accepts duplicate names (the last wins) and replaces invalid UTF-8 with
// U+FFFD.
func decodeStream(r io.Reader, s streamer) error {
	dec := jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	return s.decode(dec)
}

// object reads an object from dec, calling member for each name with the
// decoder before the name's value; member must read the value.
func object(dec *jsontext.Decoder, member func(name string) error) error {
	if err := begin(dec, '{'); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if err := member(tok.String()); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// array reads an array from dec, calling elem before each element; elem
// must read it.
func array(dec *jsontext.Decoder, elem func() error) error {
	if err := begin(dec, '['); err != nil {
		return err
	}
	for dec.PeekKind() != ']' {
		if err := elem(); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// begin reads the start of an object or array; null reads as empty.
func begin(dec *jsontext.Decoder, kind jsontext.Kind) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch k := tok.Kind(); {
	case k == kind:
		return nil
	case k == 'n':
		return errNull
	default:
		return fmt.Errorf("indextag: want %v, got %v", kind, k)
	}
}

// errNull is begin's answer to a null object or array: readers treat it
// as empty.
var errNull = fmt.Errorf("indextag: null")

// orNull turns a null object or array into no error.
func orNull(err error) error {
	if err == errNull {
		return nil
	}
	return err
}

// field reads one stored value: a string decoded, any other value as it
// is written.
func field(dec *jsontext.Decoder) (corpus.Field, error) {
	if dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		return corpus.Field{Str: tok.String()}, err
	}
	v, err := dec.ReadValue()
	return corpus.Field{Raw: json.RawMessage(v.Clone())}, err
}

// fields reads a stored document's fields, each string decoded once.
// With unwrap (Solr) a list of one value reads as that value, so that a
// multi-valued field holding one value reads as a single one. A field
// not in want is skipped unread (want nil: every field is read).
func fields(dec *jsontext.Decoder, unwrap bool, want []string) (map[string]corpus.Field, error) {
	src := map[string]corpus.Field{}
	err := object(dec, func(name string) error {
		var v corpus.Field
		var err error
		if want != nil && !slices.Contains(want, name) {
			return dec.SkipValue()
		}
		if unwrap && dec.PeekKind() == '[' {
			v, err = list(dec)
		} else {
			v, err = field(dec)
		}
		src[name] = v
		return err
	})
	return src, orNull(err)
}

// list reads a list: its one value, or the list as JSON.
func list(dec *jsontext.Decoder) (corpus.Field, error) {
	var vs []corpus.Field
	err := array(dec, func() error {
		v, err := field(dec)
		vs = append(vs, v)
		return err
	})
	switch {
	case err != nil:
		return corpus.Field{}, err
	case len(vs) == 1:
		return vs[0], nil
	}
	raw := []byte{'['}
	for i, v := range vs {
		if i > 0 {
			raw = append(raw, ',')
		}
		if v.Raw == nil {
			raw, _ = jsontext.AppendQuote(raw, v.Str)
		} else {
			raw = append(raw, v.Raw...)
		}
	}
	return corpus.Field{Raw: append(raw, ']')}, nil
}

// str reads a string, or any other value as its JSON text (a number).
func str(dec *jsontext.Decoder) (string, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return "", err
	}
	switch tok.Kind() {
	case '{', '[':
		return "", fmt.Errorf("indextag: want a string or number, got %v", tok.Kind())
	}
	return tok.String(), nil
}

// integer reads a whole number.
func integer(dec *jsontext.Decoder) (int64, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return 0, err
	}
	if tok.Kind() != '0' {
		return 0, fmt.Errorf("indextag: want a number, got %v", tok.Kind())
	}
	return strconv.ParseInt(tok.String(), 10, 64)
}

func (a *searchAnswer) reset() { *a = searchAnswer{want: a.want} }

// decode reads an Elasticsearch or OpenSearch search or scroll answer.
func (a *searchAnswer) decode(dec *jsontext.Decoder) error {
	return object(dec, func(name string) error {
		var err error
		switch name {
		case "pit_id":
			a.PitID, err = str(dec)
		case "_scroll_id":
			a.ScrollID, err = str(dec)
		case "timed_out":
			var tok jsontext.Token
			tok, err = dec.ReadToken()
			a.TimedOut = tok.Kind() == 't'
		case "_shards":
			err = orNull(object(dec, func(name string) error {
				switch name {
				case "failed":
					var err error
					a.Failed, err = integer(dec)
					return err
				case "failures":
					v, err := dec.ReadValue()
					var fs []struct {
						Index  string `json:"index"`
						Reason struct {
							Type   string `json:"type"`
							Reason string `json:"reason"`
						} `json:"reason"`
					}
					if err == nil && json.Unmarshal(v, &fs) == nil && len(fs) > 0 {
						a.Failure = fmt.Sprintf("index %s: %s: %s", fs[0].Index, fs[0].Reason.Type, fs[0].Reason.Reason)
					}
					return err
				}
				return dec.SkipValue()
			}))
		case "hits":
			err = orNull(object(dec, func(name string) error {
				if name != "hits" {
					return dec.SkipValue()
				}
				return orNull(array(dec, func() error {
					h, err := a.decodeHit(dec)
					a.Hits = append(a.Hits, h)
					return err
				}))
			}))
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

func (a *searchAnswer) decodeHit(dec *jsontext.Decoder) (esHit, error) {
	var h esHit
	err := object(dec, func(name string) error {
		var err error
		switch name {
		case "_id":
			h.ID, err = str(dec)
		case "_index":
			h.Index, err = str(dec)
		case "_routing":
			h.Routing, err = str(dec)
		case "_source":
			h.Source, err = fields(dec, false, a.want)
		case "_seq_no":
			h.SeqNo, err = integer(dec)
		case "_primary_term":
			h.PrimaryTerm, err = integer(dec)
		case "sort":
			var v jsontext.Value
			v, err = dec.ReadValue()
			h.Sort = json.RawMessage(v.Clone())
		default:
			err = dec.SkipValue()
		}
		return err
	})
	return h, err
}

func (a *solrAnswer) reset() { *a = solrAnswer{} }

// decode reads a Solr select or real-time get answer (of several ids:
// response.docs; of one: doc).
func (a *solrAnswer) decode(dec *jsontext.Decoder) error {
	return object(dec, func(name string) error {
		var err error
		switch name {
		case "nextCursorMark":
			a.NextCursorMark, err = str(dec)
		case "responseHeader":
			err = orNull(object(dec, func(name string) error {
				if name != "partialResults" || dec.PeekKind() != 't' {
					return dec.SkipValue()
				}
				a.Partial = true
				return dec.SkipValue()
			}))
		case "response":
			err = orNull(object(dec, func(name string) error {
				switch name {
				case "numFound":
					var err error
					a.NumFound, err = integer(dec)
					return err
				case "docs":
					return orNull(array(dec, func() error {
						d, err := fields(dec, true, nil)
						a.Docs = append(a.Docs, d)
						return err
					}))
				}
				return dec.SkipValue()
			}))
		case "doc":
			// Real-time get of one id answers with the document alone
			// (null when there is none).
			if dec.PeekKind() == 'n' {
				return dec.SkipValue()
			}
			var d map[string]corpus.Field
			if d, err = fields(dec, true, nil); err == nil {
				a.Docs = append(a.Docs, d)
			}
		default:
			err = dec.SkipValue()
		}
		return err
	})
}
