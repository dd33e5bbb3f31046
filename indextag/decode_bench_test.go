package indextag

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/winnow-search/winnow/corpus"
	"github.com/winnow-search/winnow/corpus/sample"
)

// BenchmarkDecodePage decodes one search answer of the sample's 53 pages
// (id, url and html in _source, as an index of `winnow index` stores
// them) into the documents signed: "stream" as scans do (decode.go),
// "encoding/json" as they did before, the answer into raw fields and each
// stored string decoded again. The bytes are the answer's.
func BenchmarkDecodePage(b *testing.B) {
	var hits []map[string]any
	for d, err := range sample.Docs() {
		if err != nil {
			b.Fatal(err)
		}
		hits = append(hits, map[string]any{"_index": "bench", "_id": d.ID, "_seq_no": len(hits), "_primary_term": 1,
			"_source": map[string]string{"id": d.ID, "url": d.URL, "html": string(d.Body)}, "sort": []int{len(hits)}})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as the engines return a source sent so
	if err := enc.Encode(map[string]any{"pit_id": "p", "took": 1, "hits": map[string]any{"hits": hits}}); err != nil {
		b.Fatal(err)
	}
	body := buf.Bytes()
	f := corpus.DefaultJSONLFields
	check := func(b *testing.B, n int, err error) {
		if err != nil || n != len(hits) {
			b.Fatalf("%d hits, %v", n, err)
		}
	}
	b.Run("stream", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var a searchAnswer
			err := decodeStream(bytes.NewReader(body), &a)
			for _, h := range a.Hits {
				if _, derr := f.Object(h.Source, 0); derr != nil {
					err = derr
				}
			}
			check(b, len(a.Hits), err)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var a struct {
				Hits struct {
					Hits []struct {
						ID     string                     `json:"_id"`
						Source map[string]json.RawMessage `json:"_source"`
						Sort   []any                      `json:"sort"`
					} `json:"hits"`
				} `json:"hits"`
			}
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber()
			err := dec.Decode(&a)
			for _, h := range a.Hits.Hits {
				if _, derr := f.Object(rawFields(h.Source), 0); derr != nil {
					err = derr
				}
			}
			check(b, len(a.Hits.Hits), err)
		}
	})
}
