package engine

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestKinds: every kind of the registry has its adapter, its routes and
// its error shape; an unknown kind is refused naming the known ones.
func TestKinds(t *testing.T) {
	for _, name := range Kinds() {
		k, err := LookupKind(name)
		if err != nil || k.adapter == nil || k.route == nil || k.errorBody == nil || k.Path == "" {
			t.Fatalf("kind %s: %+v, %v", name, k, err)
		}
		if _, err := New(Config{Kind: name, Fields: FieldPaths{Results: "items"}}); err != nil {
			t.Errorf("New(%s): %v", name, err)
		}
		body, ct, _ := k.ErrorBody(nil, 403, "security_exception", "refused", GateRequest{Method: "GET", URI: "/x"})
		if strings.HasPrefix(ct, "application/json") && !json.Valid(body) || !strings.Contains(string(body), "refused") {
			t.Errorf("kind %s: error %s %q", name, ct, body)
		}
		if g := NewGate(Config{Kind: name}); g.kind != k {
			t.Errorf("kind %s: the gate has no routes", name)
		}
	}
	_, err := LookupKind("elastic")
	if !errors.Is(err, ErrKind) || !strings.Contains(err.Error(), strings.Join(Kinds(), ", ")) {
		t.Errorf("LookupKind(elastic) = %v, want ErrKind listing the kinds", err)
	}
	if _, err := New(Config{Kind: "elastic"}); !errors.Is(err, ErrKind) {
		t.Errorf("New(elastic) = %v, want ErrKind", err)
	}
	body, ct, _ := mustKind(t, "solr").ErrorBody(nil, 403, "", "no <way>", GateRequest{Method: "GET", URI: "/solr/c/select?wt=xml"})
	if !strings.HasPrefix(ct, "application/xml") || !strings.Contains(string(body), "no &lt;way&gt;") {
		t.Errorf("Solr error asked in XML: %s %s", ct, body)
	}
	// SolrJ's default: javabin, in a POST's form too. Solr's JavaBinCodec
	// writes a string as 0x20|length and a SimpleOrderedMap as
	// 0xa0|entries, a length of 31 or more as 0x1f and a varint of the
	// rest; an int as tag 6 and four bytes. SolrJ reads it in
	// clients/java's write checks.
	long := strings.Repeat("x", 200)
	body, ct, _ = mustKind(t, "solr").ErrorBody(nil, 403, "", long, GateRequest{Method: "POST", URI: "/solr/c/update", ContentType: "application/x-www-form-urlencoded", Body: []byte("wt=javabin&version=2")})
	str := func(s string) string {
		if len(s) < 31 {
			return string(rune(0x20|len(s))) + s
		}
		return "\x3f" + string(rune(len(s)-31)) + s
	}
	want := "\x02\xa2" + str("responseHeader") + "\xa2" + str("status") + "\x06\x00\x00\x01\x93" + str("QTime") + "\x06\x00\x00\x00\x00" +
		str("error") + "\xa3" + str("metadata") + "\xc1" + str("error-class") + str("org.apache.solr.common.SolrException") +
		str("msg") + "\x3f\xa9\x01" + long + str("code") + "\x06\x00\x00\x01\x93"
	if ct != "application/octet-stream" || string(body) != want {
		t.Errorf("Solr error asked in javabin: %s %q, want %q", ct, body, want)
	}
}

func mustKind(t *testing.T, name string) *Kind {
	k, err := LookupKind(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
