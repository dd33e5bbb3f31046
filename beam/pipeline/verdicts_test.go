package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/corpus"
	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/similarity"
)

// TestVerdictRoundTrip: every verdict the decisions give on the pairs of
// the embedded sample reads back as the verdict written: the same bytes
// again, and the same verdict, explanation and scores in an output line.
func TestVerdictRoundTrip(t *testing.T) {
	enc, err := encodeConfig(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	set, err := decodeSettings(enc)
	if err != nil {
		t.Fatal(err)
	}
	shards, err := Split(nil, SplitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var sigs []*similarity.Signature
	for _, sh := range shards {
		for d, err := range sh.Docs(set.cfg, corpus.Options{}) {
			if err != nil {
				t.Fatal(err)
			}
			res, err := set.signer.Sign(d.Body, d.ContentType)
			if err != nil {
				t.Fatal(err)
			}
			sigs = append(sigs, &res.Sig)
		}
	}
	if len(sigs) < 50 {
		t.Fatalf("%d signatures of the sample, want 50 or more", len(sigs))
	}
	line := func(v *similarity.Verdict) string {
		b, err := json.Marshal([]any{v.Duplicate, v.Relation.String(), v.String(), v.Explain(), offline.NewScores(&v.Scores), offline.Probability(v.Probability)})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	kept, lcs := 0, 0
	for _, d := range []similarity.Decision{set.decision, set.remove} {
		for i, a := range sigs {
			for _, b := range sigs[i:] {
				v := d.Decide(a, b)
				if keepVerdict(&v) {
					kept++
				}
				if v.Scores.HasLCS {
					lcs++
				}
				enc := appendVerdict(nil, &v)
				got, err := readVerdict(enc)
				if err != nil {
					t.Fatalf("readVerdict: %v", err)
				}
				if again := appendVerdict(nil, &got); !bytes.Equal(again, enc) {
					t.Fatalf("verdict %s encodes as %d bytes, its copy as %d other bytes", v.String(), len(enc), len(again))
				}
				if line(&got) != line(&v) {
					t.Fatalf("verdict read back\n%s\nwant\n%s", line(&got), line(&v))
				}
				if _, err := readVerdict(enc[:len(enc)-1]); !errors.Is(err, errBatch) {
					t.Fatalf("a verdict cut by a byte: %v, want errBatch", err)
				}
			}
		}
	}
	if kept == 0 || lcs == 0 {
		t.Errorf("%d verdicts kept, %d with an LCS: the sample should have both", kept, lcs)
	}
}

// TestPlainRefuses: a value that is not plain data is a bug, not an
// encoding.
func TestPlainRefuses(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("appendPlain encoded a map")
		}
	}()
	v := struct{ M map[string]int }{M: map[string]int{"a": 1}}
	appendPlain(nil, reflect.ValueOf(&v).Elem())
}
