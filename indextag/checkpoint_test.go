package indextag

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/page"
)

// TestCheckpoint writes a checkpoint as a run does, cuts its last line as
// kill -9 may, and reads it back.
func TestCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ck")
	h := ckptHeader{Engine: "http://127.0.0.1:9200", Kind: KindElasticsearch, Index: "llvm", Fingerprint: "f1"}
	ck, err := openCheckpoint(path, h)
	if err != nil {
		t.Fatal(err)
	}
	if ck.resumed {
		t.Fatal("a new checkpoint resumes")
	}
	res, err := page.Signer{}.Sign([]byte(strings.Repeat("a page of words to sign here ", 20)), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	one := 0.5
	es := []entry{
		{ref: ref{id: "a", index: "docs-2026", routing: "r"}, url: "http://x/a", ver: version{SeqNo: 3, PrimaryTerm: 1}, sig: res.Sig},
		{ref: ref{id: "b"}, ver: version{Version: 1234567890123456789}, sig: res.Sig, tagged: true, old: Tags{Group: "g", Removable: true, Probability: &one}},
	}
	for i := range es {
		if err := ck.doc(&es[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := ck.readDone(2); err != nil {
		t.Fatal(err)
	}
	if err := ck.wrote([]string{"a"}); err != nil {
		t.Fatal(err)
	}
	ck.close()
	// A torn line, as a kill -9 mid-write leaves.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"k":"wrote","ids":["b"`)
	f.Close()

	ck, err = openCheckpoint(path, h)
	if err != nil {
		t.Fatal(err)
	}
	if !ck.resumed || len(ck.entries) != 2 || !ck.written["a"] || ck.written["b"] {
		t.Fatalf("resumed %v, %d entries, written %v; want resumed, 2, only a", ck.resumed, len(ck.entries), ck.written)
	}
	if a := ck.entries[0]; a.ref != es[0].ref {
		t.Errorf("entry a read back at %+v, want %+v", a.ref, es[0].ref)
	}
	b := ck.entries[1]
	if b.ver.Version != 1234567890123456789 || !b.tagged || !b.old.equal(es[1].old) || !sameSig(&b.sig, &res.Sig) {
		t.Errorf("entry b read back as %+v", b)
	}
	if err := ck.finish(); err != nil {
		t.Fatal(err)
	}
	ck.close()

	// Finished: the next run starts anew.
	if ck, err = openCheckpoint(path, h); err != nil || ck.resumed {
		t.Errorf("after done: resumed %v, %v", ck != nil && ck.resumed, err)
	}
	ck.close()

	// Another run's settings are refused.
	other := h
	other.Fingerprint = "f2"
	if _, err := openCheckpoint(path, other); err == nil || !strings.Contains(err.Error(), "another run") {
		t.Errorf("a checkpoint of other settings: %v", err)
	}
}
