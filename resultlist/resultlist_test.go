package resultlist

import (
	"slices"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/similarity"
)

func TestParseMode(t *testing.T) {
	for _, name := range Modes {
		m, err := ParseMode(name)
		if err != nil || m.String() != name || !m.Valid() {
			t.Errorf("ParseMode(%q) = %v, %v", name, m, err)
		}
	}
	if m, err := ParseMode(""); err != nil || m != Group {
		t.Errorf(`ParseMode("") = %v, %v; want the default, group`, m, err)
	}
	_, err := ParseMode("drop")
	if err == nil || err.Error() != `mode "drop" is not one of group, remove, annotate` {
		t.Errorf(`ParseMode("drop") error = %v`, err)
	}
	if Mode(7).Valid() || Mode(-1).Valid() || Mode(7).String() != "Mode(7)" {
		t.Error("Mode(7) or Mode(-1) reads as a mode")
	}
}

// list is a result list of six: 0 unclustered; 1 a winner whose
// duplicates are 2 (content-equivalent, dropped in remove mode) and 4
// (kept); 3 a winner alone; 5 a duplicate of 1 ranked last and not kept.
var list = []Facts{Unclustered, {Winner: 1}, {Winner: 1}, {Winner: 3}, {Winner: 1, Keep: true}, {Winner: 1}}

func facts(i int) Facts { return list[i] }

func TestPlace(t *testing.T) {
	want := map[Mode][]Placement{
		Group:    {Shown, Leads, GroupedUnder, Leads, GroupedUnder, GroupedUnder},
		Remove:   {Shown, Shown, Dropped, Shown, Annotated, Dropped},
		Annotate: {Shown, Annotated, Annotated, Annotated, Annotated, Annotated},
	}
	for m, w := range want {
		for i, f := range list {
			if got := Place(m, i, f); got != w[i] {
				t.Errorf("%v: result %d %+v is %v, want %v", m, i, f, got, w[i])
			}
		}
	}
	// A winner marked Keep (a cursor page's last hit) is annotated in
	// remove mode; Keep means nothing to the other modes.
	if got := Place(Remove, 2, Facts{Winner: 2, Keep: true}); got != Annotated {
		t.Errorf("remove: a kept winner is %v, want annotated", got)
	}
	if got := Place(Group, 2, Facts{Winner: 0, Keep: true}); got != GroupedUnder {
		t.Errorf("group: a kept duplicate is %v, want grouped_under", got)
	}
}

func TestWindow(t *testing.T) {
	for _, c := range []struct {
		mode       Mode
		skip, size int
		want       []int
	}{
		// Group counts 0, 1, 3; the duplicates go with 1.
		{Group, 0, 10, []int{0, 1, 3}},
		{Group, 1, 1, []int{1}},
		{Group, 3, 10, []int{}},
		// Remove counts the kept duplicate 4 as a place of its own.
		{Remove, 0, 10, []int{0, 1, 3, 4}},
		{Remove, 2, 2, []int{3, 4}},
		// Annotate counts as group does and shows a winner's
		// duplicates in their rank places with it.
		{Annotate, 0, 2, []int{0, 1, 2, 4, 5}},
		{Annotate, 2, 2, []int{3}},
		{Annotate, 0, 1, []int{0}},
	} {
		got := Window(c.mode, len(list), facts, c.skip, c.size)
		if !slices.Equal(got, c.want) {
			t.Errorf("%v skip %d size %d: %v, want %v", c.mode, c.skip, c.size, got, c.want)
		}
		for _, i := range got {
			if p := Place(c.mode, i, list[i]); p == Dropped || p == GroupedUnder {
				t.Errorf("%v: result %d is in the window but %v", c.mode, i, p)
			}
		}
	}
	if got := Window(Group, 0, facts, 0, 10); len(got) != 0 {
		t.Errorf("an empty list's window is %v", got)
	}
}

func TestPurpose(t *testing.T) {
	for m, p := range map[Mode]similarity.Purpose{Group: similarity.PurposeGroup, Annotate: similarity.PurposeGroup, Remove: similarity.PurposeRemove} {
		if m.Purpose() != p {
			t.Errorf("%v uses the %v decision, want %v", m, m.Purpose(), p)
		}
	}
	var names []string
	for _, p := range Purposes() {
		names = append(names, p.String())
	}
	if strings.Join(names, ",") != "group,remove" {
		t.Errorf("Purposes() = %v", names)
	}
	if Remove.Explained() != Annotate || Group.Explained() != Group || Annotate.Explained() != Annotate {
		t.Error("Explained: remove should render annotated, the others as they are")
	}
	if !Removable(similarity.Verdict{Duplicate: true}) || Removable(similarity.Verdict{}) {
		t.Error("Removable should follow the content-equivalence verdict")
	}
}
