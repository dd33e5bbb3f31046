package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/proxy/engine"
)

// largeAnswer writes a valid Elasticsearch answer of three hits whose
// sources carry about pad bytes of the request's own URI, so an answer
// to the client's request and one to winnow's rewritten request differ.
func largeAnswer(w io.Writer, uri string, pad int) {
	io.WriteString(w, `{"took":1,"timed_out":false,"hits":{"total":{"value":3,"relation":"eq"},"max_score":1,"hits":[`)
	word := []byte(uri + " ")
	run := bytes.Repeat(word, max(1, (64<<10)/len(word)))
	for i := range 3 {
		if i > 0 {
			io.WriteString(w, ",")
		}
		fmt.Fprintf(w, `{"_index":"big","_id":"%d","_score":1,"_source":{"url":"http://127.0.0.1:9/%d","title":"hit %d","pad":"`, i, i, i)
		for left := pad / 3; left > 0; left -= len(run) {
			w.Write(run[:min(left, len(run))])
		}
		io.WriteString(w, `"}}`)
	}
	io.WriteString(w, `]}}`)
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

// answerSum is the SHA-256 and length of largeAnswer(uri, pad).
func answerSum(uri string, pad int) ([32]byte, int) {
	h := sha256.New()
	c := &countWriter{}
	largeAnswer(io.MultiWriter(h, c), uri, pad)
	return [32]byte(h.Sum(nil)), c.n
}

// startLargeEngine serves largeAnswer on loopback, generated as it is
// written: the size is the index name ("/20000000/_search"), a
// Content-Length is sent unless the name ends in "-chunked"
// ("/20000000-chunked/_search"), and then the answer is chunked.
func startLargeEngine(t testing.TB) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		index, _, _ := strings.Cut(strings.Trim(r.URL.Path, "/"), "/")
		size, chunked := strings.CutSuffix(index, "-chunked")
		pad, err := strconv.Atoi(size)
		if err != nil {
			http.Error(w, "bad size", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if !chunked {
			_, n := answerSum(r.URL.RequestURI(), pad)
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		largeAnswer(w, r.URL.RequestURI(), pad)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// fetchSum GETs url and returns its status, the SHA-256 of its body and
// the body itself when it is under keep bytes (else nil).
func fetchSum(url string, keep int) (int, [32]byte, []byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, [32]byte{}, nil, err
	}
	defer resp.Body.Close()
	h := sha256.New()
	var head bytes.Buffer
	n, err := io.Copy(io.MultiWriter(h, &limitedBuffer{&head, keep}), resp.Body)
	if err != nil {
		return 0, [32]byte{}, nil, err
	}
	body := head.Bytes()
	if n > int64(keep) {
		body = nil
	}
	return resp.StatusCode, [32]byte(h.Sum(nil)), body, nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

var unrefinedBudget = regexp.MustCompile(`(?m)^winnow_answers_unrefined_total\{reason="budget"\} (\d+)$`)

// unrefinedOverBound reads winnow_answers_unrefined_total{reason="budget"}
// from the proxy's /metrics (0 when absent).
func unrefinedOverBound(t *testing.T, base string) int {
	t.Helper()
	_, m := get(t, base+"/metrics")
	sub := unrefinedBudget.FindStringSubmatch(m)
	if sub == nil {
		return 0
	}
	n, _ := strconv.Atoi(sub[1])
	return n
}

func largeEngine(url string) Engine {
	// A generous timeout: the answers are large and the machine may be
	// loaded; nothing here measures time.
	return Engine{Name: "es", URL: url, Adapter: engine.Config{Kind: "elasticsearch"}, Timeout: time.Minute}
}

// TestAnswerBytesInFlightBound sends eight concurrent requests for 20 MB
// answers and four for 3 MB ones through a proxy whose answers in flight
// are bounded to 16 MiB: every client gets its own answer (the engine's
// bytes for its own request when passed through, a refinement when
// refined), the budget never holds more than its bound, and every
// answer passed through is counted.
func TestAnswerBytesInFlightBound(t *testing.T) {
	const bound = 16 << 20
	eng := startLargeEngine(t)
	s, base := startProxy(t, Options{Engines: []Engine{largeEngine(eng.URL)}, AnswerBytesInFlight: bound})
	type result struct {
		path      string
		pad       int
		passed    bool // the engine's own answer to the client's request
		refined   bool // a rendering of three hits
		err       error
		code, got int
	}
	var reqs []*result
	for i := range 8 {
		reqs = append(reqs, &result{path: fmt.Sprintf("/20000000/_search?q=big%d&size=3", i), pad: 20_000_000})
	}
	for i := range 4 {
		reqs = append(reqs, &result{path: fmt.Sprintf("/3000000/_search?q=small%d&size=3", i), pad: 3_000_000})
	}
	var wg sync.WaitGroup
	for _, r := range reqs {
		wg.Go(func() {
			code, sum, body, err := fetchSum(base+r.path, 8<<20)
			r.err, r.code = err, code
			want, _ := answerSum(r.path, r.pad)
			r.passed = sum == want
			if !r.passed && body != nil {
				var a esAnswer
				r.refined = json.Unmarshal(body, &a) == nil
				r.got = len(a.Hits.Hits)
			}
		})
	}
	wg.Wait()
	passed := 0
	for _, r := range reqs {
		switch {
		case r.err != nil || r.code != 200:
			t.Errorf("GET %s: %d, %v; want 200", r.path, r.code, r.err)
		case r.passed:
			passed++
		case r.pad > bound/2:
			t.Errorf("GET %s: not the engine's answer byte for byte, though it cannot fit the bound", r.path)
		case !r.refined || r.got != 3:
			t.Errorf("GET %s: neither the engine's answer nor a refined one (%d hits)", r.path, r.got)
		}
	}
	if hw := s.inflight.highWater(); hw > bound || hw == 0 {
		t.Errorf("bytes in flight peaked at %d, want 0 < peak <= %d", hw, bound)
	}
	if passed == len(reqs) {
		t.Errorf("every answer passed through; the first small one fits the empty budget and must be refined")
	}
	if n := unrefinedOverBound(t, base); n != passed {
		t.Errorf("winnow_answers_unrefined_total{reason=\"budget\"} = %d, want %d (the answers passed through)", n, passed)
	}
	if n := settledUsed(s); n != 0 {
		t.Errorf("%d bytes still held after every answer", n)
	}
}

// TestAnswerBytesInFlightChunked sends answers without a Content-Length:
// a 20 MB one is read chunk by chunk until the 16 MiB bound would be
// exceeded, then dropped, and the client's own request streams through
// byte for byte; a 1 MB one fits and is refined.
func TestAnswerBytesInFlightChunked(t *testing.T) {
	const bound = 16 << 20
	eng := startLargeEngine(t)
	s, base := startProxy(t, Options{Engines: []Engine{largeEngine(eng.URL)}, AnswerBytesInFlight: bound})

	path := "/20000000-chunked/_search?q=big&size=3"
	code, sum, _, err := fetchSum(base+path, 0)
	if want, _ := answerSum(path, 20_000_000); err != nil || code != 200 || sum != want {
		t.Errorf("GET %s: %d, %v, engine's answer %v; want 200 and the engine's answer byte for byte", path, code, err, sum == want)
	}
	if hw := s.inflight.highWater(); hw > bound || hw == 0 {
		t.Errorf("bytes in flight peaked at %d, want 0 < peak <= %d (read until the bound)", hw, bound)
	}
	if n := unrefinedOverBound(t, base); n != 1 {
		t.Errorf("winnow_answers_unrefined_total{reason=\"budget\"} = %d, want 1", n)
	}

	path = "/1000000-chunked/_search?q=small&size=3"
	code, sum, body, err := fetchSum(base+path, 8<<20)
	var a esAnswer
	if want, _ := answerSum(path, 1_000_000); err != nil || code != 200 || sum == want || json.Unmarshal(body, &a) != nil || len(a.Hits.Hits) != 3 {
		t.Errorf("GET %s: %d, %v, %d hits, passed through %v; want 200 and a refined answer of 3 hits", path, code, err, len(a.Hits.Hits), sum == want)
	}
	if n := unrefinedOverBound(t, base); n != 1 {
		t.Errorf("winnow_answers_unrefined_total{reason=\"budget\"} = %d after an answer that fits, want still 1", n)
	}
	if n := settledUsed(s); n != 0 {
		t.Errorf("%d bytes still held after every answer", n)
	}
}

// TestAdmitWait: under a bound that holds two of four concurrent 3 MB
// answers (6 MB each with the rendering), an AdmitWait longer than any
// refinement lets every answer wait for room and be refined, none passed
// through; the default is 50 ms.
func TestAdmitWait(t *testing.T) {
	if got := (Options{}).WithDefaults().AdmitWait; got != 50*time.Millisecond {
		t.Errorf("default AdmitWait %s, want 50ms", got)
	}
	eng := startLargeEngine(t)
	s, base := startProxy(t, Options{Engines: []Engine{largeEngine(eng.URL)}, AnswerBytesInFlight: 13 << 20, AdmitWait: time.Minute})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			path := fmt.Sprintf("/3000000/_search?q=wait%d&size=3", i)
			code, sum, _, err := fetchSum(base+path, 0)
			if want, _ := answerSum(path, 3_000_000); err != nil || code != 200 || sum == want {
				t.Errorf("GET %s: %d, %v, passed through %v; want 200 and a refined answer", path, code, err, sum == want)
			}
		})
	}
	wg.Wait()
	if n := unrefinedOverBound(t, base); n != 0 {
		t.Errorf("%d answers passed through over the bound; want every one to wait and be refined", n)
	}
	if hw := s.inflight.highWater(); hw > 13<<20 {
		t.Errorf("bytes in flight peaked at %d, over the bound", hw)
	}
}

// TestByteBudgetWait checks admission: a request waiting for room gets it
// when another gives bytes back, one larger than the whole bound is
// refused at once, and one whose context ends, or whose deadline has
// passed, stops waiting.
func TestByteBudgetWait(t *testing.T) {
	b := &byteBudget{max: 10}
	if !b.take(8) {
		t.Fatal("take(8) of 10 refused")
	}
	got := make(chan bool)
	go func() { got <- b.takeWait(waitBound{}, 5, time.Hour) }()
	b.give(8)
	if !<-got {
		t.Error("takeWait(5) refused after 8 of 10 were given back")
	}
	if b.takeWait(waitBound{}, 11, time.Hour) {
		t.Error("takeWait(11) of a bound of 10 admitted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { got <- b.takeWait(ctxBound(ctx), 6, time.Hour) }()
	cancel()
	if <-got {
		t.Error("takeWait(6) with 5 of 10 held admitted")
	}
	// An hour's wait that its deadline ends at once.
	if b.takeWait(waitBound{deadline: time.Now().Add(-time.Millisecond)}, 6, time.Hour) {
		t.Error("takeWait(6) past its deadline, with 5 of 10 held, admitted")
	}
	if used, peak := b.used(), b.highWater(); used != 5 || peak != 8 {
		t.Errorf("used %d, high-water %d; want 5 and 8", used, peak)
	}
}

// TestRenderingHeldUntilSent: a refined answer holds its rendering's
// bytes of the bound until the client has received it, not only while
// winnow reads and renders: while a client that takes nothing holds a
// 10 MB rendering, a 14 MB answer, which would fit the 32 MiB bound
// alone (28 MB with its rendering) but not beside it, passes through to
// its client byte for byte instead of being refined; once the first
// client has read its answer, the bound holds nothing.
func TestRenderingHeldUntilSent(t *testing.T) {
	const bound = 32 << 20
	eng := startLargeEngine(t)
	s, base := startProxy(t, Options{Engines: []Engine{largeEngine(eng.URL)}, AnswerBytesInFlight: bound})
	addr := base[len("http://"):]
	first := "/10000000/_search?q=held&size=3"
	c := smallWindowGet(t, addr, first, 5*time.Minute)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The head is written after the handler returned: only the rendering,
	// still being sent, is held now.
	if held := s.inflight.used(); resp.StatusCode != 200 || held < 9_000_000 || held > bound {
		t.Fatalf("GET %s: %d, %d bytes held while the client reads; want 200 and the rendering's >= 9 MB", first, resp.StatusCode, held)
	}

	second := "/14000000/_search?q=beside&size=3"
	code, sum, _, err := fetchSum(base+second, 0)
	if want, _ := answerSum(second, 14_000_000); err != nil || code != 200 || sum != want {
		t.Errorf("GET %s beside the held rendering: %d, %v, the engine's answer %v; want 200 and the engine's answer byte for byte", second, code, err, sum == want)
	}
	if hw := s.inflight.highWater(); hw > bound {
		t.Errorf("bytes in flight peaked at %d, over the bound %d", hw, bound)
	}

	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || n < 10_000_000 {
		t.Fatalf("GET %s: %d bytes, %v; want the whole refined answer", first, n, err)
	}
	if held := settledUsed(s); held != 0 {
		t.Errorf("%d bytes still held after the client read its answer", held)
	}
}

// TestByteBudgetKeepsLargeBuffers: a large buffer is kept for reuse only
// while the bytes held and kept fit the bound, a reservation that needs
// its room drops it, and a small request never takes it up.
func TestByteBudgetKeepsLargeBuffers(t *testing.T) {
	const large = 4 * maxPooledBuffer
	b := &byteBudget{max: 3 * large}
	if !b.take(2 * large) {
		t.Fatal("take(2 large) of 3 refused")
	}
	b.recycle(make([]byte, large)) // 2 held + 1 kept: fits
	b.recycle(make([]byte, large)) // 2 + 2: over the bound, dropped
	if b.kept != large || len(b.bufs) != 1 {
		t.Fatalf("kept %d bytes in %d buffers; want one large buffer", b.kept, len(b.bufs))
	}
	if buf := b.buffer(16); cap(buf) == large {
		t.Error("a 16-byte request took the large buffer")
	}
	if !b.take(large / 2) {
		t.Fatal("take(large/2) refused with one large buffer's room kept")
	}
	if b.kept != 0 || len(b.bufs) != 0 {
		t.Errorf("after a take that needed its room: kept %d bytes in %d buffers; want none", b.kept, len(b.bufs))
	}
	b.give(2*large + large/2)
	b.recycle(make([]byte, large))
	if buf := b.buffer(large - 1); cap(buf) != large || b.kept != 0 {
		t.Errorf("buffer(large-1) = cap %d, kept %d after; want the kept buffer and nothing kept", cap(buf), b.kept)
	}
}

// settledUsed is the bytes s's answer budget holds once every rendering
// sent has been given back: fasthttp closes a body stream (heldBody) just
// after its last byte is written, which may be after the client has it,
// so this waits up to a minute for the count to reach zero (not a timing
// bound: a test fails only if it never does).
func settledUsed(s *Server) int64 {
	for wait := time.Now().Add(time.Minute); s.inflight.used() != 0 && time.Now().Before(wait); {
		time.Sleep(10 * time.Millisecond)
	}
	return s.inflight.used()
}

// TestAnswerCacheUsedBytes checks what the memory limit counts of the
// answer cache: nothing when empty or off, and every remembered answer
// across both generations.
func TestAnswerCacheUsedBytes(t *testing.T) {
	var off *answerCache
	if n := off.usedBytes(); n != 0 {
		t.Errorf("no cache: %d bytes used, want 0", n)
	}
	c := newAnswerCache(64 << 10)
	if n := c.usedBytes(); n != 0 {
		t.Errorf("empty: %d bytes used, want 0", n)
	}
	a := &answer{body: make([]byte, 1000), out: make([]byte, 1500)}
	want := int64(0)
	for k := range uint64(30) { // 30 answers of 2,756 bytes: past one generation of 32 KiB
		c.put(k, a)
		want += a.size()
	}
	got := c.usedBytes()
	if gen := int64(32 << 10); got <= gen || got > want || got > 2*gen {
		t.Errorf("after %d bytes put: %d used, want over one generation (%d) and within both", want, got, gen)
	}
}

// pieceReader gives its bytes a few at a time, as an engine's answer
// arrives from the network.
type pieceReader struct {
	data  []byte
	piece int
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.piece)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// writeLog records the size of every Write.
type writeLog struct {
	bytes.Buffer
	writes []int
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.writes = append(w.writes, len(p))
	return w.Buffer.Write(p)
}

// TestRelayWritesWholeChunks checks that a relayed answer which arrives
// in pieces of 1.5 KB is written to the client in relayChunk steps, not
// a piece at a time (each write is a system call and a wake-up of the
// client): an answer under relayChunk in one write, a larger one in full
// chunks and its rest, every byte in order.
func TestRelayWritesWholeChunks(t *testing.T) {
	for _, size := range []int{100, 26_000, 3*relayChunk + 4000} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte('a' + i%26)
		}
		resp := fasthttp.AcquireResponse()
		resp.SetBodyStream(&pieceReader{data: data, piece: 1500}, size)
		head := []byte("HEAD")
		body := &engineBody{head: head, resp: resp}
		var w writeLog
		n, err := body.WriteTo(&w)
		body.Close()
		if err != nil || n != int64(size+len(head)) {
			t.Fatalf("%d bytes: WriteTo = %d, %v", size, n, err)
		}
		if !bytes.Equal(w.Bytes(), append(head, data...)) {
			t.Errorf("%d bytes: the client got other bytes", size)
		}
		want := (size + len(head) + relayChunk - 1) / relayChunk
		if len(w.writes) != want {
			t.Errorf("%d bytes in pieces of 1500: %d writes %v, want %d", size, len(w.writes), w.writes, want)
		}
	}
}
