package pipeline

import (
	"bytes"
	"os"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// TestSpill: with a spill directory the sample gives the bytes `winnow
// dedup` writes, the batches having crossed the runner as references to
// files in that directory; a reference reads back its batch, and an inline
// batch given to a reader of spilled ones is an error, not data.
func TestSpill(t *testing.T) {
	want := dedupOutput(t)
	dir := t.TempDir()
	beam.PipelineOptions.Set(SpillOption, dir)
	t.Cleanup(func() { beam.PipelineOptions.Set(SpillOption, "") })
	got, st := beamRun{runner: "prism"}.run(t)
	sameLines(t, "prism with spilled batches", got, want)
	if st.Docs != 53 || st.Clusters != 12 {
		t.Errorf("stats %+v, want 53 documents in 12 clusters", st)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no batch was spilled")
	}

	batches := [][]byte{[]byte("first batch"), {}, []byte("third")}
	refs, err := spill(dir, batches)
	if err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for i, r := range refs {
		b, err := unspill(dir, r, buf)
		if err != nil || !bytes.Equal(b, batches[i]) {
			t.Errorf("batch %d read back as %q, %v; want %q", i, b, err, batches[i])
		}
		buf = b
	}
	if _, err := unspill(dir, batches[0], nil); err == nil {
		t.Error("an inline batch read as a reference")
	}
}
