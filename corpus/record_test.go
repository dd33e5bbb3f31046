package corpus

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestObject(t *testing.T) {
	obj := func(s string) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	d, err := JSONLFields{Text: []string{"body"}}.Object(obj(`{"id":7,"url":"http://x/a","body":"<html><p>hi</p>","popularity":2}`), 1)
	if err != nil || d.ID != "7" || d.URL != "http://x/a" || d.ContentType != "text/html" || string(d.Body) != "<html><p>hi</p>" || d.Popularity != 2 {
		t.Errorf("Object = %+v, %v", d, err)
	}
	// No page: ErrNoBody, with the ID and URL to fetch it by.
	d, err = JSONLFields{}.Object(obj(`{"id":"a","url":"http://x/a","html":""}`), 1)
	if !errors.Is(err, ErrNoBody) || d.ID != "a" || d.URL != "http://x/a" {
		t.Errorf("Object without a page = %+v, %v; want ErrNoBody with the ID and URL", d, err)
	}
	if _, err := (JSONLFields{}).Object(obj(`{"html":5}`), 1); err == nil || errors.Is(err, ErrNoBody) {
		t.Errorf("a number for html: %v, want a field error", err)
	}
}
