package canon

import (
	"strings"
	"testing"

	"golang.org/x/net/html/atom"
)

// TestMayFlag checks the pre-filter that spares the attribute tokenizer:
// it must pass every tag with an attribute attrFlags reads, in any case.
func TestMayFlag(t *testing.T) {
	for raw, want := range map[string]bool{
		"<p>":                           false,
		"<li data-x=\"1\">":             false,
		"<td colspan=2 style=\"a:b\">":  false,
		"<p class=x>":                   true,
		"<div ID=x>":                    true,
		"<td hidden>":                   true,
		"<div aria-hidden=\"true\">":    true,
		"<span ROLE=main>":              true,
		"<div ItemProp=articleBody>":    true,
		"<section\n\tclass\n=\"nav\">":  true,
		"<div data-role=\"x\">":         true, // a false positive costs only the tokenizer
		"<table summary=\"i\">":         false,
		"<p title=\"roles and ids\">":   true,
		"<ul lang=\"en\" dir=\"ltr\">":  false,
		"<div clas=\"x\">":              false,
		"<span style=\"color:red\">":    false,
		"<p align=right width=\"100\">": true, // w-id-th
	} {
		if got := mayFlag([]byte(raw)); got != want {
			t.Errorf("mayFlag(%q) = %v, want %v", raw, got, want)
		}
	}
}

// TestMayFlagAgreesWithAttrFlags reads every start tag of the real pages
// in testdata: a tag mayFlag passes over must get no flags from attrFlags.
func TestMayFlagAgreesWithAttrFlags(t *testing.T) {
	var attrs tagAttrs
	tags, skipped := 0, 0
	eachStartTag(t, func(raw []byte) {
		tags++
		if mayFlag(raw) {
			return
		}
		skipped++
		for _, a := range []atom.Atom{atom.Div, atom.Main, atom.Span} {
			if got := attrFlags(attrs.read(raw), a); got != 0 {
				t.Errorf("%q skipped, but attrFlags gives %b", raw, got)
			}
		}
	})
	if skipped == 0 || skipped == tags {
		t.Errorf("%d of %d start tags skipped: the filter does nothing", skipped, tags)
	}
	t.Logf("%d of %d start tags skip the attribute tokenizer", skipped, tags)
}

// TestClassFlags pins class and id classification: names split at ASCII
// white space, compared in lower case, boilerplate words found in runs
// of letters of any name, however long.
func TestClassFlags(t *testing.T) {
	for _, c := range []struct {
		v          string
		a          atom.Atom
		id         bool
		main, boil bool
	}{
		{"entry-content", atom.Div, false, true, false},
		{"  Entry-Content\tclearfix ", atom.Div, false, true, false},
		{"body", atom.Div, false, true, false},
		{"body", atom.Div, true, false, false},
		{"body", atom.Section, false, false, false},
		{"site-NavBar", atom.Div, false, false, true},
		{"x mw-parser-output", atom.Div, false, true, false},
		{"wrapper-of-the-very-long-class-name-with-the-sidebar-inside", atom.Div, false, false, true},
		{"wrapper-of-the-very-long-class-name-with-the-sidebars-inside", atom.Div, false, false, false},
		{"header_ad_2", atom.Div, false, false, true},
		{"shadow", atom.Div, false, false, false},
		{"", atom.Div, false, false, false},
		{"content", atom.Div, false, false, false},
		{strings.Repeat("a", 40) + " main-content", atom.Div, false, true, false},
	} {
		f, boil := classFlags([]byte(c.v), c.a, c.id)
		if (f&fMain != 0) != c.main || boil != c.boil {
			t.Errorf("classFlags(%q, %v, id=%v) = main %v boiler %v, want %v %v", c.v, c.a, c.id, f&fMain != 0, boil, c.main, c.boil)
		}
	}
	if n := testing.AllocsPerRun(100, func() { classFlags([]byte("site-navbar entry-content"), atom.Div, false) }); n != 0 {
		t.Errorf("classFlags allocates %v times, want 0", n)
	}
}
