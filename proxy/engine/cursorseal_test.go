package engine

import (
	"errors"
	"strings"
	"testing"
)

func TestCursorSealRoundTrip(t *testing.T) {
	a, err := NewCursorSeal([]byte("sixteen bytes at least"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewCursorSeal([]byte("another key, as long"))
	random, _ := NewCursorSeal(nil)
	const id = "FGluY2x1ZGVfY29udGV4dF91dWlkDXF1ZXJ5QW5kRmV0Y2gBFmlYdWJQLUJ3UkZpelNxbUdSZjJfc1EAAAAAAAAlcRZpOVdzZ0RTR1JySzZvT2lxT0dQamdn"
	s := a.Seal(id)
	if got, err := a.Unseal(s); err != nil || got != id {
		t.Fatalf("Unseal(Seal(id)) = %q, %v; want id", got, err)
	}
	if !scrollID(s) || strings.Contains(s, ",") {
		t.Errorf("sealed %q is not a path segment of scroll ID characters without ','", s)
	}
	// The counter one up: the next client's ID.
	next := strings.Replace(id, "AAAAAAAAlcR", "AAAAAAAAlcS", 1)
	tag, _, _ := strings.Cut(s, ".")
	for what, forged := range map[string]string{
		"the engine's ID":                id,
		"the next ID under this seal":    tag + "." + next,
		"the ID sealed under other key":  b.Seal(id),
		"the ID sealed under random key": random.Seal(id),
		"a tag cut short":                tag[1:] + "." + id,
		"no ID":                          tag + ".",
		"empty":                          "",
	} {
		if got, err := a.Unseal(forged); err == nil {
			t.Errorf("%s: Unseal(%q) = %q, want an error", what, forged, got)
		}
	}
	if _, err := NewCursorSeal([]byte("too short")); err == nil {
		t.Error("a key of 9 bytes was taken")
	}
}

func TestSealHead(t *testing.T) {
	c, _ := NewCursorSeal([]byte("sixteen bytes at least"))
	q := func(id string) string { return `"` + c.Seal(id) + `"` }
	for _, tc := range []struct{ in, want string }{
		{`{"_scroll_id":"s1","took":1,"hits":{"hits":[{"_source":{"pit_id":"x"}}]}}`, `{"_scroll_id":` + q("s1") + `,"took":1,"hits":{"hits":[{"_source":{"pit_id":"x"}}]}}`},
		{`{"_scroll_id":"s1","pit_id":"p1","took":1}`, `{"_scroll_id":` + q("s1") + `,"pit_id":` + q("p1") + `,"took":1}`},
		{"{ \"id\" : \"p=\" ,\n\"_shards\":{}}", "{ \"id\" : " + q("p=") + " ,\n\"_shards\":{}}"},
		{`{"pit_id":"p\u003d"}`, `{"pit_id":` + q("p=") + `}`},
		// Not at the start: the engines write them first; a member
		// after another is left (a client sending it back is refused).
		{`{"took":1,"_scroll_id":"s1"}`, `{"took":1,"_scroll_id":"s1"}`},
		{`{"_scroll_id":null,"took":1}`, `{"_scroll_id":null,"took":1}`},
		{`[{"_scroll_id":"s1"}]`, `[{"_scroll_id":"s1"}]`},
		{``, ``},
	} {
		got, more := c.SealHead([]byte(tc.in), true)
		if string(got) != tc.want || more {
			t.Errorf("SealHead(%s) = %s, %v; want %s", tc.in, got, more, tc.want)
		}
		// Every head cut short asks for more or gives what the whole
		// does at its start.
		for n := range len(tc.in) {
			got, more := c.SealHead([]byte(tc.in[:n]), false)
			if !more && !strings.HasPrefix(tc.want, string(got)) && string(got) != tc.in[:n] {
				t.Errorf("SealHead(%s, not at end) = %s, %v", tc.in[:n], got, more)
			}
		}
	}
}

func TestGateUnsealsCursorIDs(t *testing.T) {
	seal, _ := NewCursorSeal([]byte("sixteen bytes at least"))
	es := NewGate(Config{Kind: "elasticsearch"}).WithCursorSeal(seal)
	os := NewGate(Config{Kind: "opensearch"}).WithCursorSeal(seal)
	a, b := seal.Seal("a="), seal.Seal("b")
	for _, tc := range []struct {
		g                  *Gate
		method, uri, body  string
		wantPath, wantBody string
		wantIDs            bool
	}{
		{es, "GET", "/_search/scroll/" + a + "?scroll=1m", "", "/_search/scroll/a=", "", true},
		{es, "GET", "/_search/scroll?scroll_id=" + a + "," + b, "", "/_search/scroll", "", true},
		{es, "POST", "/_search/scroll", `{"scroll":"1m","scroll_id":"` + a + `"}`, "/_search/scroll", `{"scroll":"1m","scroll_id":"a="}`, true},
		{es, "DELETE", "/_search/scroll/" + a + "," + b, "", "/_search/scroll/a=,b", "", false},
		{es, "DELETE", "/_search/scroll", `{"scroll_id":["` + a + `","` + b + `"]}`, "/_search/scroll", `{"scroll_id":["a=","b"]}`, false},
		{es, "DELETE", "/_pit", `{"id":"` + a + `"}`, "/_pit", `{"id":"a="}`, false},
		{os, "DELETE", "/_search/point_in_time", `{"pit_id":["` + a + `"]}`, "/_search/point_in_time", `{"pit_id":["a="]}`, false},
		{es, "POST", "/_search", `{"size":1,"p\u0069t":{"id":"` + a + `","keep_alive":"1m"},"search_after":[12345678901234567890]}`, "/_search", `{"pit":{"id":"a=","keep_alive":"1m"},"search_after":[12345678901234567890],"size":1}`, true},
		{es, "POST", "/idx/_pit?keep_alive=1m", "", "/idx/_pit", "", true},
		{os, "POST", "/idx/_search/point_in_time?keep_alive=1m", "", "/idx/_search/point_in_time", "", true},
		{es, "POST", "/idx/_search?scroll=1m", `{"size":1}`, "/idx/_search", "", true},
		{es, "POST", "/idx/_search", `{"size":1}`, "/idx/_search", "", false},
	} {
		rt, err := tc.g.Check(GateRequest{Method: tc.method, URI: tc.uri, Body: []byte(tc.body), ContentType: "application/json"})
		if err != nil {
			t.Errorf("%s %s %s: %v", tc.method, tc.uri, tc.body, err)
			continue
		}
		if rt.Path != tc.wantPath || string(rt.Body) != tc.wantBody || rt.CursorIDs != tc.wantIDs {
			t.Errorf("%s %s %s: path %q, body %s, CursorIDs %v; want %q, %s, %v", tc.method, tc.uri, tc.body, rt.Path, rt.Body, rt.CursorIDs, tc.wantPath, tc.wantBody, tc.wantIDs)
		}
		if ids := rt.Query["scroll_id"]; len(ids) > 0 && ids[0] != "a=,b" {
			t.Errorf("%s %s: scroll_id %q, want a=,b", tc.method, tc.uri, ids)
		}
	}
	other, _ := NewCursorSeal([]byte("another key, as long"))
	forged := other.Seal("a=")
	for _, tc := range []struct {
		g                 *Gate
		method, uri, body string
		ctype             string
		id                bool // an ID that does not verify: ErrCursorID
	}{
		{es, "GET", "/_search/scroll/a=", "", "", true},
		{es, "GET", "/_search/scroll/" + forged, "", "", true},
		{es, "GET", "/_search/scroll?scroll_id=" + a + ",b", "", "", true},
		{es, "POST", "/_search/scroll", `{"scroll_id":"` + forged + `"}`, "", true},
		{es, "POST", "/_search/scroll", `{"scroll_id":"` + a + `","scroll_id":"b"}`, "", true},
		{es, "POST", "/_search/scroll", `scroll_id: b`, "application/yaml", false},
		{es, "DELETE", "/_search/scroll", `{"scroll_id":[1]}`, "", false},
		{es, "DELETE", "/_pit", `{"id":"a="}`, "", true},
		{os, "DELETE", "/_search/point_in_time", `{"pit_id":["` + a + `","b"]}`, "", true},
		{es, "POST", "/_search", `{"pit":{"id":"a="}}`, "", true},
		{es, "POST", "/_search", `{"pit":{"id":"` + forged + `"}}`, "", true},
		{es, "POST", "/_search", `{"pit":"x"}`, "", false},
		{es, "POST", "/_search", "pit:\n  id: a=\n", "application/yaml", false},
		{es, "POST", "/_search", `{/**/"pit":{"id":"a="}}`, "", false},
		{es, "POST", "/_msearch", "{}\n" + `{"pit":{"id":"` + a + `"}}` + "\n", "application/x-ndjson", false},
	} {
		ct := tc.ctype
		if ct == "" {
			ct = "application/json"
		}
		rt, err := tc.g.Check(GateRequest{Method: tc.method, URI: tc.uri, Body: []byte(tc.body), ContentType: ct})
		if !errors.Is(err, ErrRefused) || errors.Is(err, ErrCursorID) != tc.id {
			t.Errorf("%s %s %s: %v %+v, want refused (ErrCursorID: %v)", tc.method, tc.uri, tc.body, err, rt, tc.id)
		}
	}
}
