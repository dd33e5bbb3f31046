package ui

import (
	"slices"
	"testing"

	"github.com/winnow-search/winnow/resultlist"
)

// TestModesAgree: the form offers exactly the modes resultlist parses,
// the default first (ui imports nothing of winnow, so it lists them
// itself).
func TestModesAgree(t *testing.T) {
	if !slices.Equal(modes, resultlist.Modes) {
		t.Errorf("the form offers %v, resultlist.Modes is %v", modes, resultlist.Modes)
	}
	if normalMode("") != resultlist.Group.String() {
		t.Errorf(`normalMode("") = %q, want the default mode %v`, normalMode(""), resultlist.Group)
	}
}
