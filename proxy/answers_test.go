package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/proxy/engine"
)

func TestDigitsApart(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`{"took":5,"x":1}`, `{"took":5,"x":1}`, true},
		{`{"took":5,"x":1}`, `{"took":15,"x":1}`, true},
		{`{"took":19,"x":1}`, `{"took":2,"x":1}`, true},
		{`{"took":5,"x":1}`, `{"took":,"x":1}`, true}, // digits only: the JSON is the backend's
		{`{"took":5,"x":1}`, `{"took":6,"x":2}`, false},
		{`{"took":5,"x":1}`, `{"took":a,"x":1}`, false},
		{`{"took":5,"timed_out":false}`, `{"took":5,"timed_out":true}`, false},
		{`{"took":5}`, `{"took":5,"x":1}`, false},
		{``, `1`, true},
		{``, ``, true},
	} {
		if got := digitsApart([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("digitsApart(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestAnswerCache runs two proxies, one with the answer cache and one
// without, in front of the same backend, and checks that every answer is
// the same byte for byte: when the backend answers as before but for the
// time it took (served from the cache, with the new time), when a hit's
// score changes (a digit inside the results: refined anew), and when a
// signature the cached answer used leaves the signature cache (refined
// anew, the page fetched again).
func TestAnswerCache(t *testing.T) {
	d := startDemo(t, demo.Options{})
	var took atomic.Int64
	var editScore atomic.Bool
	tookRE := regexp.MustCompile(`^\{"took":\d+`)
	scoreRE := regexp.MustCompile(`"_score":[0-9.]+`)
	backend := behindDemo(t, d, func(w http.ResponseWriter, resp *http.Response) {
		b, _ := io.ReadAll(resp.Body)
		b = tookRE.ReplaceAll(b, []byte(`{"took":`+strconv.FormatInt(took.Load(), 10)))
		if editScore.Load() {
			done := false
			b = scoreRE.ReplaceAllFunc(b, func(m []byte) []byte {
				if done {
					return m
				}
				done = true
				// The same length: only the comparison of the
				// results can tell the answers apart.
				return regexp.MustCompile(`[0-9]`).ReplaceAll(m, []byte("9"))
			})
		}
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		w.Write(b)
	})

	on, onBase := startProxy(t, Options{Engines: []Engine{esEngine(backend.URL)}, Budget: 5 * time.Second})
	off, offBase := startProxy(t, Options{Engines: []Engine{esEngine(backend.URL)}, Budget: 5 * time.Second, AnswerCacheBytes: -1})
	if off.memo.answers != nil {
		t.Fatal("AnswerCacheBytes -1 does not turn the answer cache off")
	}
	const path = "/llvm/_search?q=the&size=10"
	same := func(step string) string {
		t.Helper()
		bodyOn := sameAnswers(t, step, on, onBase, off, offBase, path)
		if want := `{"took":` + strconv.FormatInt(took.Load(), 10) + `,`; !strings.HasPrefix(bodyOn, want) {
			t.Fatalf("%s: answer starts %.40q, want the backend's own %q", step, bodyOn, want)
		}
		return bodyOn
	}

	// Warm: fetched and signed, then remembered from the cache, then
	// kept at its second sighting; the times differ every time.
	for i := range 5 {
		took.Store(int64(3 + 7*i))
		same("warm-up " + strconv.Itoa(i))
	}
	hits := on.memo.answers.hits.Load()
	if hits == 0 {
		t.Fatal("five identical answers: none served from the answer cache")
	}
	if a := decodeES(t, same("cached")); len(a.Hits.Hits) != 10 {
		t.Fatalf("cached answer has %d hits, want 10", len(a.Hits.Hits))
	}
	if on.memo.answers.hits.Load() != hits+1 {
		t.Fatalf("answer-cache hits %d -> %d, want one more", hits, on.memo.answers.hits.Load())
	}

	// A digit inside the results: the extent differs, so no reuse.
	editScore.Store(true)
	hits = on.memo.answers.hits.Load()
	if body := same("score changed"); !strings.Contains(body, `"_score":9.999`) {
		t.Fatal("the changed score is not in the answer")
	}
	if on.memo.answers.hits.Load() != hits {
		t.Fatal("an answer whose results changed was served from the answer cache")
	}
	editScore.Store(false)
	same("score back")
	same("score back, again")

	// A signature the cached answer used leaves the cache.
	hits = on.memo.answers.hits.Load()
	on.memo.answers.mu.Lock()
	var keys []string
	for _, a := range on.memo.answers.cur {
		keys = append(keys, a.hot.keys...)
	}
	on.memo.answers.mu.Unlock()
	if len(keys) == 0 {
		t.Fatal("no answer in the cache's current generation")
	}
	on.cache.c.Del(keys[0])
	on.cache.c.Wait()
	same("signature evicted")
	if on.memo.answers.hits.Load() != hits {
		t.Fatal("an answer was served from the answer cache after one of its signatures left the signature cache")
	}
	same("re-signed")
	same("re-signed, again")
	if on.memo.answers.hits.Load() == hits {
		t.Fatal("the answer is not cached again once its signatures are back")
	}
}

// sameAnswers asks for path through a proxy with the answer cache (on)
// and one without (off), once their background refinements are stored,
// and returns the answer, failing the test unless both are 200 with the
// same headers (but Date) and the same bytes.
func sameAnswers(t *testing.T, step string, on *Server, onBase string, off *Server, offBase, path string) string {
	t.Helper()
	on.ref.wait()
	off.ref.wait()
	// ristretto buffers its sets: wait until the signatures a
	// background refinement stored are readable (the test failed on a
	// loaded machine without this).
	on.cache.c.Wait()
	off.cache.c.Wait()
	codeOn, headOn, bodyOn := getHeader(t, onBase+path)
	codeOff, headOff, bodyOff := getHeader(t, offBase+path)
	if codeOn != http.StatusOK || codeOff != http.StatusOK {
		t.Fatalf("%s: status %d (cache) and %d (no cache)", step, codeOn, codeOff)
	}
	if bodyOn != bodyOff {
		t.Fatalf("%s: answers differ\nwith the answer cache:    %.300s\nwithout the answer cache: %.300s", step, bodyOn, bodyOff)
	}
	headOn.Del("Date")
	headOff.Del("Date")
	if !reflect.DeepEqual(headOn, headOff) {
		t.Fatalf("%s: headers differ\nwith the answer cache:    %v\nwithout the answer cache: %v", step, headOn, headOff)
	}
	return bodyOn
}

// steadyDemo is the demo engine behind a server that sets every
// answer's "took" to 1. Tests that compare two proxies' answers to the
// same search, asked one after the other, need it: the demo engine
// reports its own milliseconds, and on a loaded machine one of the two
// searches took one more now and then, which failed the comparison.
func steadyDemo(t testing.TB) *httptest.Server {
	d := startDemo(t, demo.Options{})
	tookRE := regexp.MustCompile(`^\{"took":\d+`)
	return behindDemo(t, d, func(w http.ResponseWriter, resp *http.Response) {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		w.Write(tookRE.ReplaceAll(b, []byte(`{"took":1`)))
	})
}

// getHeader is get that returns the answer's headers too.
func getHeader(t testing.TB, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading the answer: %v", url, err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// TestAnswerCacheCounts: an answer from the answer cache counts in
// /metrics what the refinement it reuses counted: the request, the
// engine call, the results by signature source, the clusters and the
// duplicates, as a proxy without the cache counts them.
func TestAnswerCacheCounts(t *testing.T) {
	d := steadyDemo(t)
	on, onBase := startProxy(t, Options{Engines: []Engine{esEngine(d.URL)}, Budget: 5 * time.Second})
	off, offBase := startProxy(t, Options{Engines: []Engine{esEngine(d.URL)}, Budget: 5 * time.Second, AnswerCacheBytes: -1})
	const path = "/llvm/_search?q=the&size=20"
	for i := range 3 { // signed, then from the signature cache, then remembered
		sameAnswers(t, "warm-up "+strconv.Itoa(i), on, onBase, off, offBase, path)
	}
	series := []string{
		`winnow_requests_total{code="2xx",route="proxy"}`,
		`winnow_request_duration_seconds_count{route="proxy"}`,
		`winnow_engine_requests_total{engine="es",outcome="ok"}`,
		`winnow_engine_duration_seconds_count{engine="es"}`,
		`winnow_results_total{signature="cached"}`,
		`winnow_cache_hits_total`,
		`winnow_clusters_total`,
		`winnow_duplicates_total{mode="group"}`,
	}
	onBefore, offBefore := scrape(t, onBase), scrape(t, offBase)
	hits := on.memo.answers.hits.Load()
	const n = 3
	for i := range n {
		sameAnswers(t, "counted "+strconv.Itoa(i), on, onBase, off, offBase, path)
	}
	if got := on.memo.answers.hits.Load() - hits; got != n {
		t.Fatalf("%d answers from the answer cache, want %d", got, n)
	}
	onAfter, offAfter := scrape(t, onBase), scrape(t, offBase)
	for _, k := range series {
		dOn, dOff := onAfter[k]-onBefore[k], offAfter[k]-offBefore[k]
		if dOn != dOff {
			t.Errorf("%s: %v more with the answer cache, %v without", k, dOn, dOff)
		}
		if dOff == 0 {
			t.Errorf("%s: no change over %d searches (a query without duplicates tests nothing)", k, n)
		}
	}
}

// scrape returns the proxy's metrics at base, by series.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	code, text := get(t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d", code)
	}
	m := map[string]float64{}
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("/metrics line %q: %v", line, err)
		}
		m[k] = f
	}
	return m
}

// TestExplainedAnswerCached: an explained answer (winnow_explain) is
// kept and served from the answer cache as a view of its own, byte for
// byte what a proxy without the cache renders; the plain answer to the
// same search never gets its explanations, nor it the plain one's.
func TestExplainedAnswerCached(t *testing.T) {
	d := steadyDemo(t)
	on, onBase := startProxy(t, Options{Engines: []Engine{esEngine(d.URL)}})
	off, offBase := startProxy(t, Options{Engines: []Engine{esEngine(d.URL)}, AnswerCacheBytes: -1})
	const path = "/llvm/_search?q=the&size=10"
	same := func(step, path string) string {
		t.Helper()
		return sameAnswers(t, step, on, onBase, off, offBase, path)
	}
	var explained, plain string
	for i := range 4 {
		explained = same("explained "+strconv.Itoa(i), path+"&winnow_explain=true")
		plain = same("plain "+strconv.Itoa(i), path)
	}
	if !strings.Contains(explained, `"explain":`) || strings.Contains(plain, `"explain":`) {
		t.Fatalf("want explanations in the explained answer only:\nexplained %.600s\nplain %.600s", explained, plain)
	}
	hits := on.memo.answers.hits.Load()
	if hits < 2 {
		t.Fatalf("four explained and four plain answers alike: %d served from the answer cache, want both views", hits)
	}
	if got := same("explained, cached", path+"&winnow_explain=true"); got != explained || on.memo.answers.hits.Load() != hits+1 {
		t.Fatalf("the explained answer again: hits %d -> %d, want one more and the same bytes", hits, on.memo.answers.hits.Load())
	}
}

// TestTaggedAnswerCached runs the answer cache in front of an index that
// winnow index tagged: a list grouped by its hits' tags alone uses no
// signature, so its rendering is remembered and served again while the
// engine's answer stays the same but for its time, byte for byte what a
// proxy without the cache renders; a tag that changes in the index
// changes the answer, which is grouped anew.
func TestTaggedAnswerCached(t *testing.T) {
	var took atomic.Int64
	var regrouped atomic.Bool
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit := func(id, group string, winner bool) string {
			return `{"_index":"llvm","_id":"` + id + `","_score":1.0,"_source":{"url":"http://127.0.0.1:9/` + id +
				`","winnow_group":"` + group + `","winnow_winner":` + strconv.FormatBool(winner) + `,"winnow_removable":` + strconv.FormatBool(!winner) + `}}`
		}
		b := hit("b", "00000000000000bb", !regrouped.Load())
		c := hit("c", "00000000000000bb", regrouped.Load())
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"took":`+strconv.FormatInt(took.Load(), 10)+`,"timed_out":false,"hits":{"total":{"value":3,"relation":"eq"},"max_score":1.0,"hits":[`+
			hit("a", "00000000000000aa", true)+","+b+","+c+`]}}`)
	}))
	t.Cleanup(backend.Close)
	on, onBase := startProxy(t, Options{Engines: []Engine{esEngine(backend.URL)}})
	off, offBase := startProxy(t, Options{Engines: []Engine{esEngine(backend.URL)}, AnswerCacheBytes: -1})
	const path = "/llvm/_search?q=the&size=10"
	same := func(step string) string {
		t.Helper()
		took.Add(3)
		codeOn, bodyOn := get(t, onBase+path)
		codeOff, bodyOff := get(t, offBase+path)
		if codeOn != http.StatusOK || codeOff != http.StatusOK || bodyOn != bodyOff {
			t.Fatalf("%s: status %d and %d, answers with and without the answer cache\n%.400s\n%.400s", step, codeOn, codeOff, bodyOn, bodyOff)
		}
		return bodyOn
	}
	first := same("first")
	if !strings.Contains(first, `"_id":"c"`) || !strings.Contains(first, `"inner_hits"`) {
		t.Fatalf("the tagged hits are not grouped: %.400s", first)
	}
	for i := range 3 {
		same("again " + strconv.Itoa(i))
	}
	hits := on.memo.answers.hits.Load()
	if hits == 0 {
		t.Fatal("four answers alike but for their time, grouped by their tags: none served from the answer cache")
	}
	if got, want := on.Stats().Signatures.Service, off.Stats().Signatures.Service; got != want || want != 4*3 {
		t.Errorf("results grouped by their tags: %d counted with the answer cache, %d without; want 12 for both", got, want)
	}
	regrouped.Store(true)
	if body := same("regrouped"); body == first {
		t.Fatal("the answer after the winner's tag moved is the one before")
	}
	if on.memo.answers.hits.Load() != hits {
		t.Fatal("an answer whose tags changed was served from the answer cache")
	}
}

// TestRewriteRemembered checks that a remembered rewrite is the adapter's
// own, for the request it was made for and no other.
func TestRewriteRemembered(t *testing.T) {
	d := startDemo(t, demo.Options{})
	s, _ := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}})
	b := s.transp
	for _, path := range []string{"/llvm/_search?q=a&size=7", "/llvm/_search?q=a&size=8&from=16", "/llvm/_search?q=a&size=7"} {
		orig := engine.Request{Method: "GET", Path: path}
		want, wantWin, err := b.light.Rewrite(orig, s.o.Factor)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			got, win, err := s.rewrite(b, orig)
			if err != nil || got.Path != want.Path || got.Method != "GET" || len(got.Body) != 0 || win != wantWin {
				t.Fatalf("rewrite(%s) = %+v %+v %v, want %+v %+v", path, got, win, err, want, wantWin)
			}
		}
	}
	if _, _, err := s.rewrite(b, engine.Request{Method: "GET", Path: "/llvm/_search?q=a&size=-1"}); err == nil {
		t.Error("a bad request is rewritten")
	}
	long := "/llvm/_search?size=5&q=" + strings.Repeat("long+", 300)
	if _, _, err := s.rewrite(b, engine.Request{Method: "GET", Path: long}); err != nil {
		t.Fatal(err)
	}
	if _, kept := s.memo.rewrites.get(long); kept {
		t.Error("a rewrite of a URI longer than memoMaxURI is remembered")
	}
}
