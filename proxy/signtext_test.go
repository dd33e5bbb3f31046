package proxy

import (
	"reflect"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"

	"github.com/winnow-search/winnow/page"
)

// TestSignTextUnicode: the HTML a hit carries was decoded by the engine's
// answer, so a <meta charset> it keeps from the page's bytes names no
// charset of its: it signs as the page served in that charset does (and
// as winnow index and dedup sign the stored page), not as mojibake.
func TestSignTextUnicode(t *testing.T) {
	html := `<!DOCTYPE html><html><head><meta charset="windows-1251"><title>Булки</title></head><body><p>` +
		strings.Repeat("Съешь же ещё этих мягких французских булок, да выпей чаю. ", 24) + `</p></body></html>`
	served, err := charmap.Windows1251.NewEncoder().String(html)
	if err != nil {
		t.Fatal(err)
	}
	want, err := page.Signer{}.Sign([]byte(served), "text/html")
	if err != nil {
		t.Fatal(err)
	}
	r := &refiner{}
	got, _ := r.signText("k", "http://127.0.0.1/ru.html", html)
	if got == nil || !reflect.DeepEqual(*got, want.Sig) {
		t.Errorf("signature of the carried HTML differs from the served page's")
	}
	text := strings.Repeat("Съешь же ещё этих мягких французских булок. ", 24)
	wantText, _ := page.Signer{}.Sign([]byte(text), "")
	if got, _ := r.signText("k", "http://127.0.0.1/ru.txt", text); got == nil || !reflect.DeepEqual(*got, wantText.Sig) {
		t.Errorf("signature of a carried plain text changed")
	}
}
