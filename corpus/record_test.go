package corpus

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestObject(t *testing.T) {
	// raw keeps every field as written; decoded has its strings decoded,
	// as a streaming reader of an engine's answer gives them.
	raw := func(s string) map[string]Field {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		out := map[string]Field{}
		for k, v := range m {
			out[k] = Field{Raw: v}
		}
		return out
	}
	decoded := func(s string) map[string]Field {
		m := raw(s)
		for k, v := range m {
			var str string
			if json.Unmarshal(v.Raw, &str) == nil {
				m[k] = Field{Str: str}
			}
		}
		return m
	}
	for _, obj := range []func(string) map[string]Field{raw, decoded} {
		d, err := JSONLFields{Text: []string{"body"}}.Object(obj(`{"id":7,"url":"http://x/a","body":"<html><p>hi \"x\"</p>","popularity":2}`), 1)
		if err != nil || d.ID != "7" || d.URL != "http://x/a" || d.ContentType != "text/html; charset=utf-8" || string(d.Body) != `<html><p>hi "x"</p>` || d.Popularity != 2 {
			t.Errorf("Object = %+v, %v", d, err)
		}
		// No page: ErrNoBody, with the ID and URL to fetch it by.
		d, err = JSONLFields{}.Object(obj(`{"id":"a\u00e9","url":"http://x/a","html":""}`), 1)
		if !errors.Is(err, ErrNoBody) || d.ID != "aé" || d.URL != "http://x/a" {
			t.Errorf("Object without a page = %+v, %v; want ErrNoBody with the ID and URL", d, err)
		}
		if _, err := (JSONLFields{}).Object(obj(`{"html":5}`), 1); err == nil || errors.Is(err, ErrNoBody) {
			t.Errorf("a number for html: %v, want a field error", err)
		}
		if _, err := (JSONLFields{}).Object(obj(`{"html":"<p>x","popularity":"2"}`), 1); err == nil {
			t.Errorf("a string for popularity: no error")
		}
		// null is no field: the next name is tried.
		d, err = JSONLFields{HTML: []string{"a", "b"}}.Object(obj(`{"a":null,"b":"<p>b"}`), 3)
		if err != nil || d.ID != "3" || string(d.Body) != "<p>b" {
			t.Errorf("null first field: %+v, %v", d, err)
		}
	}
	// Both forms give the same document.
	line := `{"id":"x","url":"http://x/\u00e9","html":"<p>caf\u00e9\n</p>","popularity":1.5}`
	a, errA := JSONLFields{}.Object(raw(line), 1)
	b, errB := JSONLFields{}.Object(decoded(line), 1)
	if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
		t.Errorf("raw %+v, %v; decoded %+v, %v", a, errA, b, errB)
	}
}
