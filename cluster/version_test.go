package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/cluster/client"
)

// fakeClock is a clock that tests set by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// newVersionService returns a service over st with a fake clock.
func newVersionService(t testing.TB, st Store, o Options) (*Service, *fakeClock) {
	t.Helper()
	o.Logger = slog.New(slog.DiscardHandler)
	s, err := New(st, o)
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	s.now = clk.now
	return s, clk
}

// pageState is what a lookup says of one URL, as a string to compare.
func pageState(t testing.TB, s *Service, u string) string {
	t.Helper()
	lr, err := s.Lookup([]string{u})
	if err != nil {
		t.Fatal(err)
	}
	r := lr[0]
	return fmt.Sprintf("known=%t group=%q winner=%q size=%d", r.Known, r.Group, r.Winner, r.Size)
}

// TestVersionOutOfOrder sends each pair of versioned writes of one page
// newer first: the older one, sent second, is not applied, is answered
// "stale" with the stored version, and leaves the page as the newer one
// left it; sent in order, the older one applies and the newer replaces
// it. The same pairs inside one batch give the same answers.
func TestVersionOutOfOrder(t *testing.T) {
	bench, cfi := byPage(t, "Benchmarking")[0].sig, byPage(t, "CFIVerify")[0].sig
	const (
		u     = "https://v.example/page"
		other = "https://other.example/bench"
		cfiU  = "https://other.example/cfi"
	)
	content := func(sig []byte, v uint64) client.Page { return client.Page{URL: u, Signature: sig, Version: v} }
	del := func(v uint64) client.Page { return client.Page{URL: u, Deleted: true, Version: v} }
	redirect := func(to string, v uint64) client.Page { return client.Page{URL: u, RedirectTo: to, Version: v} }
	cases := []struct {
		name         string
		newer, older client.Page
	}{
		{"ingest/ingest", content(cfi, 20), content(bench, 10)},
		{"ingest/delete", content(bench, 20), del(10)},
		{"delete/ingest", del(20), content(bench, 10)},
		{"delete/redirect", del(20), redirect(other, 10)},
		{"redirect/ingest", redirect(cfiU, 20), content(bench, 10)},
		{"ingest/redirect", content(bench, 20), redirect(cfiU, 10)},
		{"redirect/redirect", redirect(cfiU, 20), redirect(other, 10)},
		{"equal versions", content(cfi, 20), content(bench, 20)},
	}
	setup := []client.Page{{URL: other, Signature: bench, Popularity: 5}, {URL: cfiU, Signature: cfi, Popularity: 5}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The state the newer write leaves alone.
			want, _ := newVersionService(t, NewMemStore(), Options{})
			mustIngest(t, want, setup...)
			mustIngest(t, want, c.newer)
			wantState := pageState(t, want, u)

			s, _ := newVersionService(t, NewMemStore(), Options{})
			mustIngest(t, s, setup...)
			if res := mustIngest(t, s, c.newer); res[0].Status == client.StatusStale {
				t.Fatalf("newer write of a new page: %+v", res[0])
			}
			res := mustIngest(t, s, c.older)
			if res[0].Status != client.StatusStale || res[0].Version != c.newer.Version {
				t.Errorf("older write after the newer: %+v, want status %s, version %d", res[0], client.StatusStale, c.newer.Version)
			}
			if got := pageState(t, s, u); got != wantState {
				t.Errorf("after the older write: %s, want %s (the newer write's)", got, wantState)
			}
			checkConsistent(t, s.st)
			if got := s.m.status(client.StatusStale).Get(); got != 1 {
				t.Errorf("stale ingests counted %d, want 1", got)
			}

			// One batch, newer first.
			b, _ := newVersionService(t, NewMemStore(), Options{})
			mustIngest(t, b, setup...)
			res = mustIngest(t, b, c.newer, c.older)
			if res[1].Status != client.StatusStale || res[1].Version != c.newer.Version {
				t.Errorf("older write after the newer in one batch: %+v, want stale", res[1])
			}
			if got := pageState(t, b, u); got != wantState {
				t.Errorf("one batch: %s, want %s", got, wantState)
			}

			// In order, unless the versions are equal, both apply.
			if c.older.Version == c.newer.Version {
				return
			}
			in, _ := newVersionService(t, NewMemStore(), Options{})
			mustIngest(t, in, setup...)
			res = mustIngest(t, in, c.older, c.newer)
			for i, r := range res {
				if r.Status == client.StatusStale {
					t.Errorf("in order, write %d: %+v, want applied", i, r)
				}
			}
			if got := pageState(t, in, u); got != wantState {
				t.Errorf("in order: %s, want %s", got, wantState)
			}
		})
	}
}

// TestVersionUnversioned: a write without a version applies whatever
// the stored version, and leaves the page without one, so that any
// versioned write applies after it; a delete without a version leaves no
// tombstone.
func TestVersionUnversioned(t *testing.T) {
	bench, cfi := byPage(t, "Benchmarking")[0].sig, byPage(t, "CFIVerify")[0].sig
	const u = "https://v.example/page"
	s, _ := newVersionService(t, NewMemStore(), Options{})
	mustIngest(t, s, client.Page{URL: u, Signature: bench, Version: 50})
	res := mustIngest(t, s, client.Page{URL: u, Signature: cfi})
	if res[0].Status == client.StatusStale || res[0].Version != 0 {
		t.Errorf("unversioned write over version 50: %+v, want applied, no version", res[0])
	}
	if res := mustIngest(t, s, client.Page{URL: u, Signature: bench, Version: 1}); res[0].Status == client.StatusStale {
		t.Errorf("version 1 after an unversioned write: %+v, want applied", res[0])
	}
	mustIngest(t, s, client.Page{URL: u, Deleted: true})
	if _, ok, _ := s.st.Tombstone(u); ok {
		t.Error("an unversioned delete left a tombstone")
	}
	if res := mustIngest(t, s, client.Page{URL: u, Signature: bench, Version: 1}); res[0].Status != client.StatusNew {
		t.Errorf("version 1 after an unversioned delete: %+v, want new", res[0])
	}
}

// TestTombstoneExpiry: a versioned delete's tombstone refuses older
// writes for Options.TombstoneTTL, then no more, and the sweep of an
// ingest within a quarter TTL after that removes it from the store.
func TestTombstoneExpiry(t *testing.T) {
	bench := byPage(t, "Benchmarking")[0].sig
	const u, w, other = "https://v.example/page", "https://v.example/swept", "https://v.example/other"
	s, clk := newVersionService(t, NewMemStore(), Options{TombstoneTTL: time.Hour})
	start := clk.t
	mustIngest(t, s, client.Page{URL: u, Signature: bench, Version: 5}, client.Page{URL: u, Deleted: true, Version: 6},
		client.Page{URL: w, Deleted: true, Version: 6})
	clk.t = start.Add(59 * time.Minute)
	if res := mustIngest(t, s, client.Page{URL: u, Signature: bench, Version: 5}); res[0].Status != client.StatusStale || res[0].Version != 6 {
		t.Errorf("older write within the TTL: %+v, want stale at version 6", res[0])
	}
	clk.t = start.Add(61 * time.Minute)
	if res := mustIngest(t, s, client.Page{URL: u, Signature: bench, Version: 5}); res[0].Status == client.StatusStale {
		t.Errorf("older write past the TTL: %+v, want applied", res[0])
	}
	if _, ok, _ := s.st.Tombstone(u); ok {
		t.Errorf("the tombstone of %s is still stored after a write applied over it", u)
	}
	clk.t = start.Add(75 * time.Minute)
	mustIngest(t, s, client.Page{URL: other, Signature: bench})
	if _, ok, _ := s.st.Tombstone(w); ok {
		t.Errorf("the tombstone of %s is still stored a quarter TTL after its TTL", w)
	}
}

// TestVersionsReload: every store keeps the versions of pages and
// tombstones and the signer's fingerprint across a reopen, and a page
// record without a version (as every earlier store holds) reads as
// unversioned.
func TestVersionsReload(t *testing.T) {
	type opener struct {
		name string
		open func(t *testing.T) (open func() Store)
	}
	openers := []opener{{"memory", func(t *testing.T) func() Store {
		st := NewMemStore()
		return func() Store { return st }
	}}}
	for _, d := range diskStores {
		openers = append(openers, opener{d.name, func(t *testing.T) func() Store {
			path := filepath.Join(t.TempDir(), "store")
			return func() Store {
				st, err := d.open(path)
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
		}})
	}
	openers = append(openers, opener{"redis", func(t *testing.T) func() Store {
		addrs := redisCluster(t)
		return func() Store {
			st, err := OpenRedis(addrs, RedisOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
	}})
	bench := byPage(t, "Benchmarking")[0].sig
	const u, gone = "https://v.example/page", "https://v.example/gone"
	for _, o := range openers {
		t.Run(o.name, func(t *testing.T) {
			open := o.open(t)
			st := open()
			s, _ := newVersionService(t, st, Options{})
			_, err := s.IngestSigned("0123456789abcdef", []client.Page{{URL: u, Signature: bench, Version: 7},
				{URL: gone, Signature: bench, Version: 3}, {URL: gone, Deleted: true, Version: 4}})
			if err != nil {
				t.Fatal(err)
			}
			if o.name != "memory" {
				if err := st.Close(); err != nil {
					t.Fatal(err)
				}
				st = open()
				defer st.Close()
			}
			if p, ok, err := st.Page(u); err != nil || !ok || p.Version != 7 {
				t.Errorf("Page(%s) after reopening = %+v, %t, %v; want version 7", u, p, ok, err)
			}
			if ts, ok, err := st.Tombstone(gone); err != nil || !ok || ts.Version != 4 {
				t.Errorf("Tombstone(%s) after reopening = %+v, %t, %v; want version 4", gone, ts, ok, err)
			}
			if m, err := st.Meta(); err != nil || m.SignerFingerprint != "0123456789abcdef" {
				t.Errorf("Meta after reopening = %+v, %v; want the signer's fingerprint", m, err)
			}
			s, _ = newVersionService(t, st, Options{})
			var se *SignerError
			if _, err := s.IngestSigned("fedcba9876543210", []client.Page{{URL: u, Signature: bench, Version: 8}}); !errors.As(err, &se) {
				t.Errorf("another fingerprint after reopening: error %v, want a SignerError", err)
			}
			res := mustIngest(t, s, client.Page{URL: u, Signature: bench, Version: 6}, client.Page{URL: gone, Signature: bench, Version: 4})
			for i, want := range []uint64{7, 4} {
				if res[i].Status != client.StatusStale || res[i].Version != want {
					t.Errorf("older write after reopening: %+v, want stale at %d", res[i], want)
				}
			}
		})
	}
	// A record as an earlier version wrote it.
	rec := encodePage(&PageRecord{Group: "g1", Sig: []byte{1, 2, 3}, Verified: true})
	if p, err := decodePage(rec); err != nil || p.Version != 0 {
		t.Errorf("unversioned record: %+v, %v", p, err)
	}
	p := &PageRecord{Group: "g1", Sig: []byte{1, 2, 3}, Verified: true, Version: 1 << 60}
	if got, err := decodePage(encodePage(p)); err != nil || got.Version != p.Version {
		t.Errorf("decodePage(encodePage(version %d)) = %+v, %v", p.Version, got, err)
	}
}

// TestVersionedArrivalOrder is the property of versions: any arrival
// order of the same versioned writes, in batches of any size, ends in
// the groups (members and winners) and tombstones that the in-order
// arrival gives, and the consistency check holds after every batch. The
// signatures are of unrelated pages, each page's copies identical, so
// that the duplicate relation is an equivalence and the groups do not
// depend on which page came first (order-dependent grouping is tier 2's
// by design, not the versions').
func TestVersionedArrivalOrder(t *testing.T) {
	var sigs [][]byte
	for _, name := range []string{"Benchmarking", "CFIVerify", "CommandGuide/llvm-link"} {
		sigs = append(sigs, byPage(t, name)[0].sig)
	}
	urls := make([]string, 6)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://o%d.example/p", i)
	}
	for seed := range uint64(150) {
		rng := rand.New(rand.NewPCG(seed, 11))
		var events []client.Page
		for v := uint64(1); v <= 24; v++ {
			if p, ok := randomWrite(rng, urls, sigs); ok {
				p.Version = v
				events = append(events, p)
			}
		}
		ingestAll := func(order []client.Page) (*Service, string) {
			s, _ := newVersionService(t, NewMemStore(), Options{})
			for len(order) > 0 {
				n := min(len(order), 1+rng.IntN(4))
				if _, err := s.Ingest(order[:n]); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				order = order[n:]
				if errs := consistencyErrors(t, s.st, WinnerRules{}); len(errs) > 0 {
					t.Fatalf("seed %d: %s", seed, joinLines(errs))
				}
			}
			return s, finalGroups(t, s, urls)
		}
		_, want := ingestAll(events)
		for range 3 {
			shuffled := slices.Clone(events)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if _, got := ingestAll(shuffled); got != want {
				t.Fatalf("seed %d: arrival order\n%s\nends in\n%s\nin order:\n%s\nevents:\n%s", seed, describe(shuffled), got, want, describe(events))
			}
		}
	}
}

// finalGroups describes the groups of urls (members and winner, without
// the group IDs, which depend on the order) and their versions.
func finalGroups(t testing.TB, s *Service, urls []string) string {
	t.Helper()
	lr, err := s.Lookup(urls)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]string{}
	var lines []string
	for _, r := range lr {
		if r.Group != "" {
			by[r.Group] = append(by[r.Group], r.URL)
		}
		p, ok, _ := s.st.Page(r.URL)
		ts, dead, _ := s.st.Tombstone(r.URL)
		lines = append(lines, fmt.Sprintf("%s: known %t version %d, tombstone %t %d", r.URL, ok, p.Version, dead, ts.Version))
	}
	for id, m := range by {
		g, _, _ := s.st.Group(id)
		lines = append(lines, fmt.Sprintf("group %s winner %s", strings.Join(m, " "), g.Winner))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func describe(ps []client.Page) string {
	var out []string
	for _, p := range ps {
		switch {
		case p.Deleted:
			out = append(out, fmt.Sprintf("v%d del %s", p.Version, p.URL))
		case p.RedirectTo != "":
			out = append(out, fmt.Sprintf("v%d %s -> %s", p.Version, p.URL, p.RedirectTo))
		default:
			out = append(out, fmt.Sprintf("v%d %s sig %x pop %g", p.Version, p.URL, p.Signature[len(p.Signature)-4:], p.Popularity))
		}
	}
	return joinLines(out)
}

// TestJournalTombstones: the Redis store's journal carries tombstones,
// and a journal written before them (led by recordVersion, without the
// tombstones' count) still decodes.
func TestJournalTombstones(t *testing.T) {
	deleted := time.Date(2026, 11, 1, 2, 3, 4, 5, time.UTC)
	b := &Batch{
		Pages:      map[string]*PageRecord{"https://a.example/": {Group: "g1", Sig: []byte{1}, Verified: true, Version: 9}, "https://b.example/": nil},
		Groups:     map[string]*GroupRecord{"g1": {Winner: "https://a.example/", Members: []string{"https://a.example/"}}},
		Redirects:  map[Redirect]bool{},
		Tombstones: map[string]*Tombstone{"https://b.example/": {Version: 4, Deleted: deleted}, "https://c.example/": nil},
		Meta:       &Meta{NextGroup: 1, SignerFingerprint: "0123456789abcdef"},
		Touched:    []string{"g1"},
	}
	got, err := decodeBatch(encodeBatch(b))
	if err != nil {
		t.Fatal(err)
	}
	if ts := got.Tombstones["https://b.example/"]; ts == nil || *ts != *b.Tombstones["https://b.example/"] {
		t.Errorf("tombstone after the journal = %+v, want %+v", ts, b.Tombstones["https://b.example/"])
	}
	if ts, ok := got.Tombstones["https://c.example/"]; !ok || ts != nil {
		t.Errorf("removed tombstone after the journal = %+v, %t; want nil, true", ts, ok)
	}
	if p := got.Pages["https://a.example/"]; p == nil || p.Version != 9 {
		t.Errorf("page after the journal = %+v, want version 9", p)
	}
	if got.Meta == nil || got.Meta.NextGroup != 1 || got.Meta.SignerFingerprint != b.Meta.SignerFingerprint {
		t.Errorf("meta after the journal = %+v, want %+v", got.Meta, b.Meta)
	}

	b.Tombstones = nil
	enc := encodeBatch(b)
	entry := len(encodeLogEntry(b.Touched, b.Founded))
	old := append([]byte{recordVersion}, enc[1:len(enc)-entry-1]...) // without the tombstones' count
	old = append(old, enc[len(enc)-entry:]...)
	got, err = decodeBatch(old)
	if err != nil || len(got.Tombstones) != 0 || got.Pages["https://a.example/"] == nil {
		t.Errorf("journal of the earlier format = %+v, %v", got, err)
	}
}
