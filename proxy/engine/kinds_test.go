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
}

func mustKind(t *testing.T, name string) *Kind {
	k, err := LookupKind(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
