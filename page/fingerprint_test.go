package page

import (
	"reflect"
	"regexp"
	"testing"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/similarity"
)

// TestFingerprint: the fingerprint names the settings that decide a
// page's signature and nothing else. The zero Signer and one with every
// default spelled out agree; each similarity.Options field, canon's
// MaxBytes and content mode change it; what gives the same signatures
// (the head, canon.Enough) or only adds the optional link sketch
// (canon.Links) does not.
func TestFingerprint(t *testing.T) {
	base := Signer{}.Fingerprint()
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(base) {
		t.Fatalf("Fingerprint() = %q, want 16 hex digits", base)
	}
	spelled := Signer{Canon: canon.Options{MaxBytes: canon.DefaultMaxBytes}, Signature: similarity.Options{}.WithDefaults()}
	if got := spelled.Fingerprint(); got != base {
		t.Errorf("defaults spelled out: %s, want %s (the zero Signer's)", got, base)
	}
	same := map[string]Signer{
		"Head":   {Head: true},
		"Enough": {Canon: canon.Options{Enough: canon.Enough{Bytes: 100, Tokens: 10}}},
		"Links":  {Canon: canon.Options{Links: true}},
	}
	for name, s := range same {
		if got := s.Fingerprint(); got != base {
			t.Errorf("%s set: %s, want %s (same signatures)", name, got, base)
		}
	}
	differ := map[string]Signer{
		"canon.MaxBytes": {Canon: canon.Options{MaxBytes: 1 << 20}},
		"canon.Content":  {Canon: canon.Options{Content: canon.ContentMain}},
	}
	// Every field of similarity.Options, so that a field added later
	// cannot be left out of the fingerprint unnoticed.
	defaults := similarity.Options{}.WithDefaults()
	rt := reflect.TypeFor[similarity.Options]()
	for i := range rt.NumField() {
		o := defaults
		f := reflect.ValueOf(&o).Elem().Field(i)
		if f.Kind() != reflect.Int {
			t.Fatalf("similarity.Options.%s is a %s: teach this test its other value", rt.Field(i).Name, f.Kind())
		}
		f.SetInt(f.Int() + 1)
		differ["similarity."+rt.Field(i).Name] = Signer{Signature: o}
	}
	seen := map[string]string{}
	for name, s := range differ {
		got := s.Fingerprint()
		if got == base {
			t.Errorf("%s changed: fingerprint %s unchanged", name, got)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("%s and %s changed: the same fingerprint %s", name, other, got)
		}
		seen[got] = name
	}
}
