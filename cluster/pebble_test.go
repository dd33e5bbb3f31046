package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

func TestPebbleCrash(t *testing.T) { testCrash(t, diskStores[1]) }

func TestPebbleStore(t *testing.T) { testReopen(t, diskStores[1]) }

// setPebbleRaw is setRaw for the Pebble store.
func setPebbleRaw(t *testing.T, path, what string, v []byte) {
	t.Helper()
	db, err := pebble.Open(path, &pebble.Options{Logger: pebbleLogger{slog.New(slog.DiscardHandler)}})
	if err != nil {
		t.Fatal(err)
	}
	key := pebbleKey(pebbleMeta, "format")
	if what != "format" {
		key = pebbleKey(pebblePage, "https://a.example/")
	}
	if err := db.Set(key, v, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPebbleForeign checks that a Pebble directory with data but no
// format key is refused.
func TestPebbleForeign(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	db, err := pebble.Open(path, &pebble.Options{Logger: pebbleLogger{slog.New(slog.DiscardHandler)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Set([]byte("other"), []byte("app"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenPebble(path, PebbleOptions{}); !errors.Is(err, ErrFormat) {
		t.Errorf("OpenPebble of a foreign store: error %v, want ErrFormat", err)
	}
}

// TestPebbleLocked checks that a second open of a store in use fails.
func TestPebbleLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	st, err := OpenPebble(path, PebbleOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st2, err := OpenPebble(path, PebbleOptions{Logger: slog.New(slog.DiscardHandler)}); err == nil {
		st2.Close()
		t.Error("second OpenPebble of a store in use succeeded, want an error")
	}
}

// TestStoreClosed checks that every call on a closed Pebble store fails
// with ErrClosed instead of panicking, and that a second Close does
// nothing.
func TestStoreClosed(t *testing.T) {
	st, err := OpenPebble(filepath.Join(t.TempDir(), "store"), PebbleOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		name string
		call func() error
	}{
		{"Page", func() error { _, _, err := st.Page("https://a.example/"); return err }},
		{"Group", func() error { _, _, err := st.Group("g1"); return err }},
		{"GroupSize", func() error { _, _, _, err := st.GroupSize("g1"); return err }},
		{"Redirectors", func() error { _, err := st.Redirectors("https://a.example/"); return err }},
		{"Meta", func() error { _, err := st.Meta(); return err }},
		{"Groups", func() error { return st.Groups(func(string, GroupRecord) error { return nil }) }},
		{"Apply", func() error { return st.Apply(&Batch{}) }},
		{"Size", func() error { _, err := st.Size(); return err }},
	}
	for _, c := range calls {
		if err := c.call(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s on a closed store: error %v, want ErrClosed", c.name, err)
		}
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close: %v, want nil", err)
	}
}

// TestStoresAgree applies the same random batches to the memory store
// and to each embedded store and compares every read after each batch.
func TestStoresAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const urls, groups = 40, 12
	url := func(i int) string { return fmt.Sprintf("https://h%d.example/p/%d", i%3, i) }
	var (
		batches []*Batch
		part    []byte
		signer  string
	)
	for range 30 {
		b := &Batch{Pages: map[string]*PageRecord{}, Groups: map[string]*GroupRecord{}, Redirects: map[Redirect]bool{}, Tombstones: map[string]*Tombstone{}}
		for range 1 + r.IntN(8) {
			u := url(r.IntN(urls))
			if r.IntN(5) == 0 {
				b.Pages[u] = nil
				continue
			}
			p := &PageRecord{Group: groupID(uint64(1 + r.IntN(groups))), Popularity: r.Float64(), Verified: r.IntN(2) == 0, Version: uint64(r.IntN(2)) * r.Uint64()}
			if r.IntN(4) == 0 {
				p.RedirectTo = url(r.IntN(urls))
			} else {
				p.Sig = []byte{1, 2, byte(r.IntN(256))}
			}
			b.Pages[u] = p
		}
		for range r.IntN(4) {
			id := groupID(uint64(1 + r.IntN(groups)))
			if r.IntN(5) == 0 {
				b.Groups[id] = nil
				continue
			}
			g := &GroupRecord{Winner: url(r.IntN(urls))}
			for range 1 + r.IntN(5) {
				g.Members = append(g.Members, url(r.IntN(urls)))
			}
			slices.Sort(g.Members)
			b.Groups[id] = g
		}
		for range r.IntN(4) {
			b.Redirects[Redirect{url(r.IntN(urls)), url(r.IntN(urls))}] = r.IntN(3) != 0
		}
		for range r.IntN(3) {
			u := url(r.IntN(urls))
			b.Tombstones[u] = nil
			if r.IntN(3) != 0 {
				b.Tombstones[u] = &Tombstone{Version: r.Uint64(), Deleted: time.Unix(0, r.Int64()).UTC()}
			}
		}
		if r.IntN(3) == 0 {
			// As the service does, a partitioner and a signer's
			// fingerprint once set stay set.
			if r.IntN(2) == 0 {
				part = []byte{byte(r.IntN(256)), 9}
			}
			if r.IntN(4) == 0 {
				signer = fmt.Sprintf("%016x", r.Uint64())
			}
			b.Meta = &Meta{NextGroup: uint64(r.IntN(100)), Partitioner: part, SignerFingerprint: signer}
		}
		batches = append(batches, b)
	}
	for _, d := range diskStores {
		t.Run(d.name, func(t *testing.T) {
			mem := NewMemStore()
			st, err := d.open(filepath.Join(t.TempDir(), "store"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for i, b := range batches {
				if err := mem.Apply(b); err != nil {
					t.Fatal(err)
				}
				if err := st.Apply(b); err != nil {
					t.Fatal(err)
				}
				if got, want := dumpStore(t, st, urls, groups, url), dumpStore(t, mem, urls, groups, url); got != want {
					t.Fatalf("after batch %d:\n%s\nwant (memory store)\n%s", i, got, want)
				}
			}
		})
	}
}

// dumpStore renders every read of st over the URLs and groups of
// TestStoresAgree.
func dumpStore(t *testing.T, st Store, urls, groups int, url func(int) string) string {
	t.Helper()
	out := ""
	for i := range urls {
		p, ok, err := st.Page(url(i))
		if err != nil {
			t.Fatal(err)
		}
		rs, err := st.Redirectors(url(i))
		if err != nil {
			t.Fatal(err)
		}
		ts, dead, err := st.Tombstone(url(i))
		if err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("page %d %v %+v redirectors %q tombstone %v %+v\n", i, ok, p, rs, dead, ts)
	}
	for i := range groups {
		id := groupID(uint64(1 + i))
		g, ok, err := st.Group(id)
		if err != nil {
			t.Fatal(err)
		}
		w, n, ok2, err := st.GroupSize(id)
		if err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("group %s %v %+v size %s %d %v\n", id, ok, g, w, n, ok2)
	}
	var ids []string
	err := st.Groups(func(id string, g GroupRecord) error {
		ids = append(ids, fmt.Sprintf("%s %+v", id, g))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Tombstones(func(u string, ts Tombstone) error {
		ids = append(ids, fmt.Sprintf("tombstone %s %+v", u, ts))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	m, err := st.Meta()
	if err != nil {
		t.Fatal(err)
	}
	return out + fmt.Sprintf("groups %q\nmeta %+v\n", ids, m)
}
