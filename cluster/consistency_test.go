package cluster

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/winnow-search/winnow/cluster/client"
)

// storePages returns every page record of st (a MemStore or a store that
// scans its pages).
func storePages(t testing.TB, st Store) map[string]PageRecord {
	t.Helper()
	out := map[string]PageRecord{}
	switch st := st.(type) {
	case *MemStore:
		st.mu.RLock()
		defer st.mu.RUnlock()
		for u, p := range st.pages {
			out[u] = p
		}
	case pageScanner:
		err := st.scanPages(func(url, rec []byte) error {
			p, err := decodePage(rec)
			if err != nil {
				return fmt.Errorf("page %s: %w", url, err)
			}
			out[string(url)] = p
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("storePages: %T lists no pages", st)
	}
	return out
}

// consistencyErrors returns what is wrong with the groups of st: a
// member's group missing or not listing it, a page in two groups, a group
// whose winner is not one of its content members, a group without a
// content member, a redirect not in its target's group or missing from
// the redirect index.
func consistencyErrors(t testing.TB, st Store, rules WinnerRules) []string {
	t.Helper()
	pages := storePages(t, st)
	groups := map[string]GroupRecord{}
	if err := st.Groups(func(id string, g GroupRecord) error {
		groups[id] = g
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	in := map[string]string{} // member -> the group listing it
	for id, g := range groups {
		if !slices.IsSorted(g.Members) {
			fail("group %s: members not sorted: %q", id, g.Members)
		}
		content := 0
		for i, m := range g.Members {
			if i > 0 && g.Members[i-1] == m {
				fail("group %s lists %s twice", id, m)
			}
			if other, ok := in[m]; ok && other != id {
				fail("page %s in two groups: %s and %s", m, other, id)
			}
			in[m] = id
			p, ok := pages[m]
			switch {
			case !ok:
				fail("group %s: member %s has no page", id, m)
			case p.Group != id:
				fail("group %s: member %s says group %q", id, m, p.Group)
			case p.RedirectTo == "":
				content++
			}
		}
		if content == 0 {
			fail("group %s has no content member: %+v", id, g)
		}
		if g.Winner == "" {
			fail("group %s has no winner: %+v", id, g)
			continue
		}
		if _, found := slices.BinarySearch(g.Members, g.Winner); !found {
			fail("group %s: winner %s is not a member %q", id, g.Winner, g.Members)
		}
		wp, ok := pages[g.Winner]
		if ok && (wp.RedirectTo != "" || wp.Sig == nil) {
			fail("group %s: winner %s is a redirect (%s)", id, g.Winner, wp.RedirectTo)
		}
		for _, m := range g.Members {
			if p, ok := pages[m]; ok && p.RedirectTo == "" && rules.Better(Candidate{m, p.Popularity}, Candidate{g.Winner, wp.Popularity}) {
				fail("group %s: member %s (popularity %g) beats winner %s (%g)", id, m, p.Popularity, g.Winner, wp.Popularity)
			}
		}
	}
	for u, p := range pages {
		if p.Group != "" {
			if _, ok := groups[p.Group]; !ok {
				fail("page %s: group %s does not exist", u, p.Group)
			} else if in[u] != p.Group {
				fail("page %s: group %s does not list it", u, p.Group)
			}
		}
		if p.RedirectTo == "" {
			if p.Group == "" {
				fail("content page %s has no group", u)
			}
			continue
		}
		srcs, err := st.Redirectors(p.RedirectTo)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(srcs, u) {
			fail("redirect %s -> %s not in the redirect index", u, p.RedirectTo)
		}
		// The group of a redirect is its final target's.
		want, seen, cur := "", map[string]bool{u: true}, p.RedirectTo
		for range maxRedirectHops {
			if seen[cur] {
				break
			}
			seen[cur] = true
			tp, ok := pages[cur]
			if !ok {
				break
			}
			if tp.RedirectTo == "" {
				want = tp.Group
				break
			}
			cur = tp.RedirectTo
		}
		if p.Group != want {
			fail("redirect %s -> %s: group %q, its final target's %q", u, p.RedirectTo, p.Group, want)
		}
	}
	slices.Sort(errs)
	return errs
}

// checkConsistent fails t with what is wrong with the groups of st.
func checkConsistent(t testing.TB, st Store) {
	t.Helper()
	for _, e := range consistencyErrors(t, st, WinnerRules{}) {
		t.Error(e)
	}
}

// TestRandomOpsConsistent ingests random batches of content changes
// (releases of three sample pages, one of which splits), popularity
// changes, redirects (loops and chains included) and deletes over a few
// URLs and checks the groups and the winner rules after every batch.
func TestRandomOpsConsistent(t *testing.T) {
	var sigs [][]byte
	for _, name := range []string{"Benchmarking", "CFIVerify", "CommandGuide/llvm-link"} {
		for _, p := range byPage(t, name) {
			sigs = append(sigs, p.sig)
		}
	}
	urls := make([]string, 8)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://r%d.example/p", i)
	}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		st := NewMemStore()
		s, err := New(st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var log []string
		for range 20 {
			var batch []client.Page
			for range 1 + rng.IntN(4) {
				if p, ok := randomWrite(rng, urls, sigs); ok {
					batch = append(batch, p)
				}
			}
			for _, p := range batch {
				switch {
				case p.Deleted:
					log = append(log, "del "+p.URL)
				case p.RedirectTo != "":
					log = append(log, p.URL+" -> "+p.RedirectTo)
				default:
					log = append(log, fmt.Sprintf("%s sig%d pop %g", p.URL, slices.IndexFunc(sigs, func(b []byte) bool { return string(b) == string(p.Signature) }), p.Popularity))
				}
			}
			log = append(log, "--")
			if _, err := s.Ingest(batch); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if errs := consistencyErrors(t, st, WinnerRules{}); len(errs) > 0 {
				t.Fatalf("seed %d: after\n%s\n%s", seed, joinLines(log), joinLines(errs))
			}
		}
	}
}

// randomWrite returns a random write of one of urls: half the time
// content (one of sigs), else a redirect to another of urls or a delete,
// with a popularity of 0 to 2; ok is false for a redirect drawn to
// itself.
func randomWrite(rng *rand.Rand, urls []string, sigs [][]byte) (p client.Page, ok bool) {
	p = client.Page{URL: urls[rng.IntN(len(urls))], Popularity: float64(rng.IntN(3))}
	switch k := rng.IntN(10); {
	case k < 5:
		p.Signature = sigs[rng.IntN(len(sigs))]
	case k < 8:
		p.RedirectTo = urls[rng.IntN(len(urls))]
		if p.RedirectTo == p.URL {
			return p, false
		}
	default:
		p.Deleted = true
	}
	return p, true
}

func joinLines(l []string) string {
	out := ""
	for _, s := range l {
		out += "  " + s + "\n"
	}
	return out
}
