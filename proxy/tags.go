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
	var byGroup map[string][]int
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
		if byGroup == nil {
			byGroup = map[string][]int{}
		}
		byGroup[g] = append(byGroup[g], i)
	}
	if byGroup == nil {
		return known, winners, nil
	}
	if known == nil {
		known = map[int]knownDup{}
	}
	if winners == nil {
		winners = make([]bool, n)
	}
	presigned := make([]bool, n)
	for g, members := range byGroup {
		// The tagged winner, else the best ranked member of the group
		// on this page.
		w := members[0]
		for _, i := range members {
			if results[i].GroupWinner {
				w = i
				break
			}
		}
		winners[w] = true
		presigned[w] = all
		for _, i := range members {
			if i != w {
				known[i] = knownDup{winner: w, group: g, tagged: true}
			}
		}
	}
	return known, winners, presigned
}

// taggedExplain explains why result i is grouped under result w by the
// tags.
func taggedExplain(results []engine.Result, i, w int) string {
	return "duplicate: the index tags it winnow_group " + results[i].Group + " with " + results[w].URL + " (grouped by winnow index)"
}

// removeTagged decides remove mode for the duplicates grouped by their
// tags, which carry no signature here: winnow_removable says whether the
// content-equivalence decision accepted the page against its winner.
func removeTagged(ref *refined, results []engine.Result) {
	for _, d := range ref.taggedDups {
		i, w := d[0], d[1]
		if results[i].Removable {
			ref.marks[i].Keep = false
			ref.marks[i].Explain = "removed: the index tags it winnow_removable (winnow index's content-equivalence decision accepted it against " + results[w].URL + ")"
			continue
		}
		ref.marks[i].Keep = true
		ref.marks[i].Explain = "kept: the index tags it a near-duplicate of " + results[w].URL + " but not removable (winnow_removable false)"
	}
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
