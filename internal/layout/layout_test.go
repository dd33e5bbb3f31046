package layout

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/winnow-search/winnow"

// allowed lists, for each package, the winnow packages it may import.
// Test-only imports are not checked. A package missing here fails the
// test, so a new package must take its place in the table.
var allowed = map[string][]string{
	"canon":                 {"internal/bytespan"},
	"similarity":            {"internal/parallel", "internal/hashmix"},
	"config":                nil,
	"warc":                  nil,
	"corpus":                {"warc", "canon", "internal/bytespan"},
	"corpus/sample":         {"corpus"},
	"fetch":                 {"canon"},
	"page":                  {"canon", "similarity"},
	"resultlist":            {"similarity"},
	"eval":                  {"page", "canon", "similarity", "cluster", "cluster/client", "internal/parallel", "resultlist"},
	"cluster":               {"fetch", "canon", "similarity", "page", "cluster/client", "cluster/partition", "internal/hashmix"},
	"cluster/client":        nil,
	"cluster/partition":     {"similarity"},
	"cluster/report":        {"similarity", "canon", "cluster/partition"},
	"proxy":                 {"cluster/client", "fetch", "canon", "similarity", "page", "proxy/engine", "proxy/ui", "resultlist"},
	"proxy/engine":          {"resultlist"},
	"proxy/ui":              nil,
	"internal/demo":         {"canon", "corpus", "corpus/sample"},
	"internal/layout":       nil,
	"internal/loadgen":      nil,
	"internal/crawltest":    nil,
	"internal/renumber":     nil,
	"internal/parallel":     nil,
	"internal/hashmix":      nil,
	"internal/bytespan":     nil,
	"internal/chromiumtest": nil,
	"internal/toxiproxy":    nil,
	"internal/bench":        {"proxy", "proxy/engine", "internal/demo", "internal/loadgen", "internal/realengine", "corpus/sample"},
	"offline":               {"page", "canon", "similarity", "cluster", "cluster/client", "corpus", "corpus/sample", "resultlist"},
	"options":               {"config", "canon", "cluster", "cluster/client", "corpus", "corpus/sample", "fetch", "indextag", "offline", "page", "proxy", "proxy/engine", "similarity"},
	"indextag":              {"corpus", "fetch", "offline", "page", "similarity", "internal/parallel"},
	"cmd/winnow":            {"*"},

	// Test helpers that start real engines.
	"internal/realengine": {"canon", "corpus/sample"},
}

type pkg struct {
	path, doc string
	imports   []string
}

func list(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Doc}}\t{{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) < 3 {
			t.Fatalf("go list line %q", line)
		}
		p := pkg{path: strings.TrimPrefix(strings.TrimPrefix(f[0], module), "/"), doc: f[1]}
		for _, imp := range strings.Fields(f[2]) {
			if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
				p.imports = append(p.imports, rest)
			}
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestImports(t *testing.T) {
	for _, p := range list(t) {
		may, ok := allowed[p.path]
		if !ok {
			t.Errorf("package %s is not in the layout table: add it with the packages it may import", p.path)
			continue
		}
		for _, imp := range p.imports {
			okImp := false
			for _, m := range may {
				okImp = okImp || m == "*" || m == imp
			}
			if !okImp {
				t.Errorf("package %s imports %s, which the layout does not allow (allowed: %v)", p.path, imp, may)
			}
		}
	}
}

func TestPackageComments(t *testing.T) {
	for _, p := range list(t) {
		if p.doc == "" {
			t.Errorf("package %s has no package comment", p.path)
		}
	}
}
