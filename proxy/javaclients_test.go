package proxy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/winnow-search/winnow/internal/realengine"
)

// javaConformance builds clients/java (elasticsearch-java 8.19,
// opensearch-java 3, SolrJ 9.10: Http2SolrClient and HttpJdkSolrClient
// with each of SolrJ's response parsers) offline, from the artifacts
// clients/install.sh resolved into Maven's cache (mvn -o), and returns
// the command that runs it; or what is missing. TestOfficialClients runs
// it beside the JavaScript and Python scripts.
func javaConformance(root string) (clientScript, string) {
	java, err := exec.LookPath("java")
	if err != nil {
		return clientScript{}, "java is not on PATH"
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return clientScript{}, "mvn is not on PATH"
	}
	dir := filepath.Join(root, "java")
	ctx, cancel := context.WithTimeout(context.Background(), clientsScriptWait)
	defer cancel()
	cp := filepath.Join(dir, "target", "classpath")
	cmd := exec.CommandContext(ctx, mvn, "-q", "-B", "-o", "-Dstyle.color=never", "compile", "dependency:build-classpath", "-Dmdep.outputFile="+cp)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return clientScript{}, "mvn -o cannot build clients/java (" + err.Error() + "): " + strings.TrimSpace(string(out))
	}
	deps, err := os.ReadFile(cp)
	if err != nil {
		return clientScript{}, err.Error()
	}
	classes := filepath.Join(dir, "target", "classes") + string(os.PathListSeparator) + strings.TrimSpace(string(deps))
	return clientScript{name: "java", argv: []string{java, "-cp", classes, "winnow.Conformance"}, kinds: realengine.Kinds}, ""
}
