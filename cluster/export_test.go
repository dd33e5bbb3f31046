package cluster

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/similarity"
)

// TestExportWinners: one line per group, with its winner and the
// winner's stored signature.
func TestExportWinners(t *testing.T) {
	st, s, pages := ingestedSample(t)
	var urls []string
	for _, p := range pages {
		urls = append(urls, p.URL)
	}
	var buf bytes.Buffer
	if err := ExportWinners(st, &buf); err != nil {
		t.Fatal(err)
	}
	groups := map[string]bool{}
	res, err := s.Lookup(urls)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		groups[r.Group] = true
	}
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var l WinnerLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		n++
		g, err := s.Group(l.Group)
		if err != nil || g == nil || g.Winner != l.URL {
			t.Errorf("line for group %s names winner %s; the group is %+v (%v)", l.Group, l.URL, g, err)
		}
		var sig similarity.Signature
		if err := sig.UnmarshalBinary(l.Signature); err != nil || sig.Empty() {
			t.Errorf("group %s: signature %v, empty %v", l.Group, err, sig.Empty())
		}
	}
	if n != len(groups) {
		t.Errorf("%d lines, want one per group (%d)", n, len(groups))
	}
}

// ingestedSample is a service on a memory store holding the signed
// sample, with the pages it was given.
func ingestedSample(t *testing.T) (Store, *Service, []client.Page) {
	t.Helper()
	st := NewMemStore()
	s, err := New(st, Options{SampleSize: 20})
	if err != nil {
		t.Fatal(err)
	}
	var pages []client.Page
	for _, p := range signedSample(t) {
		pages = append(pages, client.Page{URL: p.url, Signature: p.sig})
	}
	mustIngest(t, s, pages...)
	return st, s, pages
}

// hookStore is a store that runs hook before the first Page read.
type hookStore struct {
	Store
	hook func()
}

func (h *hookStore) Page(url string) (PageRecord, bool, error) {
	if f := h.hook; f != nil {
		h.hook = nil
		f()
	}
	return h.Store.Page(url)
}

// TestExportWinnersDuringIngest: batches applied while ExportWinners
// runs (here: after it has listed the groups, before it reads the first
// winner) leave every line a group's winner at some moment with that
// winner's signature: the group whose winner changed to another page,
// or was deleted, is listed with its new winner, not with the old one's
// new content or not at all.
func TestExportWinnersDuringIngest(t *testing.T) {
	bench := byPage(t, "Benchmarking")
	other := byPage(t, "CFIVerify")
	const a, b = "https://a.example/bench", "https://b.example/bench"
	for _, tt := range []struct {
		name   string
		change client.Page
	}{
		{"winner changed", client.Page{URL: a, Signature: other[0].sig, Popularity: 2}},
		{"winner deleted", client.Page{URL: a, Deleted: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, err := OpenBolt(filepath.Join(t.TempDir(), "store"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			s, err := New(st, Options{})
			if err != nil {
				t.Fatal(err)
			}
			res := mustIngest(t, s,
				client.Page{URL: a, Signature: bench[0].sig, Popularity: 2},
				client.Page{URL: b, Signature: bench[1].sig, Popularity: 1})
			if res[1].Winner != a {
				t.Fatalf("before: %+v, want b in a's group", res)
			}
			group := res[0].Group
			hs := &hookStore{Store: st, hook: func() { mustIngest(t, s, tt.change) }}
			var buf bytes.Buffer
			if err := ExportWinners(hs, &buf); err != nil {
				t.Fatal(err)
			}
			var lines []WinnerLine
			sc := bufio.NewScanner(&buf)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var l WinnerLine
				if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
					t.Fatal(err)
				}
				lines = append(lines, l)
			}
			found := false
			for _, l := range lines {
				p, _, err := st.Page(l.URL)
				if err != nil {
					t.Fatal(err)
				}
				if p.Group != l.Group || !bytes.Equal(p.Sig, l.Signature) {
					t.Errorf("line %s %s: the page is in group %q, signature equal %v", l.Group, l.URL, p.Group, bytes.Equal(p.Sig, l.Signature))
				}
				if l.Group == group {
					found = true
					if l.URL != b {
						t.Errorf("group %s listed with winner %s, want %s", group, l.URL, b)
					}
				}
			}
			if !found {
				t.Errorf("group %s, which has a winner throughout, not listed: %+v", group, lines)
			}
		})
	}
}
