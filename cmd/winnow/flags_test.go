package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	for _, c := range []struct {
		args     []string
		wantO    string
		wantV    bool
		wantArgs []string
	}{
		{[]string{"in.jsonl", "-o", "out.jsonl"}, "out.jsonl", false, []string{"in.jsonl"}},
		{[]string{"-o", "out.jsonl", "a", "b"}, "out.jsonl", false, []string{"a", "b"}},
		{[]string{"a", "-v", "b", "-o=x"}, "x", true, []string{"a", "b"}},
		{[]string{"a", "--", "-o", "b"}, "", false, []string{"a", "-o", "b"}},
		{[]string{"-", "-v"}, "", true, []string{"-"}},
		{nil, "", false, nil},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o := fs.String("o", "", "")
		v := fs.Bool("v", false, "")
		if err := parseArgs(fs, c.args); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if *o != c.wantO || *v != c.wantV || !slices.Equal(fs.Args(), c.wantArgs) && len(fs.Args())+len(c.wantArgs) > 0 {
			t.Errorf("%q: -o %q -v %v args %q, want %q %v %q", c.args, *o, *v, fs.Args(), c.wantO, c.wantV, c.wantArgs)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := parseArgs(fs, []string{"in.jsonl", "-nope"}); err == nil {
		t.Error("an unknown flag after an input was accepted")
	}
}

// TestServeBusyPort: a taken listen address is an error that says how to
// choose another, not a bare "address already in use".
func TestServeBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, cmd := range []string{"serve", "cluster"} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"-set", "serve.demo_listen=127.0.0.1:0", "-set", "cluster.store=memory", cmd, "-listen", ln.Addr().String()},
			strings.NewReader(""), &out, &errb, nil)
		if code == 0 || !strings.Contains(errb.String(), "in use by another program") || !strings.Contains(errb.String(), "-listen") {
			t.Errorf("winnow %s on a busy port: exit %d, %q", cmd, code, errb.String())
		}
	}
}
