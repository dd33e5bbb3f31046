package cluster

import (
	"bufio"
	"bytes"
	"encoding/json"
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
