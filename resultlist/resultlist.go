// Package resultlist says what a mode does to a result list once its
// duplicates are known: which result is shown as the engine gave it,
// which leads a group, which is grouped under its winner, annotated in
// its place, or dropped, and which results fill a page. It is the one
// home of these rules: the proxy's renderers (JSON, XML feeds), its
// search page and headers, the offline job's lines, `winnow compare` and
// the evaluation ask it instead of deciding themselves.
//
// It holds no clustering: the caller gives each result's [Facts] (its
// cluster's winner, and for remove mode whether the content-equivalence
// decision kept it), and reads back a [Placement].
package resultlist

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/winnow-search/winnow/similarity"
)

// Mode says how duplicates are shown. The zero Mode is Group, the
// default.
type Mode int

const (
	// Group nests each winner's duplicates under it.
	Group Mode = iota
	// Remove drops duplicates and fills the page with the next distinct
	// results; a duplicate marked Keep stays, annotated.
	Remove
	// Annotate keeps every result in place and tells its cluster, winner
	// and why.
	Annotate
)

// Modes lists the mode names [ParseMode] accepts, the default first.
var Modes = []string{"group", "remove", "annotate"}

// String returns "group", "remove" or "annotate".
func (m Mode) String() string {
	switch m {
	case Remove:
		return "remove"
	case Group:
		return "group"
	case Annotate:
		return "annotate"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// Valid reports whether m is one of Group, Remove and Annotate.
func (m Mode) Valid() bool { return m >= Group && m <= Annotate }

// ParseMode returns the mode named s ("group", "remove" or "annotate");
// "" is the zero Mode, Group. It is the one parser of mode names: the
// configuration, the per-request parameter and the search page use it.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "group":
		return Group, nil
	case "remove":
		return Remove, nil
	case "annotate":
		return Annotate, nil
	}
	return Group, fmt.Errorf("mode %q is not one of %s", s, strings.Join(Modes, ", "))
}

// Purpose names the decision whose verdicts decide what m does to a
// duplicate: the near-duplicate decision ([similarity.PurposeGroup]) for
// group and annotate, the content-equivalence decision
// ([similarity.PurposeRemove]) for remove. Every mode clusters with the
// near-duplicate decision; remove mode then asks the other which
// duplicates may go ([Removable]).
func (m Mode) Purpose() similarity.Purpose {
	if m == Remove {
		return similarity.PurposeRemove
	}
	return similarity.PurposeGroup
}

// Explained returns the mode an answer asked to explain itself is
// rendered in: remove mode's marks annotated, every result as remove
// mode treats it (the duplicates the content-equivalence decision
// accepts, which remove mode drops, and the near-duplicates it keeps),
// dropping none; group and annotate mode as they are.
func (m Mode) Explained() Mode {
	if m == Remove {
		return Annotate
	}
	return m
}

// Purposes lists the decisions the modes use, each once, in the order of
// [Modes]: the near-duplicate decision (group, annotate), then the
// content-equivalence decision (remove).
func Purposes() []similarity.Purpose {
	return []similarity.Purpose{Group.Purpose(), Remove.Purpose()}
}

// Removable reports whether remove mode drops a duplicate whose
// content-equivalence verdict against its winner is v: only what that
// decision accepts goes; a near-duplicate it does not accept (or refuses,
// a page cut at the signing caps) stays. The offline job writes the same
// answer as a member's "removable".
func Removable(v similarity.Verdict) bool { return v.Duplicate }

// Facts are what clustering found for one result of a list.
type Facts struct {
	// Winner is the index of the result's cluster winner in the list:
	// the result's own index for a winner, -1 for a result not clustered
	// (not refined, or past the refined top).
	Winner int
	// Keep marks a result remove mode keeps in place, annotated: a
	// duplicate that is not [Removable] (or whose removal could not be
	// checked), never silently dropped.
	Keep bool
}

// Unclustered are the facts of a result passed through unmarked.
var Unclustered = Facts{Winner: -1}

// duplicate reports whether result i is another result's duplicate.
func (f Facts) duplicate(i int) bool { return f.Winner >= 0 && f.Winner != i }

// Placement is where a mode puts one result.
type Placement int

const (
	// Shown: in its place, as the engine gave it, nothing added (a
	// result not clustered; a winner in remove mode).
	Shown Placement = iota
	// Leads: in its place, a winner in group mode, its duplicates
	// grouped under it.
	Leads
	// GroupedUnder: not in the list on its own, nested under its winner
	// (Facts.Winner), a duplicate in group mode.
	GroupedUnder
	// Annotated: in its place with its cluster, winner and why (every
	// clustered result in annotate mode; in remove mode a result marked
	// Keep).
	Annotated
	// Dropped: not shown (remove mode: a duplicate not marked Keep).
	Dropped
)

// String returns "shown", "leads", "grouped_under", "annotated" or
// "dropped".
func (p Placement) String() string {
	switch p {
	case Shown:
		return "shown"
	case Leads:
		return "leads"
	case GroupedUnder:
		return "grouped_under"
	case Annotated:
		return "annotated"
	case Dropped:
		return "dropped"
	}
	return "Placement(" + strconv.Itoa(int(p)) + ")"
}

// Place returns where mode m puts result i of a list whose facts are f.
func Place(m Mode, i int, f Facts) Placement {
	switch {
	case f.Winner < 0:
		return Shown
	case m == Remove && f.Keep:
		return Annotated
	case m == Remove && f.Winner == i:
		return Shown
	case m == Remove:
		return Dropped
	case m == Annotate:
		return Annotated
	case f.Winner == i:
		return Leads
	}
	return GroupedUnder
}

// counts reports whether result i takes one of a page's places under
// mode m: every result but a duplicate, which is shown with its winner if
// at all (grouped under it, annotated beside it, or dropped), except one
// remove mode keeps, which takes its own place. A page of size n holds n
// counted results; paging skips counted results.
func counts(m Mode, i int, f Facts) bool {
	return !f.duplicate(i) || m == Remove && f.Keep
}

// Window returns the indexes, ascending, of the results of a list of n
// that mode m shows on a page: it skips the first skip results that take
// a page's place (every result but a duplicate, except a duplicate remove
// mode keeps) and takes the next size; in annotate mode the duplicates of
// the winners taken are shown too, each in its rank place, so a cluster
// is never split across pages (annotate counts distinct results as
// remove and group do). facts returns result i's facts.
func Window(m Mode, n int, facts func(i int) Facts, skip, size int) []int {
	pick := make([]int, 0, max(min(size, n), 0))
	for i := 0; i < n && len(pick) < size; i++ {
		if !counts(m, i, facts(i)) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		pick = append(pick, i)
	}
	if m == Annotate {
		pick = withDuplicates(pick, n, facts)
	}
	return pick
}

// withDuplicates adds to the picked winners (ascending) their
// duplicates, keeping rank order.
func withDuplicates(pick []int, n int, facts func(i int) Facts) []int {
	if len(pick) == 0 {
		return pick
	}
	on := make([]bool, n)
	for _, i := range pick {
		on[i] = true
	}
	out := make([]int, 0, len(pick))
	for i := range n {
		f := facts(i)
		if on[i] || f.duplicate(i) && on[f.Winner] {
			out = append(out, i)
		}
	}
	return out
}
