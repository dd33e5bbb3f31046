package proxy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/internal/realengine"
	"github.com/winnow-search/winnow/proxy/engine"
)

// testCursorKey is the cursor key of the proxies the tests start
// (newProxy), so a test can seal the IDs it sends ([sealed]).
var testCursorKey = []byte("winnow's cursor key for tests")

// sealed returns the comma list of ids, each sealed under testCursorKey
// as the proxy of a test seals them.
func sealed(ids ...string) string {
	s, err := engine.NewCursorSeal(testCursorKey)
	if err != nil {
		panic(err)
	}
	for i, id := range ids {
		ids[i] = s.Seal(id)
	}
	return strings.Join(ids, ",")
}

// openPIT opens a point in time by POST to u and returns its id (an
// Elasticsearch answer's "id", an OpenSearch one's "pit_id").
func openPIT(t testing.TB, u string) string {
	t.Helper()
	resp, err := http.Post(u, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a struct {
		ID    string `json:"id"`
		PitID string `json:"pit_id"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &a) != nil || a.ID+a.PitID == "" {
		t.Fatalf("POST %s: %d %s", u, resp.StatusCode, b)
	}
	return a.ID + a.PitID
}

// sealIndex is the index TestRealEngineCursorSeal loads.
const sealIndex = "cursorseal"

// TestRealEngineCursorSeal runs winnow in front of real OpenSearch and
// Elasticsearch, where a scroll or point in time ID differs from the
// next client's in a counter only. Two clients, an attacker and a
// victim, each open a scroll and a point in time through winnow, and a
// second winnow (another key) opens one of each too. Every ID a client
// gets is sealed, in every mode. The attacker presents, on every path
// that takes an ID, the victim's engine ID (what counting builds; the
// engine itself takes it, which the test checks), its own seal glued to
// the victim's engine ID, and the second winnow's valid IDs: each is
// refused with 403 and reaches nothing, so the victim then pages on and
// clears its own scroll (num_freed 1) and point in time.
func TestRealEngineCursorSeal(t *testing.T) {
	d := startDemo(t, demo.Options{})
	docs, err := realengine.Sample(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"opensearch", "elasticsearch"} {
		t.Run(kind, func(t *testing.T) {
			base := realengine.Start(t, kind)
			realengine.Load(t, kind, base, sealIndex, docs)
			t.Cleanup(func() { realengine.Do(t, "DELETE", base+"/"+sealIndex, "", nil) })
			e := Engine{Name: kind, URL: base, Adapter: engine.Config{Kind: kind, TextField: "body"}, Timeout: 30 * time.Second}
			_, proxyURL := startProxy(t, Options{Engines: []Engine{e}})
			_, otherURL := startProxy(t, Options{Engines: []Engine{e}, CursorKey: []byte("another winnow's cursor key")})
			addr := strings.TrimPrefix(proxyURL, "http://")
			checkCursorSeal(t, kind, base, addr, strings.TrimPrefix(otherURL, "http://"))
		})
	}
}

// sealedAnswer is what checkCursorSeal reads of an answer.
type sealedAnswer struct {
	ScrollID string `json:"_scroll_id"`
	PitID    string `json:"pit_id"`
	ID       string `json:"id"`
	NumFreed int    `json:"num_freed"`
	Hits     struct {
		Hits []json.RawMessage `json:"hits"`
	} `json:"hits"`
}

func checkCursorSeal(t *testing.T, kind, base, addr, otherAddr string) {
	pitOpen, pitClose := "/_pit", "/_pit"
	if kind == "opensearch" {
		pitOpen, pitClose = "/_search/point_in_time", "/_search/point_in_time"
	}
	closePIT := func(id string) probe {
		if kind == "opensearch" {
			return probe{method: "DELETE", uri: pitClose, body: `{"pit_id":["` + id + `"]}`}
		}
		return probe{method: "DELETE", uri: pitClose, body: `{"id":"` + id + `"}`}
	}
	seal, err := engine.NewCursorSeal(testCursorKey)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(addr string, p probe) sealedAnswer {
		t.Helper()
		code, body := sendRaw(t, addr, p)
		var a sealedAnswer
		if code != 200 || json.Unmarshal([]byte(body), &a) != nil {
			t.Fatalf("%s %s %s = %d %.300s, want 200", p.method, p.uri, p.body, code, body)
		}
		return a
	}
	// unsealed returns the engine's ID of an ID winnow gave, failing
	// the test when winnow gave the engine's own.
	unsealed := func(what, id string) string {
		t.Helper()
		raw, err := seal.Unseal(id)
		if err != nil || raw == "" {
			t.Fatalf("%s: winnow gave %.80q, not an ID it sealed: %v", what, id, err)
		}
		return raw
	}
	openScroll := func(addr, query string) sealedAnswer {
		return ask(addr, probe{method: "POST", uri: "/" + sealIndex + "/_search?scroll=1m" + query, body: `{"size":1,"sort":["_doc"]}`})
	}
	attacker := openScroll(addr, "")
	victim := openScroll(addr, "&winnow_mode=off")
	victimRaw := unsealed("the victim's scroll (winnow_mode=off)", victim.ScrollID)
	unsealed("the attacker's scroll", attacker.ScrollID)
	attackerPIT := ask(addr, probe{method: "POST", uri: "/" + sealIndex + pitOpen + "?keep_alive=1m"})
	victimPIT := ask(addr, probe{method: "POST", uri: "/" + sealIndex + pitOpen + "?keep_alive=1m"})
	attackerPITID, victimPITID := attackerPIT.ID+attackerPIT.PitID, victimPIT.ID+victimPIT.PitID
	unsealed("the attacker's point in time", attackerPITID)
	victimPITRaw := unsealed("the victim's point in time", victimPITID)
	pitPage := ask(addr, probe{method: "POST", uri: "/_search", body: `{"size":1,"pit":{"id":"` + victimPITID + `","keep_alive":"1m"}}`})
	if unsealed("a point in time search's pit_id", pitPage.PitID) != victimPITRaw || len(pitPage.Hits.Hits) != 1 {
		t.Errorf("the victim's point in time search: pit_id %.80q, %d hits; want its own point in time, 1 hit", pitPage.PitID, len(pitPage.Hits.Hits))
	}
	other := openScroll(otherAddr, "")
	otherPIT := ask(otherAddr, probe{method: "POST", uri: "/" + sealIndex + pitOpen + "?keep_alive=1m"})

	// The engine takes the victim's raw ID from anyone: the forgery is
	// real, and only winnow can stop it.
	if code, body := sendRaw(t, strings.TrimPrefix(base, "http://"), probe{method: "POST", uri: "/_search/scroll", body: `{"scroll":"1m","scroll_id":"` + victimRaw + `"}`}); code != 200 {
		t.Fatalf("the engine refused the victim's scroll ID: %d %.300s", code, body)
	}
	tag, _, _ := strings.Cut(attacker.ScrollID, ".")
	tagPIT, _, _ := strings.Cut(attackerPITID, ".")
	up := counterUp(t, unsealed("the attacker's scroll", attacker.ScrollID))
	if up == victimRaw {
		t.Logf("%s: the attacker's scroll ID, its counter one up, is the victim's", kind)
	}
	forged := map[string]string{
		"the attacker's engine ID, its counter one up":  up,
		"the attacker's seal, its counter one up":       tag + "." + up,
		"the victim's engine ID":                        victimRaw,
		"the attacker's seal on the victim's engine ID": tag + "." + victimRaw,
		"another winnow's ID":                           other.ScrollID,
	}
	forgedPIT := map[string]string{
		"the victim's engine ID":                        victimPITRaw,
		"the attacker's seal on the victim's engine ID": tagPIT + "." + victimPITRaw,
		"another winnow's ID":                           otherPIT.ID + otherPIT.PitID,
	}
	const why = "was not given by this gateway"
	for what, f := range forged {
		for _, p := range []probe{
			{method: "POST", uri: "/_search/scroll", body: `{"scroll":"1m","scroll_id":"` + f + `"}`},
			{method: "GET", uri: "/_search/scroll?scroll=1m&scroll_id=" + f},
			{method: "GET", uri: "/_search/scroll/" + f + "?scroll=1m"},
			{method: "DELETE", uri: "/_search/scroll", body: `{"scroll_id":"` + f + `"}`},
			{method: "DELETE", uri: "/_search/scroll", body: `{"scroll_id":["` + attacker.ScrollID + `","` + f + `"]}`},
			{method: "DELETE", uri: "/_search/scroll?scroll_id=" + f},
			{method: "DELETE", uri: "/_search/scroll/" + attacker.ScrollID + "," + f},
		} {
			if code, body := sendRaw(t, addr, p); code != 403 || !strings.Contains(body, why) || !strings.Contains(body, "security_exception") {
				t.Errorf("%s: %s %.60s %.120s = %d %.300s, want 403 (%s)", what, p.method, p.uri, p.body, code, body, why)
			}
		}
	}
	for what, f := range forgedPIT {
		for _, p := range []probe{
			{method: "POST", uri: "/_search", body: `{"size":1,"pit":{"id":"` + f + `","keep_alive":"1m"}}`},
			closePIT(f),
		} {
			if code, body := sendRaw(t, addr, p); code != 403 || !strings.Contains(body, why) {
				t.Errorf("%s: %s %s %.120s = %d %.300s, want 403 (%s)", what, p.method, p.uri, p.body, code, body, why)
			}
		}
	}
	// Where the gate cannot unseal an ID it refuses the request: a
	// point in time in a multi-search, a body the engine reads as YAML.
	for _, p := range []probe{
		{method: "POST", uri: "/_msearch", ctype: "application/x-ndjson", body: "{}\n" + `{"size":1,"pit":{"id":"` + victimPITRaw + `"}}` + "\n"},
		{method: "POST", uri: "/_msearch", ctype: "application/x-ndjson", body: "{}\n" + `{"size":1,"pit":{"id":"` + victimPITID + `"}}` + "\n"},
		{method: "POST", uri: "/_search", ctype: "application/yaml", body: "size: 1\npit:\n  id: " + victimPITRaw + "\n"},
	} {
		if code, body := sendRaw(t, addr, p); code != 403 {
			t.Errorf("%s %s %.120q = %d %.300s, want 403", p.method, p.uri, p.body, code, body)
		}
	}

	// The victim pages on and clears its own.
	next := ask(addr, probe{method: "POST", uri: "/_search/scroll", body: `{"scroll":"1m","scroll_id":"` + victim.ScrollID + `"}`})
	if len(next.Hits.Hits) != 1 || unsealed("a scroll page's _scroll_id", next.ScrollID) == "" {
		t.Errorf("the victim's next scroll page: %d hits, want 1", len(next.Hits.Hits))
	}
	next = ask(addr, probe{method: "GET", uri: "/_search/scroll/" + next.ScrollID + "?scroll=1m&winnow_mode=off"})
	if len(next.Hits.Hits) != 1 {
		t.Errorf("the victim's scroll page by path, winnow_mode=off: %d hits, want 1", len(next.Hits.Hits))
	}
	if a := ask(addr, probe{method: "DELETE", uri: "/_search/scroll", body: `{"scroll_id":["` + next.ScrollID + `"]}`}); a.NumFreed != 1 {
		t.Errorf("the victim cleared its scroll: num_freed %d, want 1", a.NumFreed)
	}
	if a := ask(addr, probe{method: "DELETE", uri: "/_search/scroll/" + attacker.ScrollID}); a.NumFreed != 1 {
		t.Errorf("the attacker cleared its scroll by path: num_freed %d, want 1", a.NumFreed)
	}
	for _, id := range []string{victimPITID, attackerPITID} {
		code, body := sendRaw(t, addr, closePIT(id))
		if code != 200 || !strings.Contains(body, `"succeeded":true`) && !strings.Contains(body, `"successful":true`) {
			t.Errorf("closing a point in time: %d %.300s", code, body)
		}
	}
	ask(otherAddr, probe{method: "DELETE", uri: "/_search/scroll", body: `{"scroll_id":"` + other.ScrollID + `"}`})
	ask(otherAddr, closePIT(otherPIT.ID+otherPIT.PitID))
}

// TestCursorIDsSealedOnEveryPath: an engine's scroll and point in time
// IDs reach the client sealed whichever way winnow sends the answer on:
// refined, winnow_mode=off (relayed), over the bound on bytes in flight
// (streamed from the engine, with a Content-Length or chunked), and the
// opening of a point in time. Everything else in the answer is the
// engine's byte for byte (the relayed ones) and its length is right.
func TestCursorIDsSealedOnEveryPath(t *testing.T) {
	const pad = 3_000_000 // over the bound below
	answer := func(w io.Writer, ids string, pad int) {
		io.WriteString(w, "{"+ids+`"took":1,"timed_out":false,"hits":{"total":{"value":1,"relation":"eq"},"max_score":1,"hits":[`)
		io.WriteString(w, `{"_index":"i","_id":"1","_score":1,"_source":{"url":"http://127.0.0.1:9/1","title":"t","body":"`+strings.Repeat("x", pad)+`"}}]}}`)
	}
	eng := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		b, _ := io.ReadAll(r.Body)
		if strings.HasSuffix(r.URL.Path, "/_pit") {
			io.WriteString(w, `{"id":"pit=1","_shards":{"total":1}}`)
			return
		}
		// The engine sees only its own IDs.
		if seen := r.URL.RequestURI() + string(b); strings.Contains(seen, sealed("s-1")) || strings.Contains(seen, sealed("pit=1")) {
			http.Error(w, "a sealed ID reached the engine: "+r.URL.RequestURI()+" "+string(b), 400)
			return
		}
		n := 10
		if strings.Contains(r.URL.Path, "big") {
			n = pad
		}
		var buf bytes.Buffer
		answer(&buf, `"_scroll_id":"s-1","pit_id":"pit=1",`, n)
		if !strings.Contains(r.URL.Path, "chunked") {
			w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
		}
		w.Write(buf.Bytes())
	}))
	defer eng.Close()
	_, base := startProxy(t, Options{Engines: []Engine{largeEngine(eng.URL)}, AnswerBytesInFlight: 1 << 20})
	addr := strings.TrimPrefix(base, "http://")
	ids := `"_scroll_id":"` + sealed("s-1") + `","pit_id":"` + sealed("pit=1") + `",`
	for _, c := range []struct {
		method, path, body string
		relayed            bool // the engine's bytes but the IDs
	}{
		{"POST", "/small/_search?scroll=1m", `{"size":1}`, false},
		{"POST", "/small/_search?scroll=1m&winnow_mode=off", `{"size":1}`, true},
		{"POST", "/_search/scroll", `{"scroll":"1m","scroll_id":"` + sealed("s-1") + `"}`, false},
		{"GET", "/_search/scroll/" + sealed("s-1") + "?winnow_mode=off", "", true},
		{"POST", "/_search", `{"size":1,"pit":{"id":"` + sealed("pit=1") + `"}}`, false},
		{"POST", "/big/_search?scroll=1m", `{"size":1}`, true},
		{"POST", "/big-chunked/_search?scroll=1m", `{"size":1}`, true},
		{"POST", "/big/_search?scroll=1m&winnow_mode=off", `{"size":1}`, true},
	} {
		code, got := sendRaw(t, addr, probe{method: c.method, uri: c.path, body: c.body})
		if code != 200 || !strings.HasPrefix(got, "{"+ids) {
			t.Errorf("%s %s: %d %.200s; want the IDs sealed first", c.method, c.path, code, got)
			continue
		}
		if c.relayed {
			var want bytes.Buffer
			n := 10
			if strings.Contains(c.path, "big") {
				n = pad
			}
			answer(&want, ids, n)
			if got != want.String() {
				t.Errorf("%s %s: %d bytes, want the engine's %d with the IDs sealed", c.method, c.path, len(got), want.Len())
			}
		}
		if c.method == "POST" {
			// The Content-Length is the sealed answer's: net/http
			// reports a body shorter than it.
			resp, err := http.Post(base+c.path, "application/json", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || n != int64(len(got)) || resp.ContentLength >= 0 && resp.ContentLength != n {
				t.Errorf("%s %s: %d bytes of Content-Length %d, %v; want %d", c.method, c.path, n, resp.ContentLength, err, len(got))
			}
		}
	}
	if got := openPIT(t, base+"/idx/_pit?keep_alive=1m"); got != sealed("pit=1") {
		t.Errorf("the point in time opened: %q, want %q", got, sealed("pit=1"))
	}
}

// counterUp returns the Elasticsearch or OpenSearch scroll ID id with
// the context number of its first shard one up: what a client builds
// from its own ID to reach the scroll opened next. The ID is base64 of
// two strings (a marker and the search type), the shard count, then per
// shard the session's UUID and the context number (8 bytes, big
// endian); each string is its length (one byte here) and its bytes.
func counterUp(t *testing.T, id string) string {
	t.Helper()
	enc := base64.RawURLEncoding
	if strings.HasSuffix(id, "=") {
		enc = base64.URLEncoding
	}
	b, err := enc.DecodeString(id)
	if err != nil {
		t.Fatalf("scroll ID %q: %v", id, err)
	}
	i := 0
	str := func() {
		if i >= len(b) || b[i] >= 0x80 {
			t.Fatalf("scroll ID %q: no short string at byte %d", id, i)
		}
		i += 1 + int(b[i])
	}
	str()
	str()
	i++ // the shard count
	str()
	if i += 7; i >= len(b) {
		t.Fatalf("scroll ID %q is shorter than its first context number", id)
	}
	for j := i; j > i-8; j-- { // plus one, with the carry
		if b[j]++; b[j] != 0 {
			break
		}
	}
	return enc.EncodeToString(b)
}

// TestForgedCursorRefusedWithWrites: allow_writes opens the gateway to
// every route, but a scroll or point in time ID winnow did not give is
// refused still (it would reach another client's search), and the
// refusal says to start again rather than that the gateway is
// read-only; a sealed ID goes on unsealed.
func TestForgedCursorRefusedWithWrites(t *testing.T) {
	rec := startRecorder(t, "elasticsearch")
	e := Engine{Name: "es", URL: rec.URL, AllowWrites: true, Adapter: engine.Config{Kind: "elasticsearch"}}
	_, base := startProxy(t, Options{Engines: []Engine{e}})
	addr := strings.TrimPrefix(base, "http://")
	for _, p := range []probe{
		{method: "DELETE", uri: "/_search/scroll/abc"},
		{method: "POST", uri: "/_search/scroll", body: `{"scroll_id":"abc"}`},
		{method: "POST", uri: "/_search", body: `{"pit":{"id":"abc"}}`},
		// _all is an ID winnow did not give either: it clears every
		// client's scrolls or points in time.
		{method: "DELETE", uri: "/_search/scroll/_all"},
		{method: "DELETE", uri: "/_search/scroll?scroll_id=_all"},
		{method: "DELETE", uri: "/_search/scroll", body: `{"scroll_id":["_all"]}`},
		{method: "DELETE", uri: "/_pit", body: `{"id":"_all"}`},
	} {
		code, body := sendRaw(t, addr, p)
		if seen := rec.take(); code != 403 || len(seen) != 0 || !strings.Contains(body, "start the scroll or point in time again") || strings.Contains(body, "read-only") {
			t.Errorf("%s %s %s = %d %.300s; the engine saw %q; want 403, nothing sent", p.method, p.uri, p.body, code, body, seen)
		}
	}
	for p, want := range map[probe]string{
		{method: "DELETE", uri: "/_search/scroll/" + sealed("abc")}: "DELETE /_search/scroll/abc",
		{method: "PUT", uri: "/idx/_doc/1", body: `{"a":1}`}:        "PUT /idx/_doc/1",
	} {
		code, body := sendRaw(t, addr, p)
		if seen := rec.take(); code/100 != 2 || len(seen) != 1 || seen[0] != want {
			t.Errorf("%s %s = %d %.300s; the engine saw %q, want %q", p.method, p.uri, code, body, seen, want)
		}
	}
}
