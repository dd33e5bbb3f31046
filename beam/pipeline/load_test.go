package pipeline

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/cluster"
)

// loopbackService starts a cluster service with a memory store on
// loopback and returns its URL and store.
func loopbackService(t *testing.T) (string, *cluster.MemStore) {
	t.Helper()
	st := cluster.NewMemStore()
	svc, err := cluster.New(st, cluster.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(srv.Close)
	return srv.URL, st
}

// groups lists a store's groups: ID, winner and members, one a line.
func groups(t *testing.T, st *cluster.MemStore) string {
	t.Helper()
	var lines []string
	err := st.Groups(func(id string, g cluster.GroupRecord) error {
		lines = append(lines, fmt.Sprintf("%s winner=%s members=%s", id, g.Winner, strings.Join(g.Members, " ")))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestDedupBackend: winnow dedup -cluster and the pipeline with Backend
// load the embedded sample into two cluster services on loopback; the
// services end up with the same groups (IDs, winners, members) and the
// same signer's fingerprint, and the pipeline counts every page loaded.
func TestDedupBackend(t *testing.T) {
	wantURL, wantStore := loopbackService(t)
	cmd := exec.Command(winnowBin, "-set", "dedup.progress=never", "dedup", "-o", t.TempDir()+"/d.jsonl", "-cluster", wantURL)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("winnow dedup -cluster: %v\n%s", err, msg)
	}
	want := groups(t, wantStore)
	if strings.Count(want, "\n") < 10 {
		t.Fatalf("winnow dedup loaded too few groups:\n%s", want)
	}
	wantMeta, err := wantStore.Meta()
	if err != nil || wantMeta.SignerFingerprint == "" {
		t.Fatalf("winnow dedup -cluster named no signer's fingerprint: %+v, %v", wantMeta, err)
	}
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprint("procs=", procs), func(t *testing.T) {
			gotURL, gotStore := loopbackService(t)
			withProcs(procs, func() {
				_, st := beamRun{runner: "prism", o: Options{Backend: gotURL, Packs: 7}}.run(t)
				var loaded int64
				for _, n := range st.Loaded {
					loaded += n
				}
				if loaded != st.Docs || len(st.NotLoaded) != 0 {
					t.Errorf("loaded %v, not loaded %v; want all %d documents loaded", st.Loaded, st.NotLoaded, st.Docs)
				}
			})
			if got := groups(t, gotStore); got != want {
				t.Errorf("groups differ from winnow dedup -cluster's:\n got:\n%s\nwant:\n%s", got, want)
			}
			if m, err := gotStore.Meta(); err != nil || m.SignerFingerprint != wantMeta.SignerFingerprint {
				t.Errorf("the pipeline's signer's fingerprint %q (%v), want winnow dedup -cluster's %s", m.SignerFingerprint, err, wantMeta.SignerFingerprint)
			}
		})
	}
}
