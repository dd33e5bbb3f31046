package config

import (
	"strings"
	"testing"

	"github.com/winnow-search/winnow/resultlist"
)

// TestModesAgree: serve.mode accepts exactly the names of
// resultlist.ParseMode, the parser cmd/winnow gives it to (config
// imports nothing of winnow, so it checks the names itself).
func TestModesAgree(t *testing.T) {
	for _, name := range append([]string{""}, resultlist.Modes...) {
		c := Default()
		c.Serve.Mode = name
		if err := c.Validate(); err != nil {
			t.Errorf("serve.mode %q: %v", name, err)
		}
		if _, err := resultlist.ParseMode(name); err != nil {
			t.Errorf("resultlist.ParseMode(%q): %v", name, err)
		}
	}
	c := Default()
	c.Serve.Mode = "drop"
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "serve.mode") || !strings.Contains(err.Error(), strings.Join(resultlist.Modes, ", ")) {
		t.Errorf("serve.mode drop: %v, want an error naming serve.mode and listing %v", err, resultlist.Modes)
	}
	if _, err := resultlist.ParseMode("drop"); err == nil {
		t.Error(`resultlist.ParseMode("drop") accepted it`)
	}
}
