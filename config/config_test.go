package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaultValidates(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v, want nil", err)
	}
}

func TestLoadLayers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "winnow.yaml")
	yml := "canon:\n  content: all\ndecision:\n  method: simhash\n  threshold: 5\ndedup:\n  timeout: 90s\n"
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"WINNOW_DECISION_THRESHOLD=4", "WINNOW_DEDUP_WORKERS=3", "WINNOW_LLVM_DOCS=/tmp/llvm-docs"}
	c, err := Load(path, env, []string{"dedup.workers=2"})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.Canon.Content != "all" {
		t.Errorf("canon.content = %q, want all (file)", c.Canon.Content)
	}
	if c.Decision.Method != "simhash" {
		t.Errorf("decision.method = %q, want simhash (file)", c.Decision.Method)
	}
	if c.Decision.Threshold != 4 {
		t.Errorf("decision.threshold = %g, want 4 (environment over file)", c.Decision.Threshold)
	}
	if c.Dedup.Workers != 2 {
		t.Errorf("dedup.workers = %d, want 2 (flag over environment)", c.Dedup.Workers)
	}
	if time.Duration(c.Dedup.Timeout) != 90*time.Second {
		t.Errorf("dedup.timeout = %v, want 1m30s", c.Dedup.Timeout)
	}
	if c.Signature.BloomBits != 0 {
		t.Errorf("signature.bloom_bits = %d, want 0: the library's default, declared there only", c.Signature.BloomBits)
	}
}

func TestBackendStorePath(t *testing.T) {
	tests := []struct {
		sets      []string
		wantStore string
		wantPath  string
	}{
		{nil, "bolt", "winnow-groups.db"},
		{[]string{"cluster.store=pebble"}, "pebble", "winnow-groups.pebble"},
		{[]string{"cluster.store=pebble", "cluster.path=/var/lib/winnow"}, "pebble", "/var/lib/winnow"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.sets, ","), func(t *testing.T) {
			c, err := Load("", nil, tt.sets)
			if err != nil {
				t.Fatalf("Load(%q): %v", tt.sets, err)
			}
			if c.Cluster.Store != tt.wantStore || c.Cluster.Path != tt.wantPath {
				t.Errorf("Load(%q) cluster store, path = %q, %q, want %q, %q", tt.sets, c.Cluster.Store, c.Cluster.Path, tt.wantStore, tt.wantPath)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, yaml string
		sets       []string
		want       []string
	}{
		{"unknown key", "canon:\n  contnet: main\n", nil, []string{"contnet"}},
		{"bad duration", "dedup:\n  timeout: soon\n", nil, []string{"soon"}},
		{"every bad field named", "canon:\n  content: most\nsignature:\n  chunk_size: 300\ndedup:\n  progress: loud\n", nil,
			[]string{"canon.content", "signature.chunk_size", "dedup.progress"}},
		{"bad set", "", []string{"decision.threshold=high"}, []string{"decision.threshold", "high"}},
		{"unknown set key", "", []string{"decision.colour=red"}, []string{"decision.colour"}},
		{"set without value", "", []string{"decision.method"}, []string{"key=value"}},
		{"serve engines named", "serve:\n  listen: nowhere\n  mode: hide\n  engines:\n    - {name: es, kind: elastic, url: 'http://127.0.0.1:9200'}\n    - {name: es, kind: json, url: 'ftp://x'}\n  fetch:\n    allow: [10.0.0.0/33]\n", nil,
			[]string{"serve.listen", "serve.mode", "serve.engines[1].name", "serve.engines[1].url", "serve.fetch.allow[0]"}},
		{"serve engine without a kind", "serve:\n  engines:\n    - {name: es, url: 'http://127.0.0.1:9200'}\n", nil, []string{"serve.engines[0].kind"}},
		{"serve unknown engine key", "serve:\n  engines:\n    - {name: es, kind: solr, url: 'http://x', colour: red}\n", nil, []string{"colour"}},
		{"redis store without nodes", "cluster:\n  store: redis\n", nil, []string{"cluster.redis"}},
		{"unknown store", "cluster:\n  store: mongo\n", nil, []string{"cluster.store"}},
		{"lease renewal not below the TTL", "cluster:\n  lease_ttl: 10s\n  lease_renew: 10s\n  lease_wait: -1s\n", nil,
			[]string{"cluster.lease_renew", "cluster.lease_wait"}},
		{"lease TTL too short", "", []string{"cluster.lease_ttl=100us", "cluster.lease_renew=50us"}, []string{"cluster.lease_ttl"}},
		{"answer cache too small", "", []string{"serve.answer_cache_bytes=4096"}, []string{"serve.answer_cache_bytes", "-1 (off)"}},
		{"answers in flight too small", "", []string{"serve.answer_bytes_in_flight=4096"}, []string{"serve.answer_bytes_in_flight", "1 MiB"}},
		{"negative admit wait", "", []string{"serve.admit_wait=-1s"}, []string{"serve.admit_wait", "negative"}},
		{"cluster feed without cluster", "serve:\n  cluster_feed: true\n", nil, []string{"serve.cluster_feed"}},
		{"calibration under a paper method, with min_confidence too, weights unmatched", "decision:\n  method: lcs\n  min_confidence:\n    remove: 0.9\n  calibration:\n    remove:\n      min_confidence: 1.5\n      features: [lcs]\n      weights: [1, 2]\n", nil,
			[]string{"decision.calibration.remove.min_confidence", "needs decision.method default", "decision.min_confidence.remove both set", "decision.calibration.remove.weights"}},
		{"calibration without its confidence", "decision:\n  calibration:\n    group:\n      numbers_veto: true\n", nil, []string{"decision.calibration.group.min_confidence"}},
		{"links refused above a share out of range", "decision:\n  calibration:\n    remove:\n      min_confidence: 0.01\n      refuse_links_above: 1.5\n", nil, []string{"decision.calibration.remove.refuse_links_above"}},
		{"negative feedback log bound", "", []string{"serve.feedback_log_bytes=-1"}, []string{"serve.feedback_log_bytes"}},
		{"cursor key too short to seal", "", []string{"serve.cursor_key=short"}, []string{"serve.cursor_key", "fewer than 16"}},
		{"transparent names no engine", "serve:\n  transparent: solr\n  engines:\n    - {name: es, kind: elasticsearch, url: 'http://x'}\n", nil, []string{"serve.transparent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, nil, tt.sets)
			if err == nil {
				t.Fatalf("Load = nil error, want one naming %v", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load error %q does not name %q", err, w)
				}
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), nil, nil); err == nil {
		t.Error("Load(missing file) = nil error")
	}
}

func TestKeys(t *testing.T) {
	keys := strings.Join(Keys(), " ")
	for _, want := range []string{"canon.content", "signature.bloom_bits", "decision.method", "dedup.timeout"} {
		if !strings.Contains(keys, want) {
			t.Errorf("Keys() = %s, missing %s", keys, want)
		}
	}
}

func TestServeConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "winnow.yaml")
	yml := `serve:
  listen: 0.0.0.0:9000
  mode: remove
  budget: 250ms
  engines:
    - name: es
      kind: elasticsearch
      url: http://127.0.0.1:9200
      path: /docs/_search
      timeout: 800ms
      text_field: body
  fetch:
    allow: [127.0.0.0/8]
`
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, nil, []string{"serve.fetch.allow=10.1.0.0/16, 127.0.0.0/8", "serve.top_k=20", "serve.admit_wait=200ms", "serve.answer_bytes_in_flight=67108864"})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	v := c.Serve
	if v.Listen != "0.0.0.0:9000" || v.Mode != "remove" || time.Duration(v.Budget) != 250*time.Millisecond || v.TopK != 20 {
		t.Errorf("serve = %+v", v)
	}
	if len(v.Engines) != 1 || v.Engines[0].Path != "/docs/_search" || time.Duration(v.Engines[0].Timeout) != 800*time.Millisecond || v.Engines[0].TextField != "body" {
		t.Errorf("engines = %+v", v.Engines)
	}
	if time.Duration(v.AdmitWait) != 200*time.Millisecond || v.AnswerBytesInFlight != 64<<20 {
		t.Errorf("admit_wait %s, answer_bytes_in_flight %d; want the flags' 200ms and 64 MiB", v.AdmitWait, v.AnswerBytesInFlight)
	}
	if len(v.Fetch.Allow) != 2 || v.Fetch.Allow[0] != "10.1.0.0/16" {
		t.Errorf("fetch.allow = %q, want the flag's list", v.Fetch.Allow)
	}
	if v.CacheBytes != 0 || v.Factor != 0 {
		t.Errorf("proxy settings: cache %d, factor %d, want 0 (proxy.Options.WithDefaults fills them)", v.CacheBytes, v.Factor)
	}
}

// TestExampleFile keeps the example configuration in the repository valid.
func TestExampleFile(t *testing.T) {
	c, err := Load(filepath.Join("..", "winnow.example.yaml"), nil, nil)
	if err != nil {
		t.Fatalf("winnow.example.yaml: %v", err)
	}
	if len(c.Serve.Engines) != 2 || c.Serve.Engines[0].TextField != "body" {
		t.Errorf("engines = %+v", c.Serve.Engines)
	}
}

// TestDedupKeys sets the offline job's field names and winner rules from
// flags and refuses a negative popularity tolerance.
func TestDedupKeys(t *testing.T) {
	c, err := Load("", nil, []string{"dedup.fields.text=body, content", "dedup.winner.rules=https,shorter", "serve.demo_listen=127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(c.Dedup.Fields.Text) != "[body content]" || fmt.Sprint(c.Dedup.Winner.Rules) != "[https shorter]" || c.Serve.DemoListen != "127.0.0.1:0" {
		t.Errorf("dedup.fields.text %q, dedup.winner.rules %q, serve.demo_listen %q", c.Dedup.Fields.Text, c.Dedup.Winner.Rules, c.Serve.DemoListen)
	}
	if d := Default(); d.Serve.DemoListen != "127.0.0.1:8081" {
		t.Errorf("default serve.demo_listen = %q, want 127.0.0.1:8081", d.Serve.DemoListen)
	}
	_, err = Load("", nil, []string{"dedup.winner.popularity_tolerance=-1", "serve.demo_listen=nowhere"})
	for _, want := range []string{"dedup.winner.popularity_tolerance", "serve.demo_listen"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load with bad %s: %v", want, err)
		}
	}
}

// TestEnvironUnknownKey: a variable under a config section's prefix that
// is no key of it is an error naming it, as -set refuses an unknown key;
// a variable whose first part is no section is not config's.
func TestEnvironUnknownKey(t *testing.T) {
	// No key's variable looks like a platform's, so skipping those never
	// hides a real key's typo-free name.
	for _, key := range Keys() {
		if n := envName(key); platformVariable.MatchString(n) {
			t.Errorf("key %s: its variable %s looks like a platform's service or link variable", key, n)
		}
	}
	tests := []struct {
		name    string
		environ []string
		want    []string // named in the error; nil: no error
	}{
		{"a typo of a key", []string{"WINNOW_DECISION_MIN_CONFIDENCE=0.99"}, []string{"WINNOW_DECISION_MIN_CONFIDENCE", "WINNOW_DECISION_MIN_CONFIDENCE_GROUP", "WINNOW_DECISION_MIN_CONFIDENCE_REMOVE"}},
		{"under serve", []string{"WINNOW_SERVE_LISTN=:1"}, []string{"WINNOW_SERVE_LISTN", "serve"}},
		{"under a nested section", []string{"WINNOW_SERVE_FETCH_ALLOWED=10.0.0.0/8"}, []string{"WINNOW_SERVE_FETCH_ALLOWED"}},
		{"every one", []string{"WINNOW_DEDUP_WORKER=2", "WINNOW_CLUSTER_STOR=x"}, []string{"WINNOW_DEDUP_WORKER", "WINNOW_CLUSTER_STOR"}},
		{"empty value too", []string{"WINNOW_DECISION_METOD="}, []string{"WINNOW_DECISION_METOD"}},
		{"known keys", []string{"WINNOW_DECISION_MIN_CONFIDENCE_GROUP=0.8", "WINNOW_SERVE_FETCH_ALLOW=10.0.0.0/8"}, nil},
		{"not a section", []string{"WINNOW_LLVM_DOCS=/tmp/llvm-docs", "WINNOW_=1", "WINNOW=1", "HOME=/root", "WINNOW_DECISIONS=1"}, nil},
		// What Kubernetes sets in every pod for a Service named
		// winnow-backend (or winnow-serve), and Docker's legacy links for
		// a container linked as winnow-dedup: a platform's, not config's.
		{"kubernetes service links", []string{"WINNOW_BACKEND_SERVICE_HOST=10.96.0.12", "WINNOW_BACKEND_SERVICE_PORT=8081",
			"WINNOW_BACKEND_SERVICE_PORT_HTTP=8081", "WINNOW_BACKEND_PORT=tcp://10.96.0.12:8081", "WINNOW_BACKEND_PORT_8081_TCP=tcp://10.96.0.12:8081",
			"WINNOW_BACKEND_PORT_8081_TCP_PROTO=tcp", "WINNOW_BACKEND_PORT_8081_TCP_PORT=8081", "WINNOW_BACKEND_PORT_8081_TCP_ADDR=10.96.0.12",
			"WINNOW_SERVE_SERVICE_HOST=10.96.0.13", "WINNOW_SERVE_PORT=tcp://10.96.0.13:8080"}, nil},
		{"docker links", []string{"WINNOW_DEDUP_NAME=/web/winnow-dedup", "WINNOW_DEDUP_ENV_GOMAXPROCS=2", "WINNOW_DEDUP_PORT_9000_UDP_ADDR=172.17.0.2"}, nil},
		{"a typo beside service links", []string{"WINNOW_BACKEND_SERVICE_HOST=10.96.0.12", "WINNOW_BACKEND_STOR=x"}, []string{"WINNOW_BACKEND_STOR"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load("", tt.environ, nil)
			if tt.want == nil {
				if err != nil {
					t.Errorf("Load(environ %q) = %v, want no error", tt.environ, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Load(environ %q) = nil error, want one naming %q", tt.environ, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load(environ %q) = %v, want it to name %s", tt.environ, err, w)
				}
			}
		})
	}
}

// TestKeepSeq: cluster.keep_seq is true unless the file, the environment
// or a flag says false.
func TestKeepSeq(t *testing.T) {
	dir := t.TempDir()
	off := filepath.Join(dir, "off.yaml")
	if err := os.WriteFile(off, []byte("cluster:\n  keep_seq: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path string
		env, sets  []string
		want       bool
	}{
		{"default", "", nil, nil, true},
		{"file", off, nil, nil, false},
		{"environment", "", []string{"WINNOW_BACKEND_KEEP_SEQ=false"}, nil, false},
		{"flag", "", nil, []string{"cluster.keep_seq=false"}, false},
		{"flag over file", off, nil, []string{"cluster.keep_seq=true"}, true},
	} {
		c, err := Load(tt.path, tt.env, tt.sets)
		if err != nil {
			t.Fatalf("%s: Load: %v", tt.name, err)
		}
		if got := c.Cluster.Seq(); got != tt.want {
			t.Errorf("%s: cluster.keep_seq = %v, want %v", tt.name, got, tt.want)
		}
	}
	if _, err := Load("", nil, []string{"cluster.keep_seq=maybe"}); err == nil || !strings.Contains(err.Error(), "not a boolean") {
		t.Errorf("cluster.keep_seq=maybe: error %v, want not a boolean", err)
	}
}

// TestFormerSectionName: the cluster service's section under its former
// name, backend, is read from the file, -set and the environment alike,
// and each use is noted as deprecated; both names in one file are an
// error.
func TestFormerSectionName(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.yaml")
	if err := os.WriteFile(old, []byte("backend:\n  store: memory\n  parts: 16\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(old, []string{"WINNOW_BACKEND_DIMS=2"}, []string{"backend.max_batch=50"})
	if err != nil {
		t.Fatal(err)
	}
	if b := c.Cluster; b.Store != "memory" || b.Parts != 16 || b.Dims != 2 || b.MaxBatch != 50 {
		t.Errorf("cluster = %+v, want store memory, parts 16, dims 2, max_batch 50 from the former names", b)
	}
	notes := strings.Join(c.Deprecated, "; ")
	for _, want := range []string{"backend is now cluster", "WINNOW_BACKEND_DIMS is now WINNOW_CLUSTER_DIMS", "backend.* is now cluster.*"} {
		if !strings.Contains(notes, want) {
			t.Errorf("Deprecated = %q, want %q", notes, want)
		}
	}
	if c, err := Load("", nil, []string{"cluster.store=memory"}); err != nil || len(c.Deprecated) != 0 {
		t.Errorf("current names: %v, deprecated %q; want none", err, c.Deprecated)
	}
	both := filepath.Join(dir, "both.yaml")
	if err := os.WriteFile(both, []byte("backend:\n  store: memory\ncluster:\n  store: bolt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(both, nil, nil); err == nil || !strings.Contains(err.Error(), "keep cluster") {
		t.Errorf("both sections: %v, want an error saying to keep cluster", err)
	}
}

// TestYAMLErrorsNameTheKey: a value of the wrong form and an unknown key
// are errors naming the key by its dotted path, not yaml's Go type.
func TestYAMLErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"serve:\n  budget: fast\n", `serve.budget (line 2): time: invalid duration "fast"`},
		{"serve:\n  listn: 1\n", "serve.listn (line 2): field listn not found"},
		{"serve:\n  engines:\n    - {name: a, kind: solr, url: 'http://x', colour: red}\n", "serve.engines[0].colour (line 3)"},
	} {
		var c Config
		err := Parse([]byte(tc.yaml), &c)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "config.") {
			t.Errorf("Parse(%q) = %v, want it to say %q and no Go type", tc.yaml, err, tc.want)
		}
	}
}
