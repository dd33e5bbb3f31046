package options

import (
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/similarity"
)

// TestDecisionSettings: one meaning for decision.method, decision.threshold
// and decision.min_confidence.*, whether from the YAML file or -set; a
// setting that cannot apply is an error naming its field.
func TestDecisionSettings(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		sets    []string
		group   similarity.Test // the group decision's verification
		remove  similarity.Test
		wantErr string // the field the error names
	}{
		{name: "defaults", group: similarity.Test{Method: similarity.MethodModel, Threshold: 0.68}, remove: similarity.Test{Method: similarity.MethodModel, Threshold: 0.9}},
		{name: "min_confidence by flag", sets: []string{"decision.min_confidence.group=0.5", "decision.min_confidence.remove=0.95"},
			group: similarity.Test{Method: similarity.MethodModel, Threshold: 0.5}, remove: similarity.Test{Method: similarity.MethodModel, Threshold: 0.95}},
		{name: "min_confidence in file", yaml: "decision:\n  min_confidence:\n    remove: 0.8\n",
			group: similarity.Test{Method: similarity.MethodModel, Threshold: 0.68}, remove: similarity.Test{Method: similarity.MethodModel, Threshold: 0.8}},
		{name: "lcs with threshold", sets: []string{"decision.method=lcs", "decision.threshold=0.8"},
			group: similarity.Test{Method: similarity.MethodLCS, Threshold: 0.8}, remove: similarity.Test{Method: similarity.MethodLCS, Threshold: 0.8}},
		{name: "jaccard in file, paper threshold", yaml: "decision:\n  method: jaccard\n",
			group: similarity.Test{Method: similarity.MethodNone}, remove: similarity.Test{Method: similarity.MethodNone}},
		{name: "threshold under default", sets: []string{"decision.threshold=0.8"}, wantErr: "decision.threshold"},
		{name: "threshold under default in file", yaml: "decision:\n  threshold: 0.6\n", wantErr: "decision.threshold"},
		{name: "confidence under simhash", sets: []string{"decision.method=simhash", "decision.min_confidence.remove=0.9"}, wantErr: "decision.min_confidence.remove"},
		{name: "ratio threshold above 1", sets: []string{"decision.method=jaccard", "decision.threshold=5"}, wantErr: "decision.threshold"},
		{name: "simhash threshold not integer", sets: []string{"decision.method=simhash", "decision.threshold=3.5"}, wantErr: "decision.threshold"},
		{name: "confidence of 1", sets: []string{"decision.min_confidence.group=1"}, wantErr: "decision.min_confidence.group"},
		{name: "unknown method", sets: []string{"decision.method=cosine"}, wantErr: "decision.method"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.yaml != "" {
				path = t.TempDir() + "/winnow.yaml"
				writeFile(t, path, tt.yaml)
			}
			c, err := config.Load(path, nil, tt.sets)
			var g, r similarity.Decision
			if err == nil {
				g, r, err = Decisions(c)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.Purpose != similarity.PurposeGroup || r.Purpose != similarity.PurposeRemove {
				t.Errorf("purposes %v, %v; want group, remove", g.Purpose, r.Purpose)
			}
			if got := verifyOf(g); got != tt.group {
				t.Errorf("group verification %+v, want %+v", got, tt.group)
			}
			if got := verifyOf(r); got != tt.remove {
				t.Errorf("remove verification %+v, want %+v", got, tt.remove)
			}
		})
	}
}

// verifyOf is a decision's verification as Decide applies it.
func verifyOf(d similarity.Decision) similarity.Test {
	if d.IsModel() {
		return similarity.Test{Method: similarity.MethodModel, Threshold: d.MinConfidence()}
	}
	return d.Verify
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestExampleFileDefaults: the example configuration writes out the
// decisions' default confidences, so a deployment that starts from it
// gets the shipped ones, not those of an earlier round.
func TestExampleFileDefaults(t *testing.T) {
	c, err := config.Load("../winnow.example.yaml", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		p    similarity.Purpose
		file float64
	}{
		{similarity.PurposeGroup, c.Decision.MinConfidence.Group},
		{similarity.PurposeRemove, c.Decision.MinConfidence.Remove},
	} {
		if want := similarity.DefaultModel(tt.p).MinConfidence; tt.file != want {
			t.Errorf("winnow.example.yaml: decision.min_confidence.%v = %v, want the default %v", tt.p, tt.file, want)
		}
	}
}

// TestEngineKindChecked: config names no engine kind; the kind, and what
// it asks of the other fields, are checked by the proxy's engine
// registry where the configuration becomes the proxy's options, the
// error naming the engine's field.
func TestEngineKindChecked(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"serve:\n  engines:\n    - {name: es, kind: elastic, url: 'http://127.0.0.1:9200'}\n", "serve.engines[0] (es): engine: unknown kind \"elastic\" (one of elasticsearch, opensearch, solr"},
		{"serve:\n  engines:\n    - {name: j, kind: json, url: 'http://127.0.0.1:9200'}\n", "serve.engines[0] (j): engine: json: Fields.Results is required"},
		{"serve:\n  engines:\n    - {name: s, kind: solr, url: 'http://127.0.0.1:8983/solr', solr_handlers: [update]}\n", "serve.engines[0] (s): engine: solr handler \"update\""},
		{"serve:\n  engines:\n    - {name: s, kind: solr, url: 'http://127.0.0.1:8983/solr', solr_handlers: [select, search]}\n", ""},
		{"serve:\n  engines:\n    - {name: s, kind: solr, url: 'http://127.0.0.1:8983/solr', path: /solr/docs/select}\n", "ends in /solr and path \"/solr/docs/select\" starts with it"},
	} {
		path := t.TempDir() + "/winnow.yaml"
		writeFile(t, path, tc.yaml)
		c, err := config.Load(path, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.yaml, err)
		}
		_, err = Proxy(c, slog.New(slog.DiscardHandler))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
