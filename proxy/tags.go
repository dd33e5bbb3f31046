package proxy

import "github.com/winnow-search/winnow/proxy/engine"

// An index cleaned by `winnow index` carries each document's group
// (winnow_group), whether it is the group's winner (winnow_winner) and
// whether the content-equivalence decision accepted it against its
// winner (winnow_removable); the engine adapters read them from the hits
// (engine.Result.Group, GroupWinner, Removable). A tagged hit is grouped
// by its tag, as the cluster service's verified duplicates are: no fetch,
// no signature at query time. A hit without a tag takes the online path,
// and so do the tagged winners when any hit of the list is untagged, so
// that an untagged near-duplicate of a tagged page is still found.
// Tagged hits are counted with the cluster service's in the source
// metrics: both are groups computed before the query.

// taggedGroups adds the duplicates the hits' tags give to known (the
// cluster service's, which win where both speak) and the tagged winners
// to winners. presigned marks the tagged winners that need no signature:
// all of them when every hit is tagged, none otherwise.
func taggedGroups(results []engine.Result, known map[int]knownDup, winners []bool) (map[int]knownDup, []bool, []bool) {
	n := len(results)
	// Each group's winner on this page: the tagged winner, else the
	// best ranked member.
	var winnerOf map[string]int
	all := n > 0
	for i := range n {
		g := results[i].Group
		if g == "" {
			all = false
			continue
		}
		if _, ok := known[i]; ok {
			continue
		}
		if winnerOf == nil {
			winnerOf = make(map[string]int, n)
		}
		if w, ok := winnerOf[g]; !ok || !results[w].GroupWinner && results[i].GroupWinner {
			winnerOf[g] = i
		}
	}
	if winnerOf == nil {
		return known, winners, nil
	}
	if known == nil {
		known = make(map[int]knownDup, n)
	}
	if winners == nil {
		winners = make([]bool, n)
	}
	presigned := make([]bool, n)
	for i := range n {
		g := results[i].Group
		if g == "" {
			continue
		}
		if _, ok := known[i]; ok {
			continue
		}
		w := winnerOf[g]
		if i == w {
			winners[w], presigned[w] = true, all
			continue
		}
		known[i] = knownDup{winner: w, group: g, tagged: true}
	}
	return known, winners, presigned
}

// allTagged reports whether every result carries a winnow_group tag.
func allTagged(results []engine.Result) bool {
	for i := range results {
		if results[i].Group == "" {
			return false
		}
	}
	return len(results) > 0
}

// taggedExplain explains why a result is grouped under result w by the
// tags (its group is w's). Every duplicate of w has the same
// explanation: explained, when not nil, keeps it by w, so that a list
// builds each group's once.
func taggedExplain(results []engine.Result, w int, explained []string) string {
	if explained != nil && explained[w] != "" {
		return explained[w]
	}
	e := "duplicate: the index tags it winnow_group " + results[w].Group + " with " + results[w].URL + " (grouped by winnow index)"
	if explained != nil {
		explained[w] = e
	}
	return e
}

// removeTagged decides remove mode for the duplicates grouped by their
// tags, which carry no signature here: winnow_removable says whether the
// content-equivalence decision accepted the page against its winner.
func removeTagged(ref *refined, results []engine.Result) {
	if len(ref.taggedDups) == 0 {
		return
	}
	// The explanations by winner, removed and kept: one string a group.
	var removed, kept map[int]string
	for _, d := range ref.taggedDups {
		i, w := d[0], d[1]
		if results[i].Removable {
			e, ok := removed[w]
			if !ok {
				e = "removed: the index tags it winnow_removable (winnow index's content-equivalence decision accepted it against " + results[w].URL + ")"
				removed = setExplain(removed, w, e, len(ref.taggedDups))
			}
			ref.marks[i].Keep, ref.marks[i].Explain = false, e
			continue
		}
		e, ok := kept[w]
		if !ok {
			e = "kept: the index tags it a near-duplicate of " + results[w].URL + " but not removable (winnow_removable false)"
			kept = setExplain(kept, w, e, len(ref.taggedDups))
		}
		ref.marks[i].Keep, ref.marks[i].Explain = true, e
	}
}

// setExplain keeps explanation e of winner w in m, made with room for n
// when nil.
func setExplain(m map[int]string, w int, e string, n int) map[int]string {
	if m == nil {
		m = make(map[int]string, n)
	}
	m[w] = e
	return m
}

// markTagged marks the tagged results left unmarked, the winners taken
// from their tags with no duplicate on the page, as clusters of their
// own, as a signed page alone is marked.
func (out *refined) markTagged(results []engine.Result) {
	for i := range results {
		if results[i].Group != "" && out.marks[i].Winner < 0 && out.sources[i] == srcService {
			out.marks[i] = engine.Mark{Cluster: results[i].Group, Winner: i}
		}
	}
}
