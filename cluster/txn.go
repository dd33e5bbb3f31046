package cluster

import (
	"bytes"
	"slices"
	"time"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/similarity"
)

// maxRedirectHops bounds a redirect chain.
const maxRedirectHops = 16

// txn is one ingest batch: an overlay of changed records over the store,
// written by one Store.Apply. Groups founded or changed by the batch are
// entered in an overlay index, so later pages of the batch find them.
type txn struct {
	s       *Service
	b       Batch
	sigs    map[string]*similarity.Signature // decoded signatures by URL
	ovl     *index
	touched map[string]struct{} // groups whose representative changed
	meta    Meta
	lengths [][]uint32 // length vectors of new representatives
	swept   time.Time  // when the batch swept the expired tombstones; zero: it did not
}

func (t *txn) page(u string) (PageRecord, bool, error) {
	if p, ok := t.b.Pages[u]; ok {
		if p == nil {
			return PageRecord{}, false, nil
		}
		return *p, true, nil
	}
	return t.s.st.Page(u)
}

func (t *txn) setPage(u string, p PageRecord) { t.b.Pages[u] = &p }

func (t *txn) tombstone(u string) (Tombstone, bool, error) {
	if ts, ok := t.b.Tombstones[u]; ok {
		if ts == nil {
			return Tombstone{}, false, nil
		}
		return *ts, true, nil
	}
	return t.s.st.Tombstone(u)
}

// version returns the stored version of page u at now: its record's, or
// for a page not held, its tombstone's within Options.TombstoneTTL; tomb
// reports that a tombstone is stored, live or expired.
func (t *txn) version(u string, now time.Time) (v uint64, tomb bool, err error) {
	p, ok, err := t.page(u)
	if err != nil {
		return 0, false, err
	}
	ts, tomb, err := t.tombstone(u)
	switch {
	case err != nil:
		return 0, false, err
	case ok:
		// A page written again without a version after a versioned
		// delete: the record's version rules.
		return p.Version, tomb, nil
	case tomb && (t.s.o.TombstoneTTL < 0 || now.Sub(ts.Deleted) < t.s.o.TombstoneTTL):
		return ts.Version, true, nil
	}
	return 0, tomb, nil
}

func (t *txn) group(id string) (GroupRecord, bool, error) {
	if g, ok := t.b.Groups[id]; ok {
		if g == nil {
			return GroupRecord{}, false, nil
		}
		return *g, true, nil
	}
	return t.s.st.Group(id)
}

func (t *txn) setGroup(id string, g GroupRecord) { t.b.Groups[id] = &g }

// sig returns the decoded signature of content page u, nil if none.
func (t *txn) sig(u string) (*similarity.Signature, error) {
	if s, ok := t.sigs[u]; ok {
		return s, nil
	}
	p, ok, err := t.page(u)
	if err != nil || !ok || p.Sig == nil {
		return nil, err
	}
	s := new(similarity.Signature)
	if err := s.UnmarshalBinary(p.Sig); err != nil {
		return nil, err
	}
	t.sigs[u] = s
	return s, nil
}

// rep returns the representative signature of group id: its winner's.
func (t *txn) rep(id string) (*similarity.Signature, error) {
	var (
		w   string
		ok  bool
		err error
	)
	if g, in := t.b.Groups[id]; in {
		ok = g != nil
		if ok {
			w = g.Winner
		}
	} else {
		// The winner only: no need to decode the members.
		w, _, ok, err = t.s.st.GroupSize(id)
	}
	if err != nil || !ok || w == "" {
		return nil, err
	}
	return t.sig(w)
}

// touch records that group id's representative changed.
func (t *txn) touch(id string) error {
	t.touched[id] = struct{}{}
	rep, err := t.rep(id)
	if err != nil {
		return err
	}
	t.ovl.add(id, rep)
	return nil
}

func (t *txn) newGroup(winner string) (string, error) {
	t.meta.NextGroup++
	id := groupID(t.meta.NextGroup)
	t.setGroup(id, GroupRecord{Winner: winner, Members: []string{winner}})
	if err := t.touch(id); err != nil {
		return "", err
	}
	if s, _ := t.sig(winner); s != nil {
		t.lengths = append(t.lengths, s.Lengths)
	}
	return id, nil
}

func (t *txn) addMember(id, u string) error {
	g, ok, err := t.group(id)
	if err != nil || !ok {
		return err
	}
	i, found := slices.BinarySearch(g.Members, u)
	if !found {
		g.Members = slices.Insert(slices.Clone(g.Members), i, u)
		t.setGroup(id, g)
	}
	return nil
}

func (t *txn) removeMember(id, u string) error {
	g, ok, err := t.group(id)
	if err != nil || !ok {
		return err
	}
	if i, found := slices.BinarySearch(g.Members, u); found {
		g.Members = slices.Delete(slices.Clone(g.Members), i, i+1)
		t.setGroup(id, g)
	}
	return nil
}

func (t *txn) candidate(u string) (client.Page, error) {
	p, _, err := t.page(u)
	return client.Page{URL: u, Popularity: p.Popularity}, err
}

// better reports whether page a beats page b by the winner rules.
func (t *txn) better(a, b string) (bool, error) {
	pa, err := t.candidate(a)
	if err != nil {
		return false, err
	}
	pb, err := t.candidate(b)
	if err != nil {
		return false, err
	}
	return t.s.o.Winner.Better(Candidate{pa.URL, pa.Popularity}, Candidate{pb.URL, pb.Popularity}), nil
}

// contentMembers returns the members of g that are not redirects, best
// first by the winner rules.
func (t *txn) contentMembers(g GroupRecord) ([]Candidate, error) {
	var out []Candidate
	for _, m := range g.Members {
		p, ok, err := t.page(m)
		if err != nil {
			return nil, err
		}
		if ok && p.RedirectTo == "" {
			out = append(out, Candidate{m, p.Popularity})
		}
	}
	slices.SortFunc(out, func(a, b Candidate) int {
		switch {
		case t.s.o.Winner.Better(a, b):
			return -1
		case t.s.o.Winner.Better(b, a):
			return 1
		}
		return 0
	})
	return out, nil
}

// elect gives group id the best of its content members as winner and, if
// the winner changed, re-verifies the members against it.
func (t *txn) elect(id string) (changed bool, err error) {
	g, ok, err := t.group(id)
	if err != nil || !ok {
		return false, err
	}
	cs, err := t.contentMembers(g)
	if err != nil {
		return false, err
	}
	w := ""
	if len(cs) > 0 {
		w = cs[0].URL
	}
	if w == g.Winner {
		return false, nil
	}
	g.Winner = w
	t.setGroup(id, g)
	return true, t.newRep(id)
}

// newRep handles a changed representative of group id: the candidate
// tables are updated and every member is verified against the winner
// (Zhu §5.2); a group with too many failures is repaired.
func (t *txn) newRep(id string) error {
	if err := t.touch(id); err != nil {
		return err
	}
	g, ok, err := t.group(id)
	if err != nil || !ok || g.Winner == "" {
		return err
	}
	rep, err := t.sig(g.Winner)
	if err != nil {
		return err
	}
	fails, n := 0, 0
	for _, m := range g.Members {
		p, ok, err := t.page(m)
		if err != nil {
			return err
		}
		if !ok || p.RedirectTo != "" {
			continue
		}
		verified := m == g.Winner
		if !verified {
			n++
			s, err := t.sig(m)
			if err != nil {
				return err
			}
			verified = s != nil && t.s.o.Decision.Decide(rep, s).Duplicate
			if !verified {
				fails++
			}
		}
		if p.Verified != verified {
			p.Verified = verified
			t.setPage(m, p)
		}
	}
	t.s.m.verifyFailures.Add(fails)
	if fails > 0 && t.s.o.RepairRatio >= 0 && float64(fails) > t.s.o.RepairRatio*float64(n) {
		return t.repair(id)
	}
	return nil
}

// repair re-clusters the content members of group id (Zhu §5.2: "recompute
// the duplicate membership of this group"): best first by the winner
// rules, each member joins the first subgroup whose winner it matches or
// founds one. The first subgroup keeps the ID. Redirect members follow
// their targets.
func (t *txn) repair(id string) error {
	t.s.m.repairs.Inc()
	g, ok, err := t.group(id)
	if err != nil || !ok {
		return err
	}
	cs, err := t.contentMembers(g)
	if err != nil {
		return err
	}
	type sub struct {
		winner  string
		rep     *similarity.Signature
		members []string
	}
	var subs []*sub
	for _, c := range cs {
		s, err := t.sig(c.URL)
		if err != nil {
			return err
		}
		var into *sub
		for _, sb := range subs {
			if s != nil && t.s.o.Decision.Decide(sb.rep, s).Duplicate {
				into = sb
				break
			}
		}
		if into == nil {
			into = &sub{winner: c.URL, rep: s}
			subs = append(subs, into)
		}
		into.members = append(into.members, c.URL)
	}
	newID := map[string]string{} // content member -> its group
	ids := make([]string, len(subs))
	for i, sb := range subs {
		if i == 0 {
			ids[i] = id
		} else {
			t.meta.NextGroup++
			ids[i] = groupID(t.meta.NextGroup)
			t.lengths = append(t.lengths, sb.rep.Lengths)
		}
		for _, m := range sb.members {
			newID[m] = ids[i]
		}
	}
	members := make([][]string, len(subs))
	var stay []string
	for _, m := range g.Members {
		target := m
		p, _, err := t.page(m)
		if err != nil {
			return err
		}
		if p.RedirectTo != "" {
			target, _ = t.resolve(p.RedirectTo, m)
		}
		to, ok := newID[target]
		if !ok {
			stay = append(stay, m) // its target is leaving; the caller moves it
			continue
		}
		for i := range ids {
			if ids[i] == to {
				members[i] = append(members[i], m)
			}
		}
		if p.Group != to || !p.Verified {
			p.Group, p.Verified = to, true
			t.setPage(m, p)
		}
	}
	if len(subs) == 0 {
		return nil
	}
	members[0] = append(members[0], stay...)
	for i, sb := range subs {
		slices.Sort(members[i])
		t.setGroup(ids[i], GroupRecord{Winner: sb.winner, Members: members[i]})
		if err := t.touch(ids[i]); err != nil {
			return err
		}
	}
	return nil
}

// resolve follows the redirect chain from target (the page from redirects
// to it) to the page with the content. ok is false for an unknown target,
// a loop or a chain over maxRedirectHops.
func (t *txn) resolve(target, from string) (string, bool) {
	seen := map[string]bool{from: true}
	for range maxRedirectHops {
		if seen[target] {
			return "", false
		}
		seen[target] = true
		p, ok, err := t.page(target)
		if err != nil || !ok {
			return "", false
		}
		if p.RedirectTo == "" {
			return target, true
		}
		target = p.RedirectTo
	}
	return "", false
}

// redirectors returns the pages that redirect to target directly.
func (t *txn) redirectors(target string) ([]string, error) {
	stored, err := t.s.st.Redirectors(target)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, src := range stored {
		if add, ok := t.b.Redirects[Redirect{target, src}]; !ok || add {
			out = append(out, src)
		}
	}
	for r, add := range t.b.Redirects {
		if add && r.Target == target && !slices.Contains(stored, r.Source) {
			out = append(out, r.Source)
		}
	}
	slices.Sort(out)
	return out, nil
}

// follow moves every page that redirects to u, directly or through other
// redirects, into group id ("" leaves them pending), as Zhu §5.1 cases 1
// and 3 ask. The groups they leave are settled.
func (t *txn) follow(u, id string) error {
	seen := map[string]bool{u: true}
	queue := []string{u}
	left := map[string]bool{}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		srcs, err := t.redirectors(cur)
		if err != nil {
			return err
		}
		for _, src := range srcs {
			if seen[src] {
				continue
			}
			seen[src] = true
			queue = append(queue, src)
			p, ok, err := t.page(src)
			if err != nil {
				return err
			}
			if !ok || p.Group == id {
				continue
			}
			if p.Group != "" {
				if err := t.removeMember(p.Group, src); err != nil {
					return err
				}
				left[p.Group] = true
			}
			if id != "" {
				if err := t.addMember(id, src); err != nil {
					return err
				}
			}
			p.Group, p.Verified = id, true
			t.setPage(src, p)
		}
	}
	for g := range left {
		if err := t.settle(g); err != nil {
			return err
		}
	}
	return nil
}

// settle deletes group id when it has no content member left; redirect
// members left behind become pending.
func (t *txn) settle(id string) error {
	g, ok, err := t.group(id)
	if err != nil || !ok {
		return err
	}
	if g.Winner != "" {
		return nil
	}
	for _, m := range g.Members {
		p, ok, err := t.page(m)
		if err != nil {
			return err
		}
		if ok {
			p.Group = ""
			t.setPage(m, p)
		}
	}
	t.b.Groups[id] = nil
	return t.touch(id)
}

// leave takes content page u out of group id; a leaving winner passes the
// crown by the rules.
func (t *txn) leave(u, id string) error {
	if err := t.removeMember(id, u); err != nil {
		return err
	}
	g, ok, err := t.group(id)
	if err != nil || !ok || g.Winner != u {
		return err
	}
	_, err = t.elect(id)
	return err
}

// match returns the group whose representative s matches best (highest
// min-hash Jaccard, then smallest ID), searching the candidate tables of
// the store and of this batch, and the other groups s matches; "" if none
// matches.
func (t *txn) match(s *similarity.Signature, exclude string) (string, []string, error) {
	seen := map[string]bool{exclude: true}
	var (
		best   string
		bestJ  float64
		ferr   error
		others []string
	)
	check := func(id string) {
		if seen[id] || ferr != nil {
			return
		}
		seen[id] = true
		rep, err := t.rep(id)
		if err != nil {
			ferr = err
			return
		}
		if rep == nil {
			return
		}
		t.s.m.comparisons.Inc()
		v := t.s.o.Decision.Decide(rep, s)
		if !v.Duplicate {
			return
		}
		if best == "" || v.Scores.Jaccard > bestJ || v.Scores.Jaccard == bestJ && id < best {
			if best != "" {
				others = append(others, best)
			}
			best, bestJ = id, v.Scores.Jaccard
		} else {
			others = append(others, id)
		}
	}
	t.s.idx.candidates(s, check)
	t.ovl.candidates(s, check)
	slices.Sort(others)
	return best, others, ferr
}

// mergeInto merges into group dst every group of others whose winner
// matches dst's winner (Zhu §5.2: a page that matches two groups joins
// them when their winners are near-duplicates of each other; groups whose
// winners differ stay apart, the page joining the closer one). It reports
// how many groups it merged.
func (t *txn) mergeInto(dst string, others []string) (int, error) {
	merged := 0
	for _, src := range others {
		a, err := t.rep(dst)
		if err != nil {
			return merged, err
		}
		b, err := t.rep(src)
		if err != nil {
			return merged, err
		}
		if a == nil || b == nil || !t.s.o.Decision.Decide(a, b).Duplicate {
			continue
		}
		if err := t.merge(dst, src); err != nil {
			return merged, err
		}
		merged++
	}
	return merged, nil
}

// merge moves every member of group src into dst and deletes src; dst
// then elects its winner by the rules and verifies every member against
// it (newRep), which repairs the group if too many fail.
func (t *txn) merge(dst, src string) error {
	g, ok, err := t.group(src)
	if err != nil || !ok {
		return err
	}
	for _, m := range g.Members {
		p, ok, err := t.page(m)
		if err != nil {
			return err
		}
		if ok {
			p.Group = dst
			t.setPage(m, p)
		}
		if err := t.addMember(dst, m); err != nil {
			return err
		}
	}
	t.b.Groups[src] = nil
	if err := t.touch(src); err != nil {
		return err
	}
	t.s.m.merges.Inc()
	if _, err := t.elect(dst); err != nil {
		return err
	}
	return t.newRep(dst)
}

// content ingests a content page (Zhu §5.1 cases 1 and 2).
func (t *txn) content(it *item) (string, error) {
	u := it.URL
	old, known, err := t.page(u)
	if err != nil {
		return "", err
	}
	rec := PageRecord{Sig: it.enc, Popularity: it.Popularity, Verified: true, Version: it.Version}
	moved, from, exclude := false, "", ""
	if known && old.RedirectTo != "" {
		// A redirect that now has content of its own.
		t.b.Redirects[Redirect{old.RedirectTo, u}] = false
		if old.Group != "" {
			if err := t.removeMember(old.Group, u); err != nil {
				return "", err
			}
			moved, from = true, old.Group
		}
	} else if known && old.Group != "" {
		// Tier 1: does the page still match its group's representative?
		id := old.Group
		g, _, err := t.group(id)
		if err != nil {
			return "", err
		}
		rep, err := t.rep(id)
		if err != nil {
			return "", err
		}
		same := bytes.Equal(old.Sig, it.enc)
		if same || rep != nil && t.s.o.Decision.Decide(rep, it.sig).Duplicate {
			rec.Group = id
			t.setPage(u, rec)
			t.sigs[u] = it.sig
			status := client.StatusStayed
			if g.Winner == u {
				if !same {
					if err := t.newRep(id); err != nil {
						return "", err
					}
				}
				if rec.Popularity < old.Popularity {
					changed, err := t.elect(id)
					if err != nil {
						return "", err
					}
					if changed {
						status = client.StatusWinnerChanged
					}
				}
			} else if b, err := t.better(u, g.Winner); err != nil {
				return "", err
			} else if b {
				g.Winner = u
				t.setGroup(id, g)
				if err := t.newRep(id); err != nil {
					return "", err
				}
				status = client.StatusWinnerChanged
			}
			if !same && len(it.sig.Seq) > 0 && !similarity.EncodedWithSeq(old.Sig) {
				// The page now brings the word sequence its stored
				// signature lacked (signed again after an upgrade: an
				// older version is read without it; or keep_seq turned
				// on): it was grouped by the weaker decision without
				// one, so it may match groups it was kept apart from.
				// Tier 1 alone would keep them apart until a new page
				// bridges them; look them up as tier 2 does and merge
				// those whose winners match this group's (Zhu §5.2).
				best, others, err := t.match(it.sig, id)
				if err != nil {
					return "", err
				}
				if best != "" {
					others = append([]string{best}, others...)
				}
				if n, err := t.mergeInto(id, others); err != nil {
					return "", err
				} else if n > 0 {
					merged, _, err := t.group(id)
					if err != nil {
						return "", err
					}
					if merged.Winner != g.Winner {
						status = client.StatusWinnerChanged
					}
				}
			}
			return status, nil
		}
		// Case 1: changed beyond its group; it leaves for tier 2.
		t.setPage(u, PageRecord{Group: id, Popularity: old.Popularity, Sig: old.Sig})
		if err := t.leave(u, id); err != nil {
			return "", err
		}
		moved, from, exclude = true, id, id
	}
	// Tier 2.
	t.sigs[u] = it.sig
	t.setPage(u, rec)
	// A page that changed beyond its group does not match it; a
	// redirect that now has content may match its target's group again,
	// and must find it (else its arrival order would decide its group).
	id, others, err := t.match(it.sig, exclude)
	if err != nil {
		return "", err
	}
	status := client.StatusNew
	if id == "" {
		if id, err = t.newGroup(u); err != nil {
			return "", err
		}
		rec.Group = id
		t.setPage(u, rec)
	} else {
		status = client.StatusJoined
		rec.Group = id
		t.setPage(u, rec)
		if err := t.addMember(id, u); err != nil {
			return "", err
		}
		g, _, err := t.group(id)
		if err != nil {
			return "", err
		}
		if b, err := t.better(u, g.Winner); err != nil {
			return "", err
		} else if b {
			g.Winner = u
			t.setGroup(id, g)
			if err := t.newRep(id); err != nil {
				return "", err
			}
			status = client.StatusWinnerChanged
		}
		if _, err := t.mergeInto(id, others); err != nil {
			return "", err
		}
	}
	if err := t.follow(u, id); err != nil {
		return "", err
	}
	if moved {
		if err := t.settle(from); err != nil {
			return "", err
		}
		if status != client.StatusWinnerChanged {
			status = client.StatusMoved
		}
	}
	return status, nil
}

// redirect ingests a page that redirects (Zhu §5.1 case 3): it joins its
// final target's group as a redirect duplicate, and the pages that
// redirect to it follow.
func (t *txn) redirect(it *item) (string, error) {
	u := it.URL
	old, known, err := t.page(u)
	if err != nil {
		return "", err
	}
	from := ""
	if known {
		if old.RedirectTo != "" && old.RedirectTo != it.RedirectTo {
			t.b.Redirects[Redirect{old.RedirectTo, u}] = false
		}
		if old.Group != "" {
			from = old.Group
			if old.RedirectTo == "" {
				if err := t.leave(u, from); err != nil {
					return "", err
				}
			} else if err := t.removeMember(from, u); err != nil {
				return "", err
			}
		}
	}
	delete(t.sigs, u)
	t.b.Redirects[Redirect{it.RedirectTo, u}] = true
	rec := PageRecord{RedirectTo: it.RedirectTo, Popularity: it.Popularity, Verified: true, Version: it.Version}
	if target, ok := t.resolve(it.RedirectTo, u); ok {
		p, _, err := t.page(target)
		if err != nil {
			return "", err
		}
		rec.Group = p.Group
	}
	t.setPage(u, rec)
	if rec.Group != "" {
		if err := t.addMember(rec.Group, u); err != nil {
			return "", err
		}
	}
	if err := t.follow(u, rec.Group); err != nil {
		return "", err
	}
	if from != "" && from != rec.Group {
		if err := t.settle(from); err != nil {
			return "", err
		}
	}
	return client.StatusRedirect, nil
}

// remove deletes page u; a deleted winner passes the crown by the rules
// and the pages that redirect to u become pending.
func (t *txn) remove(u string) (string, error) {
	old, known, err := t.page(u)
	if err != nil || !known {
		return client.StatusDeleted, err
	}
	if old.RedirectTo != "" {
		t.b.Redirects[Redirect{old.RedirectTo, u}] = false
	}
	if old.Group != "" {
		if old.RedirectTo == "" {
			err = t.leave(u, old.Group)
		} else {
			err = t.removeMember(old.Group, u)
		}
		if err != nil {
			return "", err
		}
	}
	t.b.Pages[u] = nil
	delete(t.sigs, u)
	if err := t.follow(u, ""); err != nil {
		return "", err
	}
	if old.Group != "" {
		if err := t.settle(old.Group); err != nil {
			return "", err
		}
	}
	return client.StatusDeleted, nil
}
