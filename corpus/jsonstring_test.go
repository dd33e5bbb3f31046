package corpus

import (
	"encoding/json"
	"testing"
)

// TestJSONString: the undecoded fast path gives what json.Unmarshal gives,
// for strings with and without escapes, control characters and invalid
// UTF-8, and refuses what is not a string.
func TestJSONString(t *testing.T) {
	for _, raw := range []string{
		`"plain text, caf` + "\u00e9" + `"`, `""`, `"a\nb"`, `"tab\tx"`, `"q\"uote"`,
		`"\u00e9\ud83d\ude00"`, "\"bad \xff utf-8\"", "\"half \xe2\x82\"", `"back\\slash"`,
	} {
		got, err := jsonString(json.RawMessage(raw))
		var want string
		if werr := json.Unmarshal([]byte(raw), &want); werr != nil || err != nil {
			t.Fatalf("%q: jsonString error %v, json.Unmarshal error %v", raw, err, werr)
		}
		if got != want {
			t.Errorf("%q: jsonString = %q, json.Unmarshal = %q", raw, got, want)
		}
	}
	for _, raw := range []string{`12`, `true`, `{"a":1}`, `["x"]`} {
		if s, err := jsonString(json.RawMessage(raw)); err == nil {
			t.Errorf("%s: jsonString = %q, want an error", raw, s)
		}
	}
}
