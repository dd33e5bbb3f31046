package options

import (
	"cmp"
	"flag"
	"os"
	"reflect"
	"testing"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/config"
)

var update = flag.Bool("update", false, "rewrite docs/config.md from config's field docs and the libraries' defaults")

// referencePath is the generated configuration reference the manual links.
const referencePath = "../docs/config.md"

// TestReference fails when docs/config.md no longer says what config's
// field docs and the libraries' defaults say: a key added, renamed,
// documented anew or given another default shows up here.
// `go test ./options -run Reference -update` rewrites it.
func TestReference(t *testing.T) {
	got, err := config.Reference("../config", Defaults(), EngineDefaults())
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(referencePath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatalf("%v (run: go test ./options -run Reference -update)", err)
	}
	if string(want) != got {
		t.Fatalf("%s is out of date with config's field docs or a library's defaults; run: go test ./options -run Reference -update", referencePath)
	}
}

// TestDefaultsAreTheLibraries: writing out every default Defaults
// reports changes nothing the libraries are given, so each value sits
// under its own key.
func TestDefaultsAreTheLibraries(t *testing.T) {
	written, left := Defaults(), config.Default()
	pw, err := Proxy(written, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Proxy(left, nil)
	if err != nil {
		t.Fatal(err)
	}
	pw, pl = pw.WithDefaults(), pl.WithDefaults()
	// What the libraries apply inside (fetch.New, canon's reader, the
	// decisions' model confidences) is compared below, not as fields.
	pl.Fetch = pw.Fetch
	pl.Signer.Canon.MaxBytes = cmp.Or(pl.Signer.Canon.MaxBytes, canon.DefaultMaxBytes)
	if pw.Decision.MinConfidence() != pl.Decision.MinConfidence() || pw.Remove.MinConfidence() != pl.Remove.MinConfidence() {
		t.Errorf("proxy confidences written out %v/%v, left out %v/%v", pw.Decision.MinConfidence(), pw.Remove.MinConfidence(), pl.Decision.MinConfidence(), pl.Remove.MinConfidence())
	}
	pl.Decision, pl.Remove = pw.Decision, pw.Remove
	if !reflect.DeepEqual(pw, pl) {
		t.Errorf("proxy options with the defaults written out:\n%+v\nleft out:\n%+v", pw, pl)
	}
	sw, sl := Signer(written), Signer(left)
	sl.Canon.MaxBytes = cmp.Or(sl.Canon.MaxBytes, canon.DefaultMaxBytes)
	if !reflect.DeepEqual(sw, sl) {
		t.Errorf("signer with the defaults written out %+v, left out %+v", sw, sl)
	}
	gw, rw, err := Decisions(written)
	if err != nil {
		t.Fatal(err)
	}
	gl, rl, err := Decisions(left)
	if err != nil {
		t.Fatal(err)
	}
	if gw.MinConfidence() != gl.MinConfidence() || rw.MinConfidence() != rl.MinConfidence() {
		t.Errorf("confidences written out %v/%v, left out %v/%v", gw.MinConfidence(), rw.MinConfidence(), gl.MinConfidence(), rl.MinConfidence())
	}
	f := written.Serve.Fetch
	if f.Timeout == 0 || f.MaxBodyBytes == 0 || f.MaxRedirects == 0 || f.MaxConns == 0 || f.MaxConnsPerHost == 0 || f.UserAgent == "" {
		t.Errorf("serve.fetch defaults %+v: a key without its default", f)
	}
	if err := written.Validate(); err != nil {
		t.Errorf("the defaults written out do not validate: %v", err)
	}
}
