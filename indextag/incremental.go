package indextag

import (
	"context"
	"slices"
	"strings"

	"github.com/winnow-search/winnow/internal/parallel"
	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/similarity"
)

// readIncremental reads what an incremental run compares: the documents
// new or changed since the -since value, the winners of the groups
// written before, and the members of groups whose winner is gone. The
// tag scan that finds those groups reads two small fields of every
// document and keeps the IDs of members of groups whose winner it has
// not seen yet.
func (j *job) readIncremental(ctx context.Context, fields []string, keep func(signed) error) error {
	seen := map[ref]bool{}
	keepOnce := func(s signed) error {
		if seen[s.e.ref] {
			return nil
		}
		seen[s.e.ref] = true
		return keep(s)
	}
	slicesN := max(j.o.Slices, 1)
	err := j.readInto(ctx, roleNew, func(ctx context.Context, fn func(hit) error) error {
		return j.st.scan(ctx, selector{since: j.o.Since}, fields, slicesN, fn)
	}, keepOnce)
	if err != nil {
		return err
	}
	j.rep.Read = j.readMethod()
	if err := j.readInto(ctx, roleWinner, func(ctx context.Context, fn func(hit) error) error {
		return j.st.scan(ctx, selector{winners: true}, fields, slicesN, fn)
	}, keepOnce); err != nil {
		return err
	}
	// Groups whose winner is gone: members seen, no winner.
	hasWinner := map[string]bool{}
	members := map[string][]ref{}
	err = j.st.scan(ctx, selector{}, []string{FieldGroup, FieldWinner}, slicesN, func(h hit) error {
		t, ok := storedTags(h.source)
		if !ok {
			return nil
		}
		j.mu.Lock()
		defer j.mu.Unlock()
		switch {
		case t.Winner:
			hasWinner[t.Group] = true
			delete(members, t.Group)
		case !hasWinner[t.Group]:
			members[t.Group] = append(members[t.Group], h.ref)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var orphans []ref
	for g, refs := range members {
		if !hasWinner[g] {
			orphans = append(orphans, refs...)
		}
	}
	slices.SortFunc(orphans, func(a, b ref) int { return strings.Compare(a.id, b.id) })
	return j.readInto(ctx, roleOrphan, func(ctx context.Context, fn func(hit) error) error {
		for start := 0; start < len(orphans); start += pageSize {
			hs, err := j.st.get(ctx, orphans[start:min(start+pageSize, len(orphans))], fields)
			if err != nil {
				return err
			}
			for _, h := range hs {
				if err := fn(h); err != nil {
					return err
				}
			}
		}
		return nil
	}, keepOnce)
}

// planIncremental decides the tags of an incremental run. A changed
// winner stays its group's winner. Each group whose winner is gone is
// clustered again among its members, as winnow dedup would (new winners,
// new IDs). A new page joins the group whose winner it matches best
// (highest Jaccard, then the smaller group ID: the cluster service's tier
// 2); the pages that match none are clustered among themselves.
func (j *job) planIncremental(ctx context.Context) (map[string]Tags, error) {
	tags := map[string]Tags{}
	one := 1.0
	// winners: group ID -> entry index.
	winners := map[string]int{}
	var fresh []int
	orphans := map[string][]int{}
	for i := range j.entries {
		e := &j.entries[i]
		switch {
		case e.tagged && e.old.Winner && (e.role == roleWinner || e.role == roleNew):
			winners[e.old.Group] = i
			tags[e.id] = Tags{Group: e.old.Group, Winner: true, Probability: &one}
		case e.role == roleOrphan:
			orphans[e.old.Group] = append(orphans[e.old.Group], i)
		default:
			fresh = append(fresh, i)
		}
	}
	groups := make([]string, 0, len(orphans))
	for g := range orphans {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	for _, g := range groups {
		es := make([]entry, len(orphans[g]))
		for k, i := range orphans[g] {
			es[k] = j.entries[i]
		}
		t, err := j.planAll(ctx, es, false)
		if err != nil {
			return nil, err
		}
		j.rep.Replaced++
		for k, i := range orphans[g] {
			tt := t[es[k].id]
			tags[j.entries[i].id] = tt
			if tt.Winner {
				winners[tt.Group] = i
			}
		}
	}
	// The winners in group order, so that ties go to the smaller ID.
	ids := make([]string, 0, len(winners))
	for g := range winners {
		ids = append(ids, g)
	}
	slices.Sort(ids)
	g, r := j.o.Group, j.o.Remove
	g.Exact, r.Exact = true, true
	best := make([]int, len(fresh)) // index into ids, -1 none
	verdicts := make([]similarity.Verdict, len(fresh))
	parallel.For(len(fresh), j.o.Workers, 4, func(k int) {
		best[k] = -1
		sig := &j.entries[fresh[k]].sig
		for wi, gid := range ids {
			v := g.Decide(&j.entries[winners[gid]].sig, sig)
			if !v.Duplicate {
				continue
			}
			if best[k] < 0 || v.Scores.Jaccard > verdicts[k].Scores.Jaccard {
				best[k], verdicts[k] = wi, v
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var rest []entry
	for k, i := range fresh {
		e := &j.entries[i]
		if best[k] < 0 {
			rest = append(rest, *e)
			continue
		}
		gid := ids[best[k]]
		rv := r.DecideAfter(&j.entries[winners[gid]].sig, &e.sig, &verdicts[k]) // the group verdict's alignment
		tags[e.id] = Tags{Group: gid, Removable: rv.Duplicate, Probability: offline.Probability(verdicts[k].Probability)}
		j.rep.Assigned++
	}
	t, err := j.planAll(ctx, rest, true)
	if err != nil {
		return nil, err
	}
	for id, tt := range t {
		tags[id] = tt
	}
	return tags, nil
}
