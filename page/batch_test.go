package page

import (
	"fmt"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/similarity"
)

// sampleSigs signs the embedded sample corpus: real LLVM documentation
// pages of six releases, many of them near-duplicates across releases.
func sampleSigs(t *testing.T) ([]*similarity.Signature, []string) {
	t.Helper()
	var s Signer
	var sigs []*similarity.Signature
	var keys []string
	for doc, err := range sample.Docs() {
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Sign(doc.Body, doc.ContentType)
		if err != nil {
			t.Fatalf("Sign(%s): %v", doc.ID, err)
		}
		sigs = append(sigs, &r.Sig)
		keys = append(keys, doc.ID)
	}
	return sigs, keys
}

// clusterText renders clusters with every member's verdict explained, to
// compare runs (Verdicts hold NaN scores, which == cannot compare).
func clusterText(cs []similarity.Cluster, keys []string) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%016x %s:", c.ID, keys[c.Winner])
		for _, m := range c.Members[1:] {
			fmt.Fprintf(&b, " %s [%s; %s; %+v]", keys[m.Index], m.Verdict, m.Verdict.Explain(), m.Verdict.Scores)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestBatchClusterWorkers checks that batch clustering of real pages gives
// the same clusters, verdicts and stage counts on one worker and on
// several.
func TestBatchClusterWorkers(t *testing.T) {
	sigs, keys := sampleSigs(t)
	for _, winnerVerified := range []bool{false, true} {
		var want similarity.BatchStats
		wantText := ""
		for _, workers := range []int{1, 2, 7} {
			var st similarity.BatchStats
			cs := similarity.BatchCluster(sigs, similarity.Decision{}, similarity.BatchOptions{
				Keys: keys, WinnerVerified: winnerVerified, Workers: workers, Stats: &st,
			})
			text := clusterText(cs, keys)
			st.CandidateTime, st.VerifyTime, st.ClusterTime = 0, 0, 0
			if workers == 1 {
				want, wantText = st, text
				t.Logf("winner-verified %v: %d documents, %d clusters, %+v", winnerVerified, len(sigs), len(cs), st)
				if len(cs) == 0 || st.Candidates == 0 || st.Length+st.Aligned == 0 {
					t.Fatalf("winner-verified %v: %d clusters, stats %+v: want clusters and pairs verified by LCS", winnerVerified, len(cs), st)
				}
				continue
			}
			if text != wantText {
				t.Errorf("winner-verified %v, %d workers: clusters differ from one worker:\n%s\nwant\n%s", winnerVerified, workers, text, wantText)
			}
			if st != want {
				t.Errorf("winner-verified %v, %d workers: stats %+v, one worker %+v", winnerVerified, workers, st, want)
			}
		}
	}
}
