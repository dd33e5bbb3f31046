package canon

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
)

// whatwgCase is one test of the web-platform-tests' urltestdata.json.
type whatwgCase struct {
	Input    string  `json:"input"`
	Base     *string `json:"base"`
	Href     string  `json:"href"`
	Protocol string  `json:"protocol"`
	Hostname string  `json:"hostname"`
	Failure  bool    `json:"failure"`
}

func whatwgCases(t *testing.T) []whatwgCase {
	t.Helper()
	b, err := os.ReadFile("testdata/whatwg/urltestdata.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var cases []whatwgCase
	for _, r := range raw {
		var c whatwgCase
		if json.Unmarshal(r, &c) == nil && r[0] == '{' {
			cases = append(cases, c)
		}
	}
	return cases
}

// baseFreeHTTP reports whether the test's input is an http or https URL
// that does not depend on its base (URL takes no base): after the
// standard's preprocessing it starts with the scheme, and, when the base
// has the same scheme, two slashes or backslashes follow it (else the
// standard resolves it against the base).
func baseFreeHTTP(c whatwgCase) bool {
	in := preprocess(c.Input)
	colon := strings.IndexByte(in, ':')
	if colon <= 0 {
		return false
	}
	scheme := strings.ToLower(in[:colon])
	if scheme != "http" && scheme != "https" {
		return false
	}
	if c.Base != nil && strings.HasPrefix(strings.ToLower(*c.Base), scheme+":") {
		rest := in[colon+1:]
		return len(rest) >= 2 && (rest[0] == '/' || rest[0] == '\\') && (rest[1] == '/' || rest[1] == '\\')
	}
	return true
}

// whatwgDisagreements are the tests whose result URL does not match the
// URL Standard's, with the reason: each a documented choice of URL.
var whatwgDisagreements = map[string]string{}

// TestWHATWG checks URL against the URL Standard's tests: no panic, every
// key idempotent (HostKey too), and for every absolute http(s) input, the
// key of the input equals the key of the standard's parse (href), or both
// fail, but for the disagreements listed with their reasons.
func TestWHATWG(t *testing.T) {
	cases := whatwgCases(t)
	compared, agree := 0, 0
	var unexpected []string
	seen := map[string]bool{}
	for _, c := range cases {
		got, err := URL(c.Input)
		if err == nil {
			if again, err2 := URL(got); err2 != nil || again != got {
				t.Errorf("URL(%q) = %q, then URL(%q) = %q, %v: not idempotent", c.Input, got, got, again, err2)
			}
		}
		if c.Hostname != "" {
			if h := HostKey(c.Hostname); HostKey(h) != h {
				t.Errorf("HostKey(%q) = %q, then %q: not idempotent", c.Hostname, h, HostKey(h))
			}
		}
		if !baseFreeHTTP(c) {
			continue
		}
		compared++
		var want string
		var wantErr error
		if !c.Failure {
			want, wantErr = URL(c.Href)
			if wantErr != nil {
				want = "error: " + wantErr.Error()
			}
		} else {
			want = "error"
		}
		have := got
		if err != nil {
			have = "error"
			if !c.Failure {
				have = "error: " + err.Error()
			}
		}
		ok := have == want || c.Failure && err != nil
		// The host itself, against the standard's hostname (trailing
		// dots removed, as URL does).
		if ok && err == nil && c.Hostname != "" {
			host := strings.TrimPrefix(strings.TrimPrefix(got, "http://"), "https://")
			host = host[:strings.IndexByte(host, '/')]
			if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
				host = host[:i]
			}
			if wh := strings.TrimRight(c.Hostname, "."); host != wh && host != c.Hostname {
				ok = false
				have = "host " + host
				want = "host " + c.Hostname
			}
		}
		reason, listed := whatwgDisagreements[c.Input]
		seen[c.Input] = true
		switch {
		case ok && listed:
			t.Errorf("URL(%q) now agrees with the standard (%q): remove it from whatwgDisagreements (%s)", c.Input, got, reason)
		case ok:
			agree++
		case !listed:
			unexpected = append(unexpected, c.Input)
			t.Errorf("URL(%q) = %q, the standard's href %q gives %q", c.Input, have, c.Href, want)
		}
	}
	for in := range whatwgDisagreements {
		if !seen[in] {
			t.Errorf("whatwgDisagreements lists %q, which is no compared test", in)
		}
	}
	sort.Strings(unexpected)
	t.Logf("WHATWG urltestdata.json: %d tests, %d absolute http(s) inputs compared, %d agree, %d listed disagreements",
		len(cases), compared, agree, len(whatwgDisagreements))
}
