package cluster

import (
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// samplePage is one signed page of the embedded LLVM sample.
type samplePage struct {
	url, page string // page: the page name without the release
	sig       []byte
}

var samplePages []samplePage

func signedSample(t testing.TB) []samplePage {
	t.Helper()
	if samplePages != nil {
		return samplePages
	}
	for d, err := range sample.Docs() {
		if err != nil {
			t.Fatal(err)
		}
		r, err := page.Signer{}.Sign(d.Body, "text/html")
		if err != nil {
			t.Fatal(err)
		}
		enc, err := r.Sig.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		samplePages = append(samplePages, samplePage{
			url:  "https://llvm.example/" + strings.TrimPrefix(d.ID, "sample://llvm/"),
			page: sample.Page(d.ID),
			sig:  enc,
		})
	}
	return samplePages
}

func newTestService(t testing.TB, o Options) *Service {
	t.Helper()
	o.Logger = slog.New(slog.DiscardHandler)
	s, err := New(NewMemStore(), o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustIngest(t testing.TB, s *Service, pages ...client.Page) []client.IngestResult {
	t.Helper()
	res, err := s.Ingest(pages)
	if err != nil {
		t.Fatalf("Ingest: %v", err)
	}
	return res
}

// groupsOf returns the partition of urls by group, each sorted, as a
// sorted list of strings.
func groupsOf(t testing.TB, s *Service, urls []string) []string {
	t.Helper()
	res, err := s.Lookup(urls)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]string{}
	for _, r := range res {
		by[r.Group] = append(by[r.Group], r.URL)
	}
	var out []string
	for _, m := range by {
		slices.Sort(m)
		out = append(out, strings.Join(m, " "))
	}
	slices.Sort(out)
	return out
}

// checkNoMixedGroups fails t when a group of s holds two different pages
// of the sample (pages[i] is at urls[i]) or a page is unknown; it returns
// each page's groups.
func checkNoMixedGroups(t testing.TB, s *Service, pages []samplePage, urls []string) map[string]map[string]bool {
	t.Helper()
	res, err := s.Lookup(urls)
	if err != nil {
		t.Fatal(err)
	}
	groupPages := map[string]map[string]bool{}
	pageGroups := map[string]map[string]bool{}
	for i, r := range res {
		if !r.Known {
			t.Fatalf("%s unknown after ingest", r.URL)
		}
		name := pages[i].page
		if groupPages[r.Group] == nil {
			groupPages[r.Group] = map[string]bool{}
		}
		groupPages[r.Group][name] = true
		if pageGroups[name] == nil {
			pageGroups[name] = map[string]bool{}
		}
		pageGroups[name][r.Group] = true
	}
	for g, names := range groupPages {
		if len(names) > 1 {
			t.Errorf("group %s mixes pages %v", g, slices.Sorted(maps.Keys(names)))
		}
	}
	return pageGroups
}

func TestSampleReleasesGroup(t *testing.T) {
	pages := signedSample(t)
	var batch []client.Page
	var urls []string
	for _, p := range pages {
		batch = append(batch, client.Page{URL: p.url, Signature: p.sig})
		urls = append(urls, p.url)
	}
	one := newTestService(t, Options{})
	mustIngest(t, one, batch...)

	// The same page of several releases ends in one group; different
	// pages never share a group.
	pageGroups := checkNoMixedGroups(t, one, pages, urls)
	split := 0
	for name, gs := range pageGroups {
		// Release 22's llvm-link page doubled (191 to 391 words): its
		// sources match 13's at a difflib ratio of 0.66, a pair llvm-docs
		// leaves out as grey, and the near-duplicate decision keeps it
		// apart (it is contained, LCS ratio <= 0.49).
		if name == "CommandGuide/llvm-link" {
			continue
		}
		if len(gs) > 1 {
			split++
			t.Logf("page %s is split over %d groups", name, len(gs))
		}
	}
	if split > 0 {
		t.Errorf("%d of %d pages split over several groups", split, len(pageGroups))
	}

	// One by one gives the same groups as one batch.
	seq := newTestService(t, Options{})
	for _, p := range batch {
		mustIngest(t, seq, p)
	}
	if got, want := groupsOf(t, seq, urls), groupsOf(t, one, urls); !slices.Equal(got, want) {
		t.Errorf("groups one by one = %q, want (one batch) %q", got, want)
	}

	// Re-ingesting unchanged pages keeps them all in place (tier 1).
	for _, r := range mustIngest(t, one, batch...) {
		if r.Status != client.StatusStayed && r.Status != client.StatusWinnerChanged {
			t.Errorf("re-ingest %s: status %q, want %q", r.URL, r.Status, client.StatusStayed)
		}
	}
}

// byPage returns the sample pages of one page name.
func byPage(t testing.TB, name string) []samplePage {
	var out []samplePage
	for _, p := range signedSample(t) {
		if p.page == name {
			out = append(out, p)
		}
	}
	if len(out) < 3 {
		t.Fatalf("page %s has %d releases", name, len(out))
	}
	return out
}

func TestChangedPageStays(t *testing.T) {
	s := newTestService(t, Options{})
	ps := byPage(t, "Benchmarking")
	mustIngest(t, s, client.Page{URL: "https://a.example/bench", Signature: ps[0].sig, Popularity: 5})
	mustIngest(t, s, client.Page{URL: "https://b.example/bench", Signature: ps[0].sig, Popularity: 1})
	// b's content changes to another release: it still matches a.
	res := mustIngest(t, s, client.Page{URL: "https://b.example/bench", Signature: ps[1].sig, Popularity: 1})
	if res[0].Status != client.StatusStayed || res[0].Winner != "https://a.example/bench" {
		t.Errorf("changed page: %+v, want stayed with winner a", res[0])
	}
	// b's content changes to an unrelated page: it moves to a new group.
	other := byPage(t, "CFIVerify")
	res = mustIngest(t, s, client.Page{URL: "https://b.example/bench", Signature: other[0].sig, Popularity: 1})
	if res[0].Status != client.StatusMoved || res[0].Winner != "https://b.example/bench" {
		t.Errorf("unrelated change: %+v, want moved to a group of its own", res[0])
	}
	lr, _ := s.Lookup([]string{"https://a.example/bench"})
	if lr[0].Size != 1 || !lr[0].IsWinner {
		t.Errorf("a after b left: %+v, want a singleton winner", lr[0])
	}
}

func TestWinnerRules(t *testing.T) {
	r := WinnerRules{MarketTLDs: []string{".uk"}}
	tests := []struct {
		name string
		a, b Candidate
		want bool
	}{
		{"popularity", Candidate{"https://long.example/a/b/c", 2}, Candidate{"https://s.example/", 1}, true},
		{"https", Candidate{"https://a.example/x", 1}, Candidate{"http://a.example/x", 1}, true},
		{"https over shorter", Candidate{"https://a.example/xy", 1}, Candidate{"http://a.example/x", 1}, true},
		{"shorter", Candidate{"https://a.example/x", 1}, Candidate{"https://a.example/xy", 1}, true},
		{"static", Candidate{"https://a.example/abc", 1}, Candidate{"https://a.example/a?b", 1}, true},
		{"market", Candidate{"https://a.example.uk/", 1}, Candidate{"https://a.example.us/", 1}, true},
		{"lexicographic", Candidate{"https://a.example/a", 1}, Candidate{"https://a.example/b", 1}, true},
		{"lexicographic reversed", Candidate{"https://a.example/b", 1}, Candidate{"https://a.example/a", 1}, false},
		{"equal", Candidate{"https://a.example/a", 1}, Candidate{"https://a.example/a", 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Better(tt.a, tt.b); got != tt.want {
				t.Errorf("Better(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
	rules := map[string]string{"popularity": RulePopularity, "https": RuleHTTPS, "https over shorter": RuleHTTPS, "shorter": RuleShorter,
		"static": RuleStatic, "market": RuleMarket, "lexicographic": RuleURL, "lexicographic reversed": RuleURL, "equal": ""}
	for _, tt := range tests {
		if _, rule := r.Decide(tt.a, tt.b); rule != rules[tt.name] {
			t.Errorf("%s: Decide(%v, %v) rule %q, want %q", tt.name, tt.a, tt.b, rule, rules[tt.name])
		}
	}
	// Order: shorter before https.
	short := WinnerRules{Order: []string{RuleShorter, RuleHTTPS}}
	if better, rule := short.Decide(Candidate{"https://a.example/xy", 1}, Candidate{"http://a.example/x", 1}); better || rule != RuleShorter {
		t.Errorf("Order shorter, https: Decide = %v %q, want false shorter", better, rule)
	}
	if err := (WinnerRules{Order: []string{"newest"}}).Validate(); err == nil {
		t.Error("Validate accepts the unknown rule newest")
	}
	tol := WinnerRules{PopularityTolerance: 0.5}
	if !tol.Better(Candidate{"https://a.example/", 1}, Candidate{"https://a.example/longer", 1.4}) {
		t.Error("Better with tolerance 0.5: 1 vs 1.4 should tie on popularity and the shorter URL win")
	}
}

func TestWinnerElection(t *testing.T) {
	s := newTestService(t, Options{})
	ps := byPage(t, "Benchmarking")
	mustIngest(t, s,
		client.Page{URL: "https://a.example/long/path", Signature: ps[0].sig, Popularity: 1},
		client.Page{URL: "https://b.example/x", Signature: ps[1].sig, Popularity: 1})
	lr, _ := s.Lookup([]string{"https://a.example/long/path"})
	if lr[0].Winner != "https://b.example/x" {
		t.Fatalf("winner = %q, want the shorter URL", lr[0].Winner)
	}
	res := mustIngest(t, s, client.Page{URL: "https://a.example/long/path", Signature: ps[0].sig, Popularity: 9})
	if res[0].Status != client.StatusWinnerChanged || res[0].Winner != "https://a.example/long/path" {
		t.Errorf("more popular: %+v, want winner-changed to a", res[0])
	}
	// Deleting the winner passes the crown.
	res = mustIngest(t, s, client.Page{URL: "https://a.example/long/path", Deleted: true})
	if res[0].Status != client.StatusDeleted {
		t.Errorf("delete: %+v", res[0])
	}
	lr, _ = s.Lookup([]string{"https://a.example/long/path", "https://b.example/x"})
	if lr[0].Known || !lr[1].IsWinner || lr[1].Size != 1 {
		t.Errorf("after deleting the winner: %+v", lr)
	}
}

func TestRedirects(t *testing.T) {
	ps := byPage(t, "Benchmarking")
	other := byPage(t, "CFIVerify")
	const (
		target = "https://a.example/page"
		src    = "https://a.example/old"
		src2   = "https://a.example/older"
	)
	t.Run("case 3 known target", func(t *testing.T) {
		s := newTestService(t, Options{})
		mustIngest(t, s, client.Page{URL: target, Signature: ps[0].sig})
		res := mustIngest(t, s, client.Page{URL: src2, RedirectTo: src}, client.Page{URL: src, RedirectTo: target})
		for _, r := range res {
			if r.Status != client.StatusRedirect || r.Winner != target {
				t.Errorf("redirect %+v, want in %s's group", r, target)
			}
		}
	})
	t.Run("case 3 target later", func(t *testing.T) {
		s := newTestService(t, Options{})
		res := mustIngest(t, s, client.Page{URL: src, RedirectTo: target})
		if res[0].Group != "" {
			t.Errorf("redirect to unknown target: %+v, want pending", res[0])
		}
		mustIngest(t, s, client.Page{URL: target, Signature: ps[0].sig})
		lr, _ := s.Lookup([]string{src})
		if lr[0].Winner != target {
			t.Errorf("after target arrives: %+v, want winner %s", lr[0], target)
		}
	})
	t.Run("case 1 redirectors follow", func(t *testing.T) {
		s := newTestService(t, Options{})
		mustIngest(t, s,
			client.Page{URL: "https://b.example/p", Signature: ps[1].sig, Popularity: 10},
			client.Page{URL: target, Signature: ps[0].sig},
			client.Page{URL: src, RedirectTo: target})
		lr, _ := s.Lookup([]string{src, target})
		if lr[0].Group != lr[1].Group || lr[0].Winner != "https://b.example/p" {
			t.Fatalf("before: %+v", lr)
		}
		// target changes to other content: it and its redirect move.
		mustIngest(t, s, client.Page{URL: target, Signature: other[0].sig})
		lr, _ = s.Lookup([]string{src, target, "https://b.example/p"})
		if lr[0].Group != lr[1].Group || lr[1].Group == lr[2].Group || lr[0].Winner != target {
			t.Errorf("after the target moved: %+v", lr)
		}
	})
	t.Run("delete target", func(t *testing.T) {
		s := newTestService(t, Options{})
		mustIngest(t, s, client.Page{URL: target, Signature: ps[0].sig}, client.Page{URL: src, RedirectTo: target})
		mustIngest(t, s, client.Page{URL: target, Deleted: true})
		lr, _ := s.Lookup([]string{src})
		if !lr[0].Known || lr[0].Group != "" {
			t.Errorf("redirect to a deleted page: %+v, want known and pending", lr[0])
		}
	})
	t.Run("loop", func(t *testing.T) {
		s := newTestService(t, Options{})
		res := mustIngest(t, s, client.Page{URL: src, RedirectTo: src2}, client.Page{URL: src2, RedirectTo: src})
		if res[0].Group != "" || res[1].Group != "" {
			t.Errorf("redirect loop: %+v, want pending", res)
		}
	})
}

func TestRepair(t *testing.T) {
	// Group {w, x, y}: x and y joined through w. When w leaves, the new
	// winner x does not match y: more than 20% fail, so the group splits.
	a := byPage(t, "Benchmarking")
	b := byPage(t, "CFIVerify")
	s := newTestService(t, Options{})
	mustIngest(t, s,
		client.Page{URL: "https://w.example/", Signature: a[0].sig, Popularity: 9},
		client.Page{URL: "https://x.example/", Signature: a[1].sig, Popularity: 5},
		client.Page{URL: "https://y.example/", Signature: a[2].sig, Popularity: 1})
	// y changes to other content but is compared with the winner only,
	// w: put it back in by ingesting a fake page next to w? Instead force
	// the case directly: make y's stored signature another page's while
	// it stays a member, as a stale group would hold it.
	st := s.st.(*MemStore)
	y, _, _ := st.Page("https://y.example/")
	y.Sig = reencode(t, b[0].sig)
	if err := st.Apply(&Batch{Pages: map[string]*PageRecord{"https://y.example/": &y}}); err != nil {
		t.Fatal(err)
	}
	mustIngest(t, s, client.Page{URL: "https://w.example/", Deleted: true})
	lr, _ := s.Lookup([]string{"https://x.example/", "https://y.example/"})
	if lr[0].Group == lr[1].Group {
		t.Errorf("after repair x and y share group %s, want split", lr[0].Group)
	}
	if !lr[1].IsWinner || !lr[0].IsWinner {
		t.Errorf("after repair: %+v, want both winners of their groups", lr)
	}
	if got := s.m.repairs.Get(); got != 1 {
		t.Errorf("repairs = %d, want 1", got)
	}
}

func TestUnverifiedMember(t *testing.T) {
	a := byPage(t, "Benchmarking")
	b := byPage(t, "CFIVerify")
	s := newTestService(t, Options{RepairRatio: -1})
	mustIngest(t, s,
		client.Page{URL: "https://w.example/", Signature: a[0].sig, Popularity: 9},
		client.Page{URL: "https://x.example/", Signature: a[1].sig, Popularity: 5},
		client.Page{URL: "https://y.example/", Signature: a[2].sig, Popularity: 1})
	st := s.st.(*MemStore)
	y, _, _ := st.Page("https://y.example/")
	y.Sig = reencode(t, b[0].sig)
	st.Apply(&Batch{Pages: map[string]*PageRecord{"https://y.example/": &y}})
	mustIngest(t, s, client.Page{URL: "https://w.example/", Deleted: true})
	lr, _ := s.Lookup([]string{"https://y.example/"})
	if lr[0].Group == "" || lr[0].Winner != "" || lr[0].IsWinner {
		t.Errorf("unverified member: %+v, want a group but no winner", lr[0])
	}
}

func TestIngestErrors(t *testing.T) {
	sig := signedSample(t)[0].sig
	bad := slices.Clone(sig)
	bad[0]++ // another version
	tests := []struct {
		name string
		page client.Page
		want string
	}{
		{"relative URL", client.Page{URL: "/x", Signature: sig}, "invalid URL"},
		{"ftp URL", client.Page{URL: "ftp://a.example/", Signature: sig}, "invalid URL"},
		{"no signature", client.Page{URL: "https://a.example/"}, "missing"},
		{"version", client.Page{URL: "https://a.example/", Signature: bad}, "another version"},
		{"corrupt", client.Page{URL: "https://a.example/", Signature: sig[:20]}, "corrupt"},
		{"self redirect", client.Page{URL: "https://a.example/", RedirectTo: "https://a.example/"}, "itself"},
		{"deleted redirect", client.Page{URL: "https://a.example/", RedirectTo: "https://b.example/", Deleted: true}, "deleted page with a redirect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestService(t, Options{})
			_, err := s.Ingest([]client.Page{{URL: "https://ok.example/", Signature: sig}, tt.page})
			ie, ok := err.(*InputError)
			if !ok || ie.Item != 1 || ie.URL != tt.page.URL || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Ingest(%s) error = %v, want item 1 with %q", tt.name, err, tt.want)
			}
			if lr, _ := s.Lookup([]string{"https://ok.example/"}); lr[0].Known {
				t.Errorf("Ingest(%s): first page applied, want nothing", tt.name)
			}
		})
	}
}

func reencode(t testing.TB, sig []byte) []byte {
	t.Helper()
	var s = new(signatureCodec)
	return s.strip(t, sig)
}

type signatureCodec struct{}

func (signatureCodec) strip(t testing.TB, b []byte) []byte {
	items, err := (&Service{o: Options{MaxBatch: 1}}).validate([]client.Page{{URL: "https://x.example/", Signature: b}})
	if err != nil {
		t.Fatal(err)
	}
	return items[0].enc
}

func ExampleService() {
	s, _ := New(NewMemStore(), Options{Logger: slog.New(slog.DiscardHandler)})
	var pages []client.Page
	for d := range sample.Docs() {
		if sample.Page(d.ID) != "Benchmarking" {
			continue
		}
		r, _ := page.Signer{}.Sign(d.Body, d.ContentType)
		sig, _ := r.Sig.MarshalBinary()
		pages = append(pages, client.Page{URL: "https://llvm.example/" + strings.TrimPrefix(d.ID, "sample://llvm/"), Signature: sig})
	}
	res, _ := s.Ingest(pages)
	for _, r := range res {
		fmt.Println(r.URL, r.Status, r.Group)
	}
	// Output:
	// https://llvm.example/13/Benchmarking new g1
	// https://llvm.example/14/Benchmarking joined g1
	// https://llvm.example/15/Benchmarking joined g1
	// https://llvm.example/16/Benchmarking joined g1
	// https://llvm.example/22/Benchmarking joined g1
}

// TestMerge builds two groups whose winners come to match each other (A
// changes within its group towards B), then ingests a page that matches
// both: the groups merge (Zhu §5.2).
func TestMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	base := synthSig(r)
	b := *base
	b.MinHash = slices.Clone(base.MinHash)
	for i := range 30 { // Jaccard 54/84 = 0.64 with base: another group
		b.MinHash[i] = uint16(r.Uint32())
	}
	a2 := *base
	a2.MinHash = slices.Clone(base.MinHash)
	copy(a2.MinHash[:15], b.MinHash[:15]) // 0.82 with base and with b
	enc := func(s *similarity.Signature) []byte {
		e, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	s := newTestService(t, Options{})
	const ua, ub, up = "https://a.example/x", "https://b.example/x", "https://p.example/x"
	res := mustIngest(t, s, client.Page{URL: ua, Signature: enc(base), Popularity: 2}, client.Page{URL: ub, Signature: enc(&b), Popularity: 1})
	if res[0].Group == res[1].Group {
		t.Fatalf("a and b share a group before the change: %+v", res)
	}
	if res := mustIngest(t, s, client.Page{URL: ua, Signature: enc(&a2), Popularity: 2}); res[0].Status != client.StatusStayed {
		t.Fatalf("changed a: %+v, want it to stay in its group", res)
	}
	mustIngest(t, s, client.Page{URL: up, Signature: enc(&a2), Popularity: 0})
	if g := groupsOf(t, s, []string{ua, ub, up}); len(g) != 1 {
		t.Errorf("groups after a page matching both: %q, want one merged group", g)
	}
	lr, err := s.Lookup([]string{ub})
	if err != nil || lr[0].Winner != ua || !lr[0].Known {
		t.Errorf("lookup of b after the merge: %+v, %v; want winner a (higher popularity)", lr, err)
	}
	if st := s.Stats(); st.Groups != 1 {
		t.Errorf("Stats: %+v, want 1 group", st)
	}
}

// TestOldSignatureVersion: a service upgraded past signature version 3
// takes version-3 signatures (from its store or older clients) without
// their word sequence, deciding their pairs on the scores without one, so
// no group mixes two pages. Signed again, a page keeps its group while it
// matches the winner (tier 1) and, as it now brings a sequence, looks up
// the groups it was kept apart from and merges those whose winners match:
// the groups end as a fresh service's.
// asVersion3 returns enc as signature version 3 encoded it: the layout
// without the numbers section, led by version byte 3.
func asVersion3(t *testing.T, enc []byte) []byte {
	t.Helper()
	var s similarity.Signature
	if err := s.UnmarshalBinary(enc); err != nil {
		t.Fatal(err)
	}
	s.Numbers = nil
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b[0] = 3
	return b
}

func TestOldSignatureVersion(t *testing.T) {
	pages := signedSample(t)
	var old, current []client.Page
	var urls []string
	for i, p := range pages {
		sig := p.sig
		if i%2 == 0 {
			sig = asVersion3(t, p.sig)
		}
		old = append(old, client.Page{URL: p.url, Signature: sig})
		current = append(current, client.Page{URL: p.url, Signature: p.sig})
		urls = append(urls, p.url)
	}
	s := newTestService(t, Options{})
	mustIngest(t, s, old...)
	checkNoMixedGroups(t, s, pages, urls)

	mustIngest(t, s, current...)
	fresh := newTestService(t, Options{})
	mustIngest(t, fresh, current...)
	got, err := s.Lookup(urls)
	if err != nil {
		t.Fatal(err)
	}
	want, err := fresh.Lookup(urls)
	if err != nil {
		t.Fatal(err)
	}
	apart := 0
	for i := range urls {
		for j := i + 1; j < len(urls); j++ {
			together, freshTogether := got[i].Group == got[j].Group, want[i].Group == want[j].Group
			if together && !freshTogether {
				t.Errorf("signed again, %s and %s share a group a fresh service keeps apart", urls[i], urls[j])
			}
			if freshTogether && !together {
				apart++
			}
		}
	}
	if apart > 0 {
		t.Errorf("signed again: %d pairs a fresh service groups are apart", apart)
	}
	if g, f := len(groupsOf(t, s, urls)), len(groupsOf(t, fresh, urls)); g != f {
		t.Errorf("signed again: %d groups, a fresh service %d", g, f)
	}
}

// TestRedirectGetsItsTargetsContent: a redirect whose page then gets
// content of its own, a copy of its target's, joins its target's group,
// as the same page arriving as content first does (before, the group it
// left was skipped, and it founded a group of its own;
// TestVersionedArrivalOrder found it).
func TestRedirectGetsItsTargetsContent(t *testing.T) {
	sig := byPage(t, "Benchmarking")[0].sig
	const a, b = "https://a.example/p", "https://b.example/p"
	s := newTestService(t, Options{})
	mustIngest(t, s, client.Page{URL: a, Signature: sig, Popularity: 2}, client.Page{URL: b, RedirectTo: a})
	res := mustIngest(t, s, client.Page{URL: b, Signature: sig, Popularity: 1})
	if g := groupsOf(t, s, []string{a, b}); len(g) != 1 {
		t.Errorf("redirect given its target's content: %+v, groups %q; want one group", res[0], g)
	}
	checkConsistent(t, s.st)
}
