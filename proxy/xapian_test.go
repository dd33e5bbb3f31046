package proxy

import (
	"net/url"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/proxy/engine"
)

// pageName returns the page and release of a served page's URL, e.g.
// "Benchmarking", "13" for http://127.0.0.1:p/pages/13/Benchmarking.html.
func pageName(link string) (page, release string) {
	u, err := url.Parse(link)
	if err != nil {
		return link, ""
	}
	dir, file := path.Split(u.Path)
	return strings.TrimSuffix(file, ".html"), path.Base(dir)
}

// TestXapianOmega runs winnow in front of a real Xapian Omega (Debian's
// xapian-omega: omindex and the omega CGI binary with its opensearch
// template) over saved LLVM pages of three releases, and checks the RSS
// answers in transparent mode and the metasearch JSON.
func TestXapianOmega(t *testing.T) {
	start := time.Now()
	tools := findOmega(t)
	dir := writeOmegaPages(t, omegaPageIDs)
	pages := startPages(t, dir)
	conf := buildOmegaIndex(t, tools, t.TempDir(), dir, pages.URL+"/pages/")
	omega, lastQuery := startOmega(t, tools, conf)

	omegaQuery := func(q string) string {
		return url.Values{"P": {q}, "DB": {"db"}, "FMT": {"opensearch"}}.Encode()
	}
	code, direct := get(t, omega.URL+"/?"+omegaQuery("benchmark"))
	if code != 200 {
		t.Fatalf("omega: status %d\n%s", code, direct)
	}
	r := decodeRSS(t, direct)
	if r.Channel.Total != 3 || len(r.Channel.Items) != 3 {
		t.Fatalf("omega P=benchmark: total %d, %d items; want the 3 Benchmarking pages\n%s", r.Channel.Total, len(r.Channel.Items), direct)
	}
	for _, it := range r.Channel.Items {
		if p, _ := pageName(it.Link); p != "Benchmarking" || !strings.HasPrefix(it.Link, pages.URL+"/pages/") {
			t.Errorf("omega P=benchmark lists %q, want a Benchmarking page under %s/pages/", it.Link, pages.URL)
		}
		if code, body := get(t, it.Link); code != 200 || !strings.Contains(body, "Benchmarking tips") {
			t.Errorf("GET %s = %d, want the saved page", it.Link, code)
		}
	}

	_, base := startProxy(t, Options{Engines: []Engine{omegaEngine(omega.URL, 5*time.Second)}, Budget: 3 * time.Second})

	// "benchmark OR review" matches the Benchmarking and CodeReview pages
	// of three releases each and the AdminTasks singleton.
	q := omegaQuery("benchmark OR review")
	_, plainBody := get(t, omega.URL+"/?"+q)
	plain := decodeRSS(t, plainBody)
	count := map[string]int{}
	for _, it := range plain.Channel.Items {
		p, _ := pageName(it.Link)
		count[p]++
	}
	if count["Benchmarking"] != 3 || count["CodeReview"] != 3 || count["AdminTasks"] != 1 || len(plain.Channel.Items) != 7 {
		t.Fatalf("omega %s: pages %v; want 3 Benchmarking, 3 CodeReview, 1 AdminTasks\n%s", q, count, plainBody)
	}

	t.Run("annotate", func(t *testing.T) {
		code, body := get(t, base+"/?"+q+"&winnow_mode=annotate")
		a := decodeRSS(t, body)
		if code != 200 || len(a.Channel.Items) != 7 {
			t.Fatalf("annotate: status %d, %d items; want 200 and all 7 in place\n%s", code, len(a.Channel.Items), body)
		}
		// The proxy over-fetched 3 pages' worth and kept Omega's own
		// parameters.
		sent := lastQuery()
		for k, want := range map[string]string{"P": "benchmark OR review", "DB": "db", "FMT": "opensearch", "TOPDOC": "0", "HITSPERPAGE": "30", "winnow_mode": ""} {
			if got := sent.Get(k); got != want {
				t.Errorf("annotate: proxy sent Omega %s=%q, want %q (%s)", k, got, want, sent.Encode())
			}
		}
		if a.Channel.ItemsPerPage != 10 || a.Channel.StartIndex != 1 {
			t.Errorf("annotate: itemsPerPage %d, startIndex %d; want the client's 10 and 1", a.Channel.ItemsPerPage, a.Channel.StartIndex)
		}
		if a.Channel.Total != plain.Channel.Total {
			t.Errorf("annotate: totalResults %d, want Omega's %d kept", a.Channel.Total, plain.Channel.Total)
		}
		for _, keep := range []string{"<copyright>(C)2005, Xapian.org</copyright>", `xmlns:openSearch="http://a9.com/-/spec/opensearch/1.1/"`, "<language>en</language>"} {
			if !strings.Contains(body, keep) {
				t.Errorf("annotate: Omega's %s is gone", keep)
			}
		}
		winners := map[string]map[string]bool{} // page -> winner URLs
		clusters := map[string]map[string]bool{}
		losers := map[string]int{}
		for i, it := range a.Channel.Items {
			if it.Link != plain.Channel.Items[i].Link {
				t.Errorf("annotate: item %d is %s, want Omega's order (%s)", i, it.Link, plain.Channel.Items[i].Link)
			}
			p, _ := pageName(it.Link)
			an := it.Annotation
			if an == nil || an.Cluster == "" {
				t.Errorf("annotate: %s has no winnow:annotation", it.Link)
				continue
			}
			if winners[p] == nil {
				winners[p], clusters[p] = map[string]bool{}, map[string]bool{}
			}
			winners[p][an.Winner] = true
			clusters[p][an.Cluster] = true
			if w, _ := pageName(an.Winner); w != p {
				t.Errorf("annotate: %s marked a duplicate of %s", it.Link, an.Winner)
			}
			if an.Winner != it.Link {
				losers[p]++
				if an.Relation == "" || !strings.Contains(an.Explain, ":") {
					t.Errorf("annotate: loser %s has relation %q, explain %q; want both", it.Link, an.Relation, an.Explain)
				}
			}
		}
		if len(winners["Benchmarking"]) != 1 || len(clusters["Benchmarking"]) != 1 || losers["Benchmarking"] != 2 {
			t.Errorf("annotate: Benchmarking winners %v, clusters %v, %d losers; want one winner, one cluster, 2 losers\n%s",
				winners["Benchmarking"], clusters["Benchmarking"], losers["Benchmarking"], body)
		}
		if clusters["AdminTasks"] != nil && clusters["Benchmarking"] != nil {
			for c := range clusters["AdminTasks"] {
				if clusters["Benchmarking"][c] {
					t.Errorf("annotate: AdminTasks shares cluster %s with Benchmarking", c)
				}
			}
		}
	})

	t.Run("remove", func(t *testing.T) {
		// Remove mode drops what the content-equivalence decision accepts;
		// a release of a page it does not accept (LLVM 22's Benchmarking
		// page has sections 13's lacks) stays in place, annotated.
		code, body := get(t, base+"/?"+q+"&winnow_mode=remove")
		a := decodeRSS(t, body)
		seen, annotated := map[string]bool{}, 0
		for _, it := range a.Channel.Items {
			p, _ := pageName(it.Link)
			kept := it.Annotation != nil && strings.HasPrefix(it.Annotation.Explain, "kept: a near-duplicate of ")
			if len(it.Duplicates) > 0 || it.Annotation != nil && !kept {
				t.Errorf("remove: %s carries winnow elements other than a kept annotation", it.Link)
			}
			if seen[p] && !kept {
				t.Errorf("remove: %s repeats %s without saying why", it.Link, p)
			}
			if kept {
				annotated++
			}
			seen[p] = true
		}
		if code != 200 || !seen["Benchmarking"] || !seen["CodeReview"] || !seen["AdminTasks"] || len(a.Channel.Items) > len(plain.Channel.Items) {
			t.Errorf("remove: status %d, pages %v, %d of %d items; want every page, no item added\n%s", code, seen, len(a.Channel.Items), len(plain.Channel.Items), body)
		}
		if annotated == 0 && strings.Contains(body, "xmlns:winnow") {
			t.Errorf("remove: the winnow namespace was declared with nothing to annotate")
		}
	})

	t.Run("group", func(t *testing.T) {
		code, body := get(t, base+"/?"+q+"&winnow_mode=group&winnow_explain=1")
		a := decodeRSS(t, body)
		if code != 200 || len(a.Channel.Items) != 3 {
			t.Fatalf("group: status %d, %d items; want 3 winners\n%s", code, len(a.Channel.Items), body)
		}
		for _, it := range a.Channel.Items {
			p, rel := pageName(it.Link)
			want := map[string]int{"Benchmarking": 2, "CodeReview": 2}[p]
			if len(it.Duplicates) != want {
				t.Errorf("group: %s has %d nested duplicates, want %d", it.Link, len(it.Duplicates), want)
			}
			for _, d := range it.Duplicates {
				if len(d.Item) != 1 {
					t.Errorf("group: a duplicate of %s nests %d items, want 1", it.Link, len(d.Item))
					continue
				}
				dp, drel := pageName(d.Item[0].Link)
				if dp != p || drel == rel || d.Relation == "" || d.Explain == "" {
					t.Errorf("group: %s nests %s (relation %q, explain %q); want another release of %s, explained",
						it.Link, d.Item[0].Link, d.Relation, d.Explain, p)
				}
			}
		}
		// Without winnow_explain a duplicate carries its relation and
		// verdict, not the explanation.
		_, compact := get(t, base+"/?"+q+"&winnow_mode=group")
		n := 0
		for _, it := range decodeRSS(t, compact).Channel.Items {
			for _, d := range it.Duplicates {
				n++
				if d.Relation == "" || d.Explain != "" {
					t.Errorf("group without explain: a duplicate of %s has relation %q, explain %q; want a relation, no explanation", it.Link, d.Relation, d.Explain)
				}
			}
		}
		if n != 4 {
			t.Errorf("group without explain: %d duplicates nested, want 4", n)
		}
	})

	t.Run("pages", func(t *testing.T) {
		// Two pages of 2: distinct results are counted from the first
		// hit, so the Benchmarking and CodeReview clusters shown on the
		// first page do not come back on the second.
		var got []string
		for _, topdoc := range []string{"0", "2"} {
			_, body := get(t, base+"/?"+q+"&HITSPERPAGE=2&TOPDOC="+topdoc+"&winnow_mode=remove")
			for _, it := range decodeRSS(t, body).Channel.Items {
				p, _ := pageName(it.Link)
				if it.Annotation == nil { // kept releases are shown, annotated, where they rank
					got = append(got, p)
				}
			}
		}
		// Kept releases take slots of their own; the others never repeat.
		if len(got) < 2 || len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(got) {
			t.Errorf("pages of 2: unannotated items %q, want at least two, none repeated", got)
		}
	})

	t.Run("deep page", func(t *testing.T) {
		// Past MaxFetch the proxy asks for TOPDOC=from and 3 pages'
		// worth of hits; Omega must not snap TOPDOC to a multiple of
		// HITSPERPAGE (RAWSEARCH), or the page would start at hit 0.
		_, deep := startProxy(t, Options{
			Engines: []Engine{{
				Name:    "omega",
				URL:     omega.URL,
				Adapter: engine.Config{Kind: "opensearch-rss", MaxFetch: 4},
				Timeout: 5 * time.Second,
			}},
			Budget: 3 * time.Second,
		})
		rq := omegaQuery("review")
		_, want := get(t, omega.URL+"/?"+rq+"&HITSPERPAGE=2&TOPDOC=2&RAWSEARCH=1")
		_, body := get(t, deep+"/?"+rq+"&HITSPERPAGE=2&TOPDOC=2&winnow_mode=remove")
		var wantLinks, gotLinks []string
		for _, it := range decodeRSS(t, want).Channel.Items {
			wantLinks = append(wantLinks, it.Link)
		}
		for _, it := range decodeRSS(t, body).Channel.Items {
			gotLinks = append(gotLinks, it.Link)
		}
		if len(wantLinks) != 2 || strings.Join(gotLinks, " ") != strings.Join(wantLinks, " ") {
			t.Errorf("TOPDOC=2 past MaxFetch: %q, want Omega's hits 3 and 4 %q", gotLinks, wantLinks)
		}
	})

	t.Run("off", func(t *testing.T) {
		_, body := get(t, base+"/?"+q+"&winnow_mode=off")
		if body != plainBody {
			t.Errorf("off: the answer differs from Omega's:\n%s\nwant\n%s", body, plainBody)
		}
	})

	t.Run("metasearch", func(t *testing.T) {
		page := searchJSON(t, base, "benchmark")
		if len(page.Engines) != 1 || page.Engines[0].Name != "omega" || page.Engines[0].Error != "" || page.Engines[0].Results != 3 {
			t.Errorf("search.json engines: %+v, want omega with 3 results", page.Engines)
		}
		if len(page.Groups) != 1 || len(page.Groups[0].Duplicates) != 2 {
			t.Fatalf("search.json groups: %+v; want one Benchmarking group with 2 duplicates", page.Groups)
		}
		g := page.Groups[0]
		p, rel := pageName(g.Result.URL)
		seen := map[string]bool{rel: true}
		for _, d := range g.Duplicates {
			dp, drel := pageName(d.URL)
			if dp != p || seen[drel] || d.Explain == "" {
				t.Errorf("search.json: %s listed as a duplicate of %s (explain %q); want another release, explained", d.URL, g.Result.URL, d.Explain)
			}
			seen[drel] = true
		}
		if p != "Benchmarking" {
			t.Errorf("search.json: group of %s, want Benchmarking", g.Result.URL)
		}
	})
	t.Logf("Omega index, CGI and proxy checks took %v", time.Since(start))
}
