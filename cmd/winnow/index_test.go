package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestIndexUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no URL", []string{"index"}, "want one URL"},
		{"two URLs", []string{"index", "http://127.0.0.1:1/a", "http://127.0.0.1:1/b"}, "want one URL"},
		{"no index", []string{"index", "http://127.0.0.1:9200"}, "names no index"},
		{"bad kind", []string{"index", "-kind", "mongo", "http://127.0.0.1:9200/a"}, "unknown kind"},
		{"bad since", []string{"index", "-since", "updated", "http://127.0.0.1:9200/a"}, "FIELD:VALUE"},
		{"negative rate", []string{"index", "-rate", "-1", "http://127.0.0.1:9200/a"}, "must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := winnow(t, "", tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("winnow %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
			}
		})
	}
}

// TestIndexUnreachable: an engine that cannot be read is exit status 1,
// with the reason.
func TestIndexUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	code, _, stderr := winnow(t, "", "index", "-retry-for", "1ms", "http://"+addr+"/llvm")
	if code != 1 || !strings.Contains(stderr, "could not read the index") {
		t.Errorf("exit %d, stderr %q; want 1 and the read error", code, stderr)
	}
}

// TestIndexMissingIndexErrorFirst: an index the engine does not have is
// the error alone, exit 1, not a report of zero clusters before it.
func TestIndexMissingIndexErrorFirst(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":{"root_cause":[{"type":"index_not_found_exception","reason":"no such index [nosuch]"}],"type":"index_not_found_exception","reason":"no such index [nosuch]"},"status":404}`))
	}))
	defer srv.Close()
	code, _, errs := winnow(t, "", "index", "-kind", "elasticsearch", srv.URL+"/nosuch")
	if code != 1 || !strings.Contains(errs, "index_not_found_exception") || strings.Contains(errs, "clusters") {
		t.Errorf("winnow index on a missing index = exit %d, stderr %q; want exit 1 with the engine's error and no report", code, errs)
	}
}
