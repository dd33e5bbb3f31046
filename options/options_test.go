package options

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/similarity"
)

// TestWinnersConfig: an unknown rule is an error naming its field; the
// market TLDs default to cluster.market_tlds.
func TestWinnersConfig(t *testing.T) {
	c, err := config.Load("", nil, []string{"dedup.winner.rules=https,newest"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Winners(c); err == nil || !strings.Contains(err.Error(), "dedup.winner.rules") {
		t.Errorf("Winners error = %v, want one naming dedup.winner.rules", err)
	}
	c, err = config.Load("", nil, []string{"dedup.winner.rules=market", "cluster.market_tlds=.uk"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Winners(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Rule(offline.Doc{URL: "https://b.example.uk/"}, offline.Doc{URL: "https://a.example.com/"}); got != "market" {
		t.Errorf("rule = %q, want market (cluster.market_tlds)", got)
	}
}

// TestLine: two copies of a page and another page, clustered as the jobs
// do, give one cluster, whose line has with the preferred winner, its rule, the member's
// verdict, scores and removal fields.
func TestLine(t *testing.T) {
	c := config.Default()
	sg := Signer(c)
	group, remove, err := Decisions(c)
	if err != nil {
		t.Fatal(err)
	}
	// Two pages of the embedded sample, the first also with a line added.
	pages := map[string]string{}
	for d, err := range Sample(c) {
		if err != nil {
			t.Fatal(err)
		}
		pages[d.ID] = string(d.Body)
	}
	body, other := pages["sample://llvm/13/Benchmarking"], pages["sample://llvm/13/CodeReview"]
	docs := []offline.Doc{
		{Key: "1", ID: "1", URL: "http://example.org/fox"},
		{Key: "2", ID: "2", URL: "https://example.org/fox"},
		{Key: "3", ID: "3", URL: "https://example.org/other"},
	}
	var sigs []*similarity.Signature
	var keys []string
	rank, err := Winners(c)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range []string{body, strings.Replace(body, "</body>", "<p>One more line.</p></body>", 1), other} {
		res, err := sg.Sign([]byte(b), "text/html")
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, &res.Sig)
		keys = append(keys, rank.Key(docs[i]))
	}
	clusters := similarity.BatchCluster(sigs, group, similarity.BatchOptions{Keys: keys, WinnerVerified: true})
	if len(clusters) != 1 { // a page alone is no cluster
		t.Fatalf("%d clusters %+v, want 1", len(clusters), clusters)
	}
	line := offline.NewLine(clusters[0], docs, sigs, rank, remove)
	var b bytes.Buffer
	if err := line.Write(&b); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{`"winner":{"id":"2"`, `"winner_rule":"https"`, `"size":2`, `"relation":"winner"`, `"removable":`, `"scores":{`} {
		if !strings.Contains(s, want) {
			t.Errorf("line %s: no %s", s, want)
		}
	}
	if line.Members[1].ID != "1" || line.Members[1].Removal == nil || line.Winner.Removal != nil {
		t.Errorf("members %+v: want the http copy second with its removal fields", line.Members)
	}
	if want := offline.ClusterID("2"); line.ID != fmt.Sprintf("%016x", want) {
		t.Errorf("ID %s, want %016x", line.ID, want)
	}
	if !strings.HasSuffix(s, "}\n") || strings.Count(s, "\n") != 1 {
		t.Errorf("line %q is not one JSON line", s)
	}
}

// TestWinnersEmptyRules: an empty rule list (a configuration that went
// through YAML) means the default rules, as nil does.
func TestWinnersEmptyRules(t *testing.T) {
	c := config.Default()
	c.Dedup.Winner.Rules = []string{}
	r, err := Winners(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Rule(offline.Doc{URL: "https://a.example/"}, offline.Doc{URL: "http://a.example/"}); got != "https" {
		t.Errorf("rule = %q, want https (the default rules)", got)
	}
}

// TestCorpusOptionsEmptyFields: empty field lists read the default
// fields, as nil ones do.
func TestCorpusOptionsEmptyFields(t *testing.T) {
	c := config.Default()
	c.Dedup.Fields = config.DedupFields{ID: []string{}, URL: []string{}, HTML: []string{}, Text: []string{}, Popularity: []string{}}
	path := t.TempDir() + "/in.jsonl"
	if err := os.WriteFile(path, []byte(`{"id": "a", "url": "https://x.example/", "text": "some words", "popularity": 2}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for d, err := range CorpusOptions(c).Open(path) {
		if err != nil {
			t.Fatal(err)
		}
		if d.ID != "a" || d.URL != "https://x.example/" || string(d.Body) != "some words" || d.Popularity != 2 {
			t.Errorf("doc %+v, want the default fields read", d)
		}
	}
}

// TestLineRemoveProbabilityExact: a member the content-equivalence
// decision rejects (LLVM's CodeReview page of releases 13 and 19, a
// near-duplicate edited between them) carries its probability in the
// line, not the upper bound the decision's early exit leaves.
func TestLineRemoveProbabilityExact(t *testing.T) {
	c := config.Default()
	sg := Signer(c)
	group, remove, err := Decisions(c)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string][]byte{}
	for d, err := range Sample(c) {
		if err != nil {
			t.Fatal(err)
		}
		pages[d.ID] = d.Body
	}
	docs := []offline.Doc{{Key: "13", ID: "13", URL: "https://example.org/13/CodeReview"}, {Key: "19", ID: "19", URL: "https://example.org/19/CodeReview"}}
	var sigs []*similarity.Signature
	for _, id := range []string{"sample://llvm/13/CodeReview", "sample://llvm/19/CodeReview"} {
		res, err := sg.Sign(pages[id], "text/html")
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, &res.Sig)
	}
	clusters := similarity.BatchCluster(sigs, group, similarity.BatchOptions{Keys: []string{"13", "19"}, WinnerVerified: true})
	if len(clusters) != 1 {
		t.Fatalf("%d clusters, want the two releases in one", len(clusters))
	}
	rank, err := Winners(c)
	if err != nil {
		t.Fatal(err)
	}
	line := offline.NewLine(clusters[0], docs, sigs, rank, remove)
	m := line.Members[1]
	w, l := clusters[0].Members[0].Index, clusters[0].Members[1].Index
	fast := remove.Decide(sigs[w], sigs[l])
	if !fast.Verify.Cut {
		t.Fatalf("the remove decision %s; the test needs a pair it rejects by a bound", fast.Explain())
	}
	exact := remove
	exact.Exact = true
	want := exact.Decide(sigs[w], sigs[l])
	if m.Removal == nil || m.Removable || m.RemoveProbability == nil || *m.RemoveProbability != want.Probability || want.Probability >= fast.Probability {
		t.Errorf("member removal %+v, want not removable at the whole alignment's probability %v (the bound is %v)", m.Removal, want.Probability, fast.Probability)
	}
	if strings.Contains(m.RemoveExplain, ") <= ") {
		t.Errorf("remove_explain %q reads as a bound", m.RemoveExplain)
	}
}

// TestCalibratedLinks: a remove calibration refusing pairs linking
// elsewhere reaches the model, and makes the signer read every page's
// links; without it the signer reads none.
func TestCalibratedLinks(t *testing.T) {
	var c config.Config
	if Signer(c).Canon.Links {
		t.Error("default configuration: the signer reads links, want not")
	}
	c.Decision.Calibration.Remove = config.Calibrated{MinConfidence: 0.01, RefuseLinksAbove: 0.3637}
	if !Signer(c).Canon.Links {
		t.Error("refuse_links_above set: the signer does not read links")
	}
	pm, err := Calibrated(similarity.PurposeRemove, c.Decision.Calibration.Remove, "decision.calibration.remove")
	if err != nil || pm.RefuseLinks != 0.3637 {
		t.Errorf("Calibrated: RefuseLinks %v, %v; want 0.3637", pm.RefuseLinks, err)
	}
}
