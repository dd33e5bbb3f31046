package proxy

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/proxy/engine"
)

// copyBuffer bounds what winnow's copy of a streamed answer holds between
// reading the engine and writing the client (fasthttp's 4 KiB buffers).
const copyBuffer = 8 << 10

// idleTimeout is the engine timeout of these tests: each test's slowness
// is several times longer, so that a whole-answer deadline would cut.
const idleTimeout = time.Second

// throttled reads from r at most rate bytes a second, in reads of at most
// 16 KiB.
type throttled struct {
	r     io.Reader
	rate  float64
	start time.Time
	n     int64
}

func (t *throttled) Read(p []byte) (int, error) {
	if t.start.IsZero() {
		t.start = time.Now()
	}
	if due := t.start.Add(time.Duration(float64(t.n) / t.rate * float64(time.Second))); time.Now().Before(due) {
		time.Sleep(time.Until(due))
	}
	n, err := t.r.Read(p[:min(len(p), 16<<10)])
	t.n += int64(n)
	return n, err
}

// smallWindowGet sends GET path to addr on a connection with a small
// receive buffer, so an answer stays in the engine's and winnow's hands,
// not in the client's socket buffers, and returns the connection, closed
// at the test's end, whose reads and writes fail after within.
func smallWindowGet(t *testing.T, addr, path string, within time.Duration) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.(*net.TCPConn).SetReadBuffer(256 << 10); err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(within))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, addr)
	return c
}

// slowGet sends GET path to addr (smallWindowGet) and reads the answer at
// rate bytes a second. It returns the status, the SHA-256 and length of
// the body read, and the error that ended reading the body (nil at its
// end).
func slowGet(t *testing.T, addr, path string, rate float64, within time.Duration) (code int, sum [32]byte, n int64, err error) {
	t.Helper()
	c := smallWindowGet(t, addr, path, within)
	resp, err := http.ReadResponse(bufio.NewReaderSize(&throttled{r: c, rate: rate}, 16<<10), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	h := sha256.New()
	n, err = io.Copy(h, resp.Body)
	return resp.StatusCode, [32]byte(h.Sum(nil)), n, err
}

// TestSlowClientLargePassThrough streams a 24 MB answer through winnow to
// a client reading 4 MB a second (about six seconds) while the engine's
// timeout and winnow's WriteTimeout are one second: the engine keeps
// sending whenever winnow reads, and the client keeps taking, so the whole
// answer arrives intact. A deadline on the whole answer (fasthttp's
// ReadTimeout or WriteTimeout alone) cut it after one second.
func TestSlowClientLargePassThrough(t *testing.T) {
	const pad = 24_000_000
	eng := startLargeEngine(t)
	e := largeEngine(eng.URL)
	e.Timeout = idleTimeout
	// Answers over 1 MiB pass through: the client's own request streams
	// from the engine, read as fast as the client reads.
	_, base := startProxy(t, Options{Engines: []Engine{e}, AnswerBytesInFlight: 1 << 20, WriteTimeout: idleTimeout})
	addr := base[len("http://"):]
	for _, path := range []string{
		fmt.Sprintf("/%d/_search?q=slow&size=3", pad),
		fmt.Sprintf("/%d-chunked/_search?q=slow&size=3", pad), // of unknown length
	} {
		code, sum, n, err := slowGet(t, addr, path, 4<<20, 5*time.Minute)
		want, wantN := answerSum(path, pad)
		if err != nil || code != 200 || n != int64(wantN) || sum != want {
			t.Errorf("GET %s slowly: %d, %d of %d bytes, %v, intact %v; want 200 and the engine's whole answer",
				path, code, n, wantN, err, sum == want)
		}
	}
}

// TestSlowClientLargeRefined sends a refined answer of about 16 MB, held
// in memory and written in one piece, to a client reading 4 MB a second
// under a one-second WriteTimeout: it arrives whole (its Content-Length
// read without error), as a pass-through does.
func TestSlowClientLargeRefined(t *testing.T) {
	const pad = 16_000_000
	eng := startLargeEngine(t)
	_, base := startProxy(t, Options{Engines: []Engine{largeEngine(eng.URL)}, WriteTimeout: idleTimeout})
	path := fmt.Sprintf("/%d/_search?q=slow&size=3", pad)
	code, sum, n, err := slowGet(t, base[len("http://"):], path, 4<<20, 5*time.Minute)
	if passed, _ := answerSum(path, pad); err != nil || code != 200 || n < pad || sum == passed {
		t.Errorf("GET %s slowly: %d, %d bytes, %v, passed through %v; want 200 and the whole refined answer", path, code, n, err, sum == passed)
	}
}

// TestStalledClientCut: a client that stops taking a large answer is cut
// once winnow's writes to it have made no progress for WriteTimeout: when
// it reads again it gets what the socket buffers held, then an error, not
// the whole answer.
func TestStalledClientCut(t *testing.T) {
	const pad = 24_000_000
	eng := startLargeEngine(t)
	e := largeEngine(eng.URL)
	_, base := startProxy(t, Options{Engines: []Engine{e}, AnswerBytesInFlight: 1 << 20, WriteTimeout: idleTimeout})
	path := fmt.Sprintf("/%d/_search?q=stall&size=3", pad)
	c := smallWindowGet(t, base[len("http://"):], path, 5*time.Minute)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	time.Sleep(4 * idleTimeout) // takes nothing
	n, err := io.Copy(io.Discard, resp.Body)
	if _, want := answerSum(path, pad); err == nil || n >= int64(want) {
		t.Errorf("after stalling: %d of %d bytes, %v; want the answer cut short and an error", n, want, err)
	}
}

// startTrickleEngine serves an Elasticsearch answer of three hits in
// pieces: the head, then each hit half a second apart, so the whole
// answer takes longer than idleTimeout though the engine is never silent
// for it.
// The paths it was asked for go to asked.
func startTrickleEngine(t *testing.T, asked chan<- string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- r.URL.RequestURI()
		w.Header().Set("Content-Type", "application/json")
		f := w.(http.Flusher)
		io.WriteString(w, `{"took":1,"timed_out":false,"hits":{"total":{"value":3,"relation":"eq"},"max_score":1,"hits":[`)
		f.Flush()
		for i := range 3 {
			time.Sleep(idleTimeout / 2)
			if i > 0 {
				io.WriteString(w, ",")
			}
			fmt.Fprintf(w, `{"_index":"t","_id":"%d","_score":1,"_source":{"url":"http://127.0.0.1:9/%d","title":"hit %d"}}`, i, i, i)
			f.Flush()
		}
		time.Sleep(idleTimeout / 2)
		io.WriteString(w, `]}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestTrickledAnswerBounded: an answer winnow keeps whole to refine is
// bounded by the engine's timeout, not only its silence: one that takes
// two seconds to arrive, never silent for the engine's one-second
// timeout, gets a 504 after the timeout, and the client's own request is
// not sent after it (the fallback shares the deadline the trickle used).
// The same answer passed through (winnow_mode=off) streams to the client
// whole: a relayed body is bounded by the engine's silence only.
func TestTrickledAnswerBounded(t *testing.T) {
	asked := make(chan string, 8)
	eng := startTrickleEngine(t, asked)
	e := Engine{Name: "es", URL: eng.URL, Adapter: engine.Config{Kind: "elasticsearch"}, Timeout: idleTimeout}
	_, base := startProxy(t, Options{Engines: []Engine{e}})
	if code, body := get(t, base+"/_search?q=trickle&size=3"); code != http.StatusGatewayTimeout {
		t.Errorf("GET refined: %d, want 504\n%s", code, body)
	}
	if p := <-asked; !strings.Contains(p, "size=9") {
		t.Errorf("the engine was asked for %q; want winnow's over-fetch (size=9)", p)
	}
	code, body := get(t, base+"/_search?q=trickle&size=3&winnow_mode=off")
	var a esAnswer
	if err := json.Unmarshal([]byte(body), &a); code != 200 || err != nil || len(a.Hits.Hits) != 3 {
		t.Errorf("GET passed through: %d, %v, %d hits; want 200 and 3 hits\n%s", code, err, len(a.Hits.Hits), body)
	}
	close(asked)
	var paths []string
	for p := range asked {
		paths = append(paths, p)
	}
	if len(paths) != 1 || strings.Contains(paths[0], "size=9") {
		t.Errorf("after the refined request, the engine was asked for %q; want only the pass-through", paths)
	}
}

// TestSilentEngineCut: an engine that sends half of an answer and then
// says nothing is cut once it has been silent for the engine's timeout.
// The client, which asked for a pass-through, gets the engine's status and
// the bytes the engine sent but those still in winnow's copy buffer, then
// the connection closes: a body shorter than its Content-Length, which
// HTTP clients report as an unexpected EOF.
// The engine stays silent until the client is done, so a winnow that
// waited for it would fail here (after the client's own generous
// deadline), not pass.
func TestSilentEngineCut(t *testing.T) {
	clientDone := make(chan struct{})
	const half = 1 << 20
	eng := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(2*half))
		w.Write(make([]byte, half))
		w.(http.Flusher).Flush()
		<-clientDone
	}))
	defer eng.Close()
	defer close(clientDone) // before eng.Close, which waits for the handler
	e := Engine{Name: "es", URL: eng.URL, Adapter: engine.Config{Kind: "elasticsearch"}, Timeout: idleTimeout}
	_, base := startProxy(t, Options{Engines: []Engine{e}})
	code, _, n, err := slowGet(t, base[len("http://"):], "/_search?q=silent&winnow_mode=off", 64<<20, time.Minute)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		t.Fatalf("the client waited a minute: winnow never cut the silent engine")
	case code != 200 || n <= half-copyBuffer || n > half || !errors.Is(err, io.ErrUnexpectedEOF):
		t.Errorf("got %d, %d bytes, %v; want 200, the %d bytes the engine sent (but at most %d still in winnow's buffer), then an unexpected EOF",
			code, n, err, half, copyBuffer)
	}
}

// TestMetasearchTrickleBounded: the metasearch reads whole answers, so
// its per-engine deadline still bounds an engine that trickles for ever,
// never silent for its timeout: the page comes back with the demo
// engine's results and that engine's error. A winnow that waited would
// fail here after the client's own generous deadline.
func TestMetasearchTrickleBounded(t *testing.T) {
	d := startDemo(t, demo.Options{})
	stop := make(chan struct{})
	trickle := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"took":1,"hits":{"total":{"value":1,"relation":"eq"},"hits":[`)
		for {
			w.(http.Flusher).Flush()
			select {
			case <-stop:
				return
			case <-time.After(idleTimeout / 4):
			}
			io.WriteString(w, " ")
		}
	}))
	defer trickle.Close()
	defer close(stop) // before trickle.Close, which waits for the handler
	slow := Engine{Name: "trickle", URL: trickle.URL, Adapter: engine.Config{Kind: "elasticsearch"}, Timeout: idleTimeout}
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL()), slow}})
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Get(base + "/_winnow/search.json?q=benchmark")
	if err != nil {
		t.Fatalf("the search page: %v (winnow waited for the trickling engine)", err)
	}
	groups, errs := searchPageEngines(t, resp)
	if groups == 0 || errs["trickle"] == "" || errs["es"] != "" {
		t.Errorf("%d groups, engine errors %q; want the demo's results and the trickling engine's error", groups, errs)
	}
}

// searchPageEngines reads a /_winnow/search.json answer and closes its
// body: the number of groups, and each engine's error by name ("" for
// none).
func searchPageEngines(t *testing.T, resp *http.Response) (groups int, errs map[string]string) {
	t.Helper()
	defer resp.Body.Close()
	var page struct {
		Engines []struct {
			Name  string `json:"name"`
			Error string `json:"error"`
		} `json:"engines"`
		Groups []json.RawMessage `json:"groups"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the search page: %d, %v", resp.StatusCode, err)
	}
	errs = map[string]string{}
	for _, e := range page.Engines {
		errs[e.Name] = e.Error
	}
	return len(page.Groups), errs
}

// deadlineCounter is a connection that counts the read deadlines set on
// it and remembers the last.
type deadlineCounter struct {
	net.Conn
	sets int
	last time.Time
}

func (c *deadlineCounter) SetReadDeadline(t time.Time) error {
	c.sets++
	c.last = t
	return c.Conn.SetReadDeadline(t)
}

// TestIdleConnArmsOnlyNewDeadlines: under fasthttp's request deadline
// every read of an engine connection has that deadline, which the
// connection keeps, so reads set none; once the deadline is lifted
// (relaxDeadline) each read has the engine's silence from its start,
// so each sets its own.
func TestIdleConnArmsOnlyNewDeadlines(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	under := &deadlineCounter{Conn: a}
	c := &idleConn{Conn: under, idle: time.Hour}
	go func() {
		for range 6 {
			b.Write([]byte("x"))
		}
	}()
	read := func() {
		t.Helper()
		if _, err := c.Read(make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
	}
	hard := time.Now().Add(time.Minute)
	if err := c.SetReadDeadline(hard); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		read()
	}
	if under.sets != 1 || !under.last.Equal(hard) {
		t.Errorf("under the request deadline: %d deadlines set, the last %v; want the one request deadline %v", under.sets, under.last, hard)
	}
	c.hard.Store(0) // as relaxDeadline does
	for i := range 3 {
		before := time.Now()
		read()
		if under.sets != 2+i || under.last.Before(before.Add(time.Hour)) {
			t.Errorf("relaxed read %d: %d deadlines set, the last %v; want a new one an hour after the read's start (%v)", i, under.sets, under.last, before)
		}
	}
}
