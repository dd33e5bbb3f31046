package main

import (
	"net"
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
