package realengine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Kinds are the engine kinds the tests that run on every kind run on;
// [Start] also knows [SolrCloud].
var Kinds = []string{"opensearch", "elasticsearch", "solr"}

// AllKinds is [Kinds], and [SolrCloud] too when WINNOW_REALENGINE_SOLRCLOUD
// is "1": a test that runs on every kind of AllKinds then runs on a
// collection of two shards of two replicas as well (by hand; CI leaves it
// out for the time its collections take).
func AllKinds() []string {
	if os.Getenv("WINNOW_REALENGINE_SOLRCLOUD") == "1" {
		return append(slices.Clone(Kinds), SolrCloud)
	}
	return Kinds
}

// startWait bounds one `scripts/engine start`: a cold start downloads the
// distribution (56 to 200 MB) before the engine starts.
const startWait = 15 * time.Minute

var (
	mu      sync.Mutex
	started = map[string]*startResult{} // by kind; guarded by mu
)

type startResult struct {
	once sync.Once
	url  string
	err  error
}

// Start returns the base address of a running engine of kind
// ("opensearch", "elasticsearch" or "solr"), starting it with
// scripts/engine the first time a test binary asks. When it cannot be
// started, Start skips the test (fails it when CI is "true") with the
// reason. Safe for concurrent use.
func Start(t testing.TB, kind string) string {
	t.Helper()
	if !known(kind) {
		t.Fatalf("realengine: unknown kind %q (known: %s)", kind, strings.Join(Kinds, ", "))
	}
	mu.Lock()
	r := started[kind]
	if r == nil {
		r = &startResult{}
		started[kind] = r
	}
	mu.Unlock()
	r.once.Do(func() { r.url, r.err = start(kind) })
	if r.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("realengine: %v", r.err)
		}
		t.Skipf("realengine: %v (the test needs a real %s; under CI=true it fails)", r.err, kind)
	}
	return r.url
}

func known(kind string) bool {
	for _, k := range append(Kinds, SolrCloud) {
		if k == kind {
			return true
		}
	}
	return false
}

// start returns WINNOW_<KIND>_URL or runs scripts/engine start kind.
func start(kind string) (string, error) {
	if u := os.Getenv("WINNOW_" + strings.ToUpper(kind) + "_URL"); u != "" {
		return strings.TrimSuffix(u, "/"), nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "engine"), "start", kind)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("scripts/engine start %s: %v: %s", kind, err, tail(stderr.String(), 15))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	u := strings.TrimSpace(lines[len(lines)-1])
	if !strings.HasPrefix(u, "http://") {
		return "", fmt.Errorf("scripts/engine start %s printed %q, not an address", kind, u)
	}
	return u, nil
}

// repoRoot is the nearest directory above the working directory that
// holds scripts/engine and go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if fileExists(filepath.Join(dir, "scripts", "engine")) && fileExists(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no scripts/engine in any directory above the working directory")
		}
		dir = up
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
