package pipeline

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/winnow-search/winnow/similarity"
)

// TestSigStore: with a signature store the sample gives the bytes
// `winnow dedup` writes, the signatures having been written once to the
// store's files; a reference reads back its signature, a signature reads
// as itself, and a reference to a file that is gone is an error.
func TestSigStore(t *testing.T) {
	if similarity.SignatureVersion == sigRefMagic[0] {
		t.Fatalf("a signature (version %d) would read as a reference", similarity.SignatureVersion)
	}
	want := dedupOutput(t)
	dir := t.TempDir()
	beam.PipelineOptions.Set(SigStoreOption, dir)
	t.Cleanup(func() { beam.PipelineOptions.Set(SigStoreOption, "") })
	got, st := beamRun{runner: "prism"}.run(t)
	sameLines(t, "prism with stored signatures", got, want)
	if st.Docs != 53 || st.Clusters != 12 {
		t.Errorf("stats %+v, want 53 documents in 12 clusters", st)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 || !strings.HasPrefix(files[0].Name(), "s-") {
		t.Fatalf("store holds %v, want signature files", files)
	}

	sigs := [][]byte{{similarity.SignatureVersion, 1, 2, 3}, {similarity.SignatureVersion}, bytes.Repeat([]byte{7}, 5000)}
	var w sigWriter
	var refs [][]byte
	for _, s := range sigs {
		r, err := w.add(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, r)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	var r sigReader
	defer r.close()
	for i, ref := range refs {
		if len(ref) > 100 {
			t.Errorf("reference %d is %d bytes", i, len(ref))
		}
		if b, err := r.sig(ref); err != nil || !bytes.Equal(b, sigs[i]) {
			t.Errorf("signature %d read back as %q, %v; want %q", i, b, err, sigs[i])
		}
		if b, err := r.sig(sigs[i]); err != nil || !bytes.Equal(b, sigs[i]) {
			t.Errorf("signature %d (inline) read as %q, %v", i, b, err)
		}
	}
	r.close()
	path, _, _, err := parseRefMagic(sigRefMagic, refs[0])
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	if _, err := r.sig(refs[0]); err == nil {
		t.Error("a reference to a removed file read without error")
	}
}
