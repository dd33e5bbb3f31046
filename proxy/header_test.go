package proxy

import (
	"bufio"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/proxy/engine"
)

// headerLines lists h's headers as All gives them, "name: value".
func headerLines[H interface {
	All() iter.Seq2[[]byte, []byte]
}](h H) []string {
	var lines []string
	for k, v := range h.All() {
		lines = append(lines, string(k)+": "+string(v))
	}
	return lines
}

// TestSetHeader: setHeader sets what SetBytesKV sets, names normalized
// as fasthttp normalizes them, for names in every case, with dashes,
// digits, bytes no header name may have (left as they are), CR and LF,
// and fasthttp's special headers, in requests and responses.
func TestSetHeader(t *testing.T) {
	names := []string{
		"Content-Type", "content-type", "CONTENT-TYPE", "X-Elastic-Product", "X-elastic-product",
		"x-elastic-product", "Date", "date", "Server", "Set-Cookie", "set-cookie", "Host", "User-Agent",
		"user-agent", "Connection", "Content-Length", "Transfer-Encoding", "Trailer", "Cookie",
		"X-1-A", "X-1-a", "-X", "X--Y", "X-", "", "A b", "a b", "X_Y", "x_y", "X\rY", "x\ny", "Ä-B", "\xffA",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aAzZ-09_ :\r\n\x80"
	for range 2000 {
		b := make([]byte, 1+rng.IntN(8))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		names = append(names, string(b))
	}
	for _, name := range [][]byte{refinedName, duplicatesName, removedName, signedName} {
		if !canonicalName(name) {
			t.Errorf("%s is set with SetCanonical, but fasthttp would normalize it", name)
		}
	}
	for _, name := range names {
		k, v := []byte(name), []byte("v1; a=b")
		var wantResp, gotResp fasthttp.ResponseHeader
		wantResp.SetBytesKV(k, v)
		setHeader(&gotResp, k, v)
		if got, want := headerLines(&gotResp), headerLines(&wantResp); !slices.Equal(got, want) {
			t.Errorf("response header %q: setHeader gives %q, SetBytesKV %q", name, got, want)
		}
		var wantReq, gotReq fasthttp.RequestHeader
		wantReq.SetBytesKV(k, v)
		setHeader(&gotReq, k, v)
		if got, want := headerLines(&gotReq), headerLines(&wantReq); !slices.Equal(got, want) {
			t.Errorf("request header %q: setHeader gives %q, SetBytesKV %q", name, got, want)
		}
	}
}

// TestCopyAnswerHeader: copying an engine's head to the client's answer
// gives what copying every header but the hop-by-hop ones and
// Content-Encoding with SetBytesKV gives, for engines' heads and one
// with every kind of header fasthttp keeps apart.
func TestCopyAnswerHeader(t *testing.T) {
	heads := map[string]string{
		"mixed": "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nSERVER: Engine/1\r\nset-cookie: a=1\r\nSet-Cookie: b=2\r\n" +
			"content-encoding: identity\r\nx-a-b: 1\r\nX-A-B: 2\r\nDATE: Sun, 29 Nov 2026 06:00:00 GMT\r\nKeep-Alive: timeout=5\r\n" +
			"connection: keep-alive\r\nTE: trailers\r\nVary: Accept-Encoding\r\nx_odd: 3\r\nContent-Length: 10\r\n\r\n",
	}
	for kind, head := range engineHeads {
		heads[kind] = head
	}
	for kind, head := range heads {
		var src fasthttp.ResponseHeader
		src.DisableNormalizing()
		if err := src.Read(bufio.NewReader(strings.NewReader(head))); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		var got, want fasthttp.ResponseHeader
		copyAnswerHeader(&got, &src)
		for k, v := range src.All() {
			if !isHop(k) && !strings.EqualFold(string(k), "Content-Encoding") {
				want.SetBytesKV(k, v)
			}
		}
		if g, w := headerLines(&got), headerLines(&want); !slices.Equal(g, w) || len(w) == 0 {
			t.Errorf("%s: copied head %q, want %q", kind, g, w)
		}
	}
}

// TestAppendURI: the URI of an engine request is what url.URL.String
// writes for the base URL with the request's path appended and its
// query, for bases with paths, users, IPv6 hosts, an escaped path, a
// bare '?' and a fragment, and paths with every byte.
func TestAppendURI(t *testing.T) {
	bases := []string{"http://127.0.0.1:9200", "http://127.0.0.1:9200/", "http://h:1/es", "http://h:1/es/",
		"https://user:p%40ss@h", "http://[::1]:9200", "http://h/a%2Fb", "http://h/?", "http://h/#frag", "http://h/a%20b",
		"http://h/a;b,c:d@e", "http://h/%C3%A4"}
	paths := []string{"/llvm/_search?q=the&size=150", "/_search", "", "?q=1", "x/y", "/a b", "/ä", "/a%2F", "/*", "*",
		"/a;b,c/d:e@f$g&h=i+j!k'l(m)n", "/~x", "/a?b?c", "/#x", "//x", "/x?", "/a/b?q=%20&r=ä"}
	for c := range 256 {
		paths = append(paths, "/a"+string([]byte{byte(c)})+"b?q="+string([]byte{byte(c)}))
	}
	for _, base := range bases {
		u, err := newUpstream(Engine{Name: "e", URL: base, Adapter: engine.Config{Kind: "elasticsearch"}})
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		for _, p := range paths {
			target := *u.base
			pth, rawQuery, _ := strings.Cut(p, "?")
			target.Path = strings.TrimSuffix(u.base.Path, "/") + pth
			target.RawQuery = rawQuery
			if got, want := string(u.appendURI(nil, p)), target.String(); got != want {
				t.Errorf("base %s, path %q: URI %q, want %q", base, p, got, want)
			}
		}
	}
	// A search's URI under a plain base is written as it is, not
	// through url.URL, which allocates.
	u, err := newUpstream(Engine{Name: "e", URL: "http://127.0.0.1:9200/", Adapter: engine.Config{Kind: "elasticsearch"}})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { dst = u.appendURI(dst[:0], "/llvm/_search?q=the&size=150") }); n != 0 {
		t.Errorf("appendURI of a search: %v allocations, want 0", n)
	}
}
