package engine

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestParseStrings checks the strings Parse copies from an answer's hits
// into one allocation: plain ones as they are, escaped or invalid ones
// decoded as encoding/json decodes them, and a number's text, also when
// a hit's strings split a UTF-8 character between them (each is
// invalid, though together they are valid) or hold a control byte.
func TestParseStrings(t *testing.T) {
	hit := func(src string) string { return `{"_score":1,"_source":{` + src + `}}` }
	for _, tt := range []struct {
		name string
		hits []string
		want [][3]string // URL, title, snippet of each hit
	}{
		{"plain", []string{`"url":"http://x/a","title":"T","content":"c"`}, [][3]string{{"http://x/a", "T", "c"}}},
		{"escaped", []string{`"url":"http://x/a","title":"T\u00e9","content":"é\n"`}, [][3]string{{"http://x/a", "Té", "é\n"}}},
		{"number", []string{`"url":12345,"title":-1.5e3,"content":true`}, [][3]string{{"12345", "-1.5e3", ""}}},
		{"split character", []string{"\"url\":\"http://x/\xe6\",\"title\":\"\x97\xa5 t\",\"content\":\"日\""},
			[][3]string{{"http://x/\ufffd", "\ufffd\ufffd t", "日"}}},
		{"control byte", []string{"\"url\":\"http://x/a\",\"title\":\"a\x01b\""}, [][3]string{{"http://x/a", "a\x01b", ""}}},
		{"control byte, non-ASCII elsewhere", []string{"\"url\":\"http://x/a\",\"title\":\"a\x01b\"", `"url":"http://x/é"`},
			[][3]string{{"http://x/a", "a\x01b", ""}, {"http://x/é", "", ""}}},
		{"many hits", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hits, want := tt.hits, tt.want
			if hits == nil {
				// More strings than the arena notes on the stack.
				for i := range 300 {
					u := "http://x/" + strings.Repeat("é", i%3)
					hits = append(hits, `"url":"`+u+`","title":"t","content":"c"`)
					want = append(want, [3]string{u, "t", "c"})
				}
			}
			var list []string
			for _, h := range hits {
				list = append(list, hit(h))
			}
			body := []byte(`{"hits":{"total":{"value":1},"hits":[` + strings.Join(list, ",") + `]}}`)
			p, err := mustNew(t, Config{Kind: "elasticsearch"}).Parse(body, "application/json")
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Results) != len(want) {
				t.Fatalf("%d results, want %d", len(p.Results), len(want))
			}
			for i, r := range p.Results {
				if got := [3]string{r.URL, r.Title, r.Snippet}; got != want[i] {
					t.Errorf("result %d: %q, want %q", i, got, want[i])
				}
			}
		})
	}
}

// TestPlainArenaPrintable checks plainArena's test for printable ASCII
// (contStart set, so that no other test can accept) on random bytes
// around its bounds, a byte that carries into the next among them.
func TestPlainArenaPrintable(t *testing.T) {
	const alphabet = "\x00\x1f\x20\x21\\\x7e\x7f\x80\x9f\xa0\xc3\xdf\xe0\xffa"
	r := rand.New(rand.NewPCG(7, 8))
	for n := range 100 {
		for range 200 {
			buf := make([]byte, n)
			for i := range buf {
				buf[i] = 'a'
				if r.IntN(n+1) < 2 {
					buf[i] = alphabet[r.IntN(len(alphabet))]
				}
			}
			want := true
			for _, c := range buf {
				want = want && c >= 0x20 && c < 0x80 && c != '\\'
			}
			if got := plainArena(buf, true, false); got != want {
				t.Fatalf("%q: %v, want %v", buf, got, want)
			}
		}
	}
}
