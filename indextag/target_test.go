package indextag_test

import (
	"fmt"
	"testing"

	"github.com/winnow-search/winnow/indextag"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		raw, kind            string
		wantKind, base, name string
		err                  bool
	}{
		{raw: "http://127.0.0.1:9200/llvm", base: "http://127.0.0.1:9200", name: "llvm"},
		{raw: "http://127.0.0.1:9200/llvm/", kind: "opensearch", wantKind: "opensearch", base: "http://127.0.0.1:9200", name: "llvm"},
		{raw: "http://127.0.0.1:8983/solr/llvm", wantKind: "solr", base: "http://127.0.0.1:8983/solr", name: "llvm"},
		{raw: "https://user:pw@search.example:443/docs?pretty", base: "https://user:pw@search.example:443", name: "docs"},
		{raw: "http://127.0.0.1:9200/", err: true},
		{raw: "http://127.0.0.1:9200/a/b", err: true},
		{raw: "http://127.0.0.1:9200/logs-*", err: true},
		{raw: "http://127.0.0.1:9200/a,b", err: true},
		{raw: "ftp://127.0.0.1/llvm", err: true},
		{raw: "llvm", err: true},
		{raw: "http://127.0.0.1:8983/solr/llvm", kind: "elasticsearch", err: true},
		{raw: "http://127.0.0.1:9200/llvm", kind: "solr", err: true},
		{raw: "http://127.0.0.1:9200/llvm", kind: "mongo", err: true},
	} {
		t.Run(tc.raw+" "+tc.kind, func(t *testing.T) {
			got, err := indextag.ParseTarget(tc.raw, tc.kind)
			if tc.err {
				if err == nil {
					t.Errorf("ParseTarget(%q, %q) = %+v, want an error", tc.raw, tc.kind, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTarget(%q, %q): %v", tc.raw, tc.kind, err)
			}
			if got.Kind != tc.wantKind || got.Base.String() != tc.base || got.Index != tc.name {
				t.Errorf("ParseTarget(%q, %q) = %s %s %s, want %s %s %s", tc.raw, tc.kind, got.Kind, got.Base, got.Index, tc.wantKind, tc.base, tc.name)
			}
		})
	}
}

func TestParseSince(t *testing.T) {
	s, err := indextag.ParseSince("updated:2026-11-28T00:00:00Z")
	if err != nil || s.Field != "updated" || s.Value != "2026-11-28T00:00:00Z" {
		t.Errorf("ParseSince = %+v, %v", s, err)
	}
	for _, bad := range []string{"", "updated", ":5", "updated:"} {
		if _, err := indextag.ParseSince(bad); err == nil {
			t.Errorf("ParseSince(%q): no error", bad)
		}
	}
}

func ExampleParseTarget() {
	t, _ := indextag.ParseTarget("http://127.0.0.1:8983/solr/llvm", "")
	fmt.Println(t.Kind, t.Base, t.Index)
	// Output: solr http://127.0.0.1:8983/solr llvm
}
