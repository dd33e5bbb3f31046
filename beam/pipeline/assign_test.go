package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/options"
)

// signedPage is a page of the sample with its signature's encoding.
type signedPage struct {
	id  string
	sig []byte
}

// assignFixture is the sample as a new crawl against the groups of its
// LLVM 13 and 14 pages, held by a cluster service.
type assignFixture struct {
	all []signedPage
	// groups is the groups file, the service's winners; part its
	// partitioner.
	groups string
	part   []byte
	// want is the group the service puts each page in when it ingests
	// it alone under a new URL; absent for a new group.
	want map[string]string
}

func newAssignFixture(t *testing.T) assignFixture {
	t.Helper()
	var fx assignFixture
	var old []client.Page
	for d, err := range sample.Docs() {
		if err != nil {
			t.Fatal(err)
		}
		r, err := options.Signer(config.Default()).Sign(d.Body, d.ContentType)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := r.Sig.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		fx.all = append(fx.all, signedPage{d.ID, enc})
		if strings.Contains(d.ID, "/13/") || strings.Contains(d.ID, "/14/") {
			old = append(old, client.Page{URL: "https://old.example/" + d.ID, Signature: enc})
		}
	}
	fx.groups = filepath.Join(t.TempDir(), "groups.jsonl")
	var gb bytes.Buffer
	st := cluster.NewMemStore()
	svc2, err := cluster.New(st, cluster.Options{SampleSize: 10, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc2.Ingest(old); err != nil {
		t.Fatal(err)
	}
	if err := cluster.ExportWinners(st, &gb); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fx.groups, gb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if fx.part, err = SamplePartitioner(fx.groups); err != nil {
		t.Fatal(err)
	}

	// What the service does with each page of the new crawl, alone.
	fx.want = map[string]string{}
	for _, p := range fx.all {
		res, err := svc2.Ingest([]client.Page{{URL: "https://new.example/" + p.id, Signature: p.sig}})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Status != client.StatusNew {
			fx.want[p.id] = res[0].Group
		}
		// Undo, so each page meets the old groups only.
		if _, err := svc2.Ingest([]client.Page{{URL: "https://new.example/" + p.id, Deleted: true}}); err != nil {
			t.Fatal(err)
		}
	}
	return fx
}

// run runs the pipeline on the sample on runner and returns its output.
func (fx assignFixture) run(t *testing.T, runner string) []byte {
	t.Helper()
	shards, err := Split(nil, SplitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "assign.jsonl")
	p, s := beam.NewPipelineWithRoot()
	err = Assign(s, AssignOptions{
		Options: Options{Config: config.Default(), Shards: shards, Output: out},
		Groups:  fx.groups, Partitioner: fx.part,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), runner, p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAssign: a cluster service holds the groups of the sample's LLVM 13
// and 14 pages; their winners, exported, and the whole sample as a new
// crawl go through the tier-2 pipeline. Every page must join the existing
// group that the service puts it in when it ingests the page under a new
// URL, and the pages the service puts in new groups get none.
func TestAssign(t *testing.T) {
	fx := newAssignFixture(t)
	// check runs the pipeline on runner, checks its output and returns it.
	check := func(t *testing.T, runner string) []byte {
		t.Helper()
		b := fx.run(t, runner)
		got := map[string]Assignment{}
		for line := range strings.Lines(string(b)) {
			var a Assignment
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				t.Fatal(err)
			}
			got[a.ID] = a
		}
		if len(got) != len(fx.all) {
			t.Fatalf("%d lines, want one per page (%d)", len(got), len(fx.all))
		}
		joined, fresh := 0, 0
		for _, p := range fx.all {
			a := got[p.id]
			if a.Group != fx.want[p.id] {
				t.Errorf("%s: group %q, the service says %q", p.id, a.Group, fx.want[p.id])
			}
			if !bytes.Equal(a.Signature, p.sig) {
				t.Errorf("%s: signature not the page's", p.id)
			}
			switch {
			case a.Group != "":
				joined++
			case a.NewGroup != "":
				fresh++
			}
		}
		if joined == 0 || fresh == 0 {
			t.Errorf("%d pages joined existing groups, %d formed new ones; want some of each", joined, fresh)
		}
		return b
	}
	onPrism := check(t, "prism")
	// The same bytes on Flink and Spark.
	for _, kind := range engines {
		t.Run(kind, func(t *testing.T) {
			onJobServer(t, kind)
			sameLines(t, kind+" assign", check(t, kind), onPrism)
		})
	}
}

// TestAssignSigStore: with a signature store the winners' signatures, and
// those of the pages that join no group, are written to it once, and only
// their references go on (to the pages a winner meets, to the new groups'
// pairs); the output is the same bytes, against the sample's groups and
// against none (where only the pages' can be stored).
func TestAssignSigStore(t *testing.T) {
	fx := newAssignFixture(t)
	none := fx
	none.groups, none.part = filepath.Join(t.TempDir(), "none.jsonl"), nil
	if err := os.WriteFile(none.groups, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, fx := range map[string]assignFixture{"groups": fx, "no group": none} {
		t.Run(name, func(t *testing.T) {
			want := fx.run(t, "prism")
			dir := t.TempDir()
			beam.PipelineOptions.Set(SigStoreOption, dir)
			t.Cleanup(func() { beam.PipelineOptions.Set(SigStoreOption, "") })
			sameLines(t, "prism with stored signatures", fx.run(t, "prism"), want)
			files, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) == 0 || !strings.HasPrefix(files[0].Name(), "s-") {
				t.Fatalf("store holds %v, want signature files", files)
			}
		})
	}
}

// TestAssignNewGroups: with no existing group, every page of the sample
// is clustered among the new crawl's pages, and the new groups are the
// clusters `winnow dedup` finds on the sample (there each component is one
// cluster), each named by its first page's key. The pairs are decided in
// two rounds, so some pairs, their pages joined by the first round, are
// never decided.
func TestAssignNewGroups(t *testing.T) {
	dir := t.TempDir()
	groups := filepath.Join(dir, "groups.jsonl")
	if err := os.WriteFile(groups, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	shards, err := Split(nil, SplitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "assign.jsonl")
	p, s := beam.NewPipelineWithRoot()
	if err := Assign(s, AssignOptions{Options: Options{Config: config.Default(), Shards: shards, Output: out}, Groups: groups}); err != nil {
		t.Fatal(err)
	}
	st, err := Run(context.Background(), "prism", p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// The groups of two pages or more, each as its sorted IDs.
	got := map[string][]string{}
	for line := range strings.Lines(string(b)) {
		var a Assignment
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatal(err)
		}
		if a.Group != "" {
			t.Errorf("%s joined group %q, and there is none", a.ID, a.Group)
		}
		if a.NewGroup != "" {
			got[a.NewGroup] = append(got[a.NewGroup], a.ID)
		}
	}
	var gotParts []string
	for first, ids := range got {
		slices.Sort(ids)
		// A group is named by the key of its first page (one input:
		// the key is the page's ID), not by the pipeline's compact IDs.
		if ids[0] != first {
			t.Errorf("group %q: its first page is %q", first, ids[0])
		}
		gotParts = append(gotParts, strings.Join(ids, " "))
	}
	var wantParts []string
	for line := range strings.Lines(string(dedupOutput(t))) {
		var c struct {
			Members []struct{ ID string } `json:"members"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range c.Members {
			ids = append(ids, m.ID)
		}
		slices.Sort(ids)
		wantParts = append(wantParts, strings.Join(ids, " "))
	}
	slices.Sort(gotParts)
	slices.Sort(wantParts)
	if len(wantParts) == 0 || !slices.Equal(gotParts, wantParts) {
		t.Errorf("new groups:\n%s\nwinnow dedup's clusters:\n%s", strings.Join(gotParts, "\n"), strings.Join(wantParts, "\n"))
	}
	if st.PairsJoined == 0 || st.PairsDecided == 0 {
		t.Errorf("%d pairs decided, %d skipped as already joined: want both, the second round skipping pairs the first joined", st.PairsDecided, st.PairsJoined)
	}
}

// TestProbePairs: a page meets the winners of the partitions it probes
// only, at most window of each partition, the smallest keys; the others
// are counted as capped.
func TestProbePairs(t *testing.T) {
	page := func(key string, parts ...int) probe {
		p := probe{Bucket: "b", Key: key, Parts: make([]uint64, 2)}
		for _, q := range parts {
			p.Parts[q/64] |= 1 << (q % 64)
		}
		return p
	}
	run := []probe{
		{Bucket: "b", Key: "w0a", Winner: true, Part: 0},
		{Bucket: "b", Key: "w0b", Winner: true, Part: 0},
		{Bucket: "b", Key: "w0c", Winner: true, Part: 0},
		{Bucket: "b", Key: "w70", Winner: true, Part: 70},
		page("p1", 0), page("p2", 0, 70), page("p3", 70), page("p4", 5),
	}
	var got []string
	capped := probePairs(run, 2, func(g, p string) { got = append(got, g+"-"+p) })
	slices.Sort(got)
	want := []string{"w0a-p1", "w0a-p2", "w0b-p1", "w0b-p2", "w70-p2", "w70-p3"}
	if !slices.Equal(got, want) || capped != 2 {
		t.Errorf("pairs %v, capped %d; want %v, 2 (w0c left out for p1 and p2)", got, capped, want)
	}
}
