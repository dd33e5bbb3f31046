package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/internal/renumber"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// TestSignedAgainWithSeqMergesGroups: a real shop page and its copy with
// every number shifted (prices, counts, dates) are near-duplicates on
// their word sequences (every number one token) but not on min-hashes
// alone, at the confidence 0.9 this service is configured with. Ingested as version-3 signatures, which are
// read without their sequence, they get two groups; signed again under
// the current version, the page that now brings a sequence looks for the
// groups it matches and the two groups merge, as a fresh service groups
// them, instead of staying apart until a third page bridges them (tier 1
// alone: the test fails without the lookup).
func TestSignedAgainWithSeqMergesGroups(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "canon", "testdata", "pages", "de.happycoffee.org.sidamo.html"))
	if err != nil {
		t.Fatal(err)
	}
	repriced := renumber.ShiftDigits(body)
	signer := page.Signer{Canon: canon.Options{Content: canon.ContentMain}}
	var sigs []*similarity.Signature
	var encs [][]byte
	for _, b := range [][]byte{body, repriced} {
		r, err := signer.Sign(b, "text/html")
		if err != nil {
			t.Fatal(err)
		}
		enc, err := r.Sig.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		sigs, encs = append(sigs, &r.Sig), append(encs, enc)
	}
	// The fixture's premise at the confidence this service asks (0.9): a
	// duplicate with the sequence, not without.
	group := similarity.Decision{Purpose: similarity.PurposeGroup, Verify: similarity.Test{Method: similarity.MethodModel, Threshold: 0.9}}
	noSeq := func(s *similarity.Signature) *similarity.Signature { c := *s; c.Seq = nil; return &c }
	if v := group.Decide(sigs[0], sigs[1]); !v.Duplicate {
		t.Fatalf("with sequences: %s; want a duplicate", v.Explain())
	}
	if v := group.Decide(noSeq(sigs[0]), noSeq(sigs[1])); v.Duplicate {
		t.Fatalf("without sequences: %s; want no duplicate", v.Explain())
	}

	urls := []string{"https://shop.example/trixie", "https://shop.example/trixie?ref=feed"}
	old := func(enc []byte) []byte { b := slices.Clone(enc); b[0] = 3; return b }
	s := newTestService(t, Options{KeepSeq: true, Decision: group})
	mustIngest(t, s, client.Page{URL: urls[0], Signature: old(encs[0]), Popularity: 2},
		client.Page{URL: urls[1], Signature: old(encs[1]), Popularity: 1})
	if g := groupsOf(t, s, urls); len(g) != 2 {
		t.Fatalf("version-3 signatures: groups %q, want two (decided without sequences)", g)
	}
	// Signed again, one page a batch, as a re-crawl delivers them: the
	// first finds no group with a sequence to match yet; the second
	// matches the first's group and the merge makes the first its winner.
	for i, want := range []string{client.StatusStayed, client.StatusWinnerChanged} {
		res := mustIngest(t, s, client.Page{URL: urls[i], Signature: encs[i], Popularity: float64(2 - i)})
		if res[0].Status != want {
			t.Errorf("%s signed again: %s, want %s", urls[i], res[0].Status, want)
		}
	}
	if g := groupsOf(t, s, urls); len(g) != 1 {
		t.Errorf("signed again: groups %q, want one", g)
	}
	lr, err := s.Lookup(urls)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lr {
		if r.Winner != urls[0] {
			t.Errorf("lookup %+v: want winner %s (higher popularity)", r, urls[0])
		}
	}
}
