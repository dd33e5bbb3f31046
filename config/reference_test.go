package config

import (
	"strings"
	"testing"
)

// TestReferenceCoversEveryKey checks the generator against Keys: a key the
// reference leaves out (a field with no doc comment, a struct it does not
// descend into) fails here.
func TestReferenceCoversEveryKey(t *testing.T) {
	got, err := Reference(".", Default(), Engine{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Keys() {
		if !strings.Contains(got, "| `"+k+"` |") {
			t.Errorf("key %s missing from the reference", k)
		}
	}
}
