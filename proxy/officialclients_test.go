package proxy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/internal/realengine"
)

// clientsIndex is the index (Solr core) the official clients' suite
// loads; not realIndex, so the two suites can run side by side.
const clientsIndex = "winnow_clients"

// clientsScriptWait bounds one client script (a few hundred requests).
const clientsScriptWait = 5 * time.Minute

// clientScript is one script of the clients/ directory run by one
// interpreter against winnow in front of one engine kind.
type clientScript struct {
	name  string   // the subtest's name: js or python
	argv  []string // the interpreter and the script, absolute
	kinds []string // the engine kinds it speaks to
}

// TestOfficialClients runs the official JavaScript, Python and Java
// clients (clients/js: @elastic/elasticsearch,
// @opensearch-project/opensearch; clients/python: elasticsearch-py,
// opensearch-py, pysolr; clients/java: elasticsearch-java,
// opensearch-java, SolrJ; installed by clients/install.sh) and a search
// frontend's server API (Searchkit's @searchkit/api,
// clients/js/searchkit.mjs) against winnow in front of real OpenSearch,
// Elasticsearch and Solr holding the demo's LLVM pages, in every mode.
// The scripts check plain search, from/size paging, scroll by the
// clients' own helpers, point in time + search_after, msearch, count,
// cursorMark, and that writes through the client are refused with the
// engine's error shape (Searchkit: its _msearch, facets and totals);
// each exits non-zero on any failed check. Here the index's document
// count and definition are checked unchanged after them. Skipped (failed
// under CI=true) when node, the packages, or Java, Maven and the
// artifacts clients/install.sh put in Maven's cache are missing.
func TestOfficialClients(t *testing.T) {
	scripts := officialClientScripts(t)
	d := startDemo(t, demo.Options{})
	docs, err := realengine.Sample(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range realengine.Kinds {
		t.Run(kind, func(t *testing.T) {
			base, proxyURL, count, unchanged := realGateway(t, kind, clientsIndex, docs, "select")
			env := append(os.Environ(),
				"WINNOW_KIND="+kind,
				"WINNOW_PROXY_URL="+proxyURL,
				"WINNOW_ENGINE_URL="+base,
				"WINNOW_INDEX="+clientsIndex,
				fmt.Sprintf("WINNOW_DOCS=%d", count))
			for _, s := range scripts {
				if !slices.Contains(s.kinds, kind) {
					continue
				}
				t.Run(s.name, func(t *testing.T) { runClientScript(t, s, env) })
			}
			unchanged("the clients")
		})
	}
}

// runClientScript runs s with env; its output is the test's log, and a
// non-zero exit fails the test.
func runClientScript(t *testing.T, s clientScript, env []string) {
	ctx, cancel := context.WithTimeout(context.Background(), clientsScriptWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.argv[0], s.argv[1:]...)
	cmd.Env = env
	cmd.Dir = filepath.Dir(s.argv[len(s.argv)-1])
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("%s: %v after %v:\n%s", strings.Join(s.argv, " "), err, time.Since(start).Round(time.Millisecond), out)
		return
	}
	t.Logf("%s (%v):\n%s", filepath.Base(s.argv[len(s.argv)-1]), time.Since(start).Round(time.Millisecond), out)
}

// officialClientScripts finds node with clients/js's packages and the
// Python virtual environment of clients/install.sh
// (WINNOW_CLIENTS_VENV, default the user cache's winnow/clients/venv).
// It skips the test with what is missing (fails it under CI=true).
func officialClientScripts(t *testing.T) []clientScript {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "clients"))
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node is not on PATH")
	}
	for _, p := range []string{"@elastic/elasticsearch", "@opensearch-project/opensearch", "@searchkit/api"} {
		if _, err := os.Stat(filepath.Join(root, "js", "node_modules", p, "package.json")); err != nil {
			missing = append(missing, p+" is not installed in clients/js")
		}
	}
	venv := os.Getenv("WINNOW_CLIENTS_VENV")
	if venv == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		venv = filepath.Join(cache, "winnow", "clients", "venv")
	}
	python := filepath.Join(venv, "bin", "python")
	if err := exec.Command(python, "-c", "import elasticsearch, opensearchpy, pysolr").Run(); err != nil {
		missing = append(missing, fmt.Sprintf("%s cannot import elasticsearch, opensearchpy and pysolr (%v)", python, err))
	}
	java, why := javaConformance(root)
	if why != "" {
		missing = append(missing, why)
	}
	if len(missing) > 0 {
		msg := strings.Join(missing, "; ") + ": run clients/install.sh"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg + " (under CI=true the test fails)")
	}
	return []clientScript{
		{name: "js", argv: []string{node, filepath.Join(root, "js", "conformance.mjs")}, kinds: []string{"elasticsearch", "opensearch"}},
		{name: "searchkit", argv: []string{node, filepath.Join(root, "js", "searchkit.mjs")}, kinds: []string{"elasticsearch", "opensearch"}},
		{name: "python", argv: []string{python, filepath.Join(root, "python", "conformance.py")}, kinds: realengine.Kinds},
		java,
	}
}
