package proxy

import (
	"context"
	"errors"
	"io/fs"
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
	cp := filepath.Join(dir, "target", "classpath")
	if !builtSince(cp, dir) {
		// Maven starting up offline costs about 10 s even with nothing
		// to compile: it runs only when a source or the pom changed
		// since clients/install.sh or the last run built it.
		ctx, cancel := context.WithTimeout(context.Background(), clientsScriptWait)
		defer cancel()
		cmd := exec.CommandContext(ctx, mvn, "-q", "-B", "-o", "-Dstyle.color=never", "compile", "dependency:build-classpath", "-Dmdep.outputFile="+cp)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return clientScript{}, "mvn -o cannot build clients/java (" + err.Error() + "): " + strings.TrimSpace(string(out))
		}
	}
	deps, err := os.ReadFile(cp)
	if err != nil {
		return clientScript{}, err.Error()
	}
	classes := filepath.Join(dir, "target", "classes") + string(os.PathListSeparator) + strings.TrimSpace(string(deps))
	return clientScript{name: "java", argv: []string{java, "-cp", classes, "winnow.Conformance"}, kinds: realengine.Kinds}, ""
}

// builtSince reports whether the build's classpath file cp was written
// after dir's pom.xml and every file under dir/src last changed.
func builtSince(cp, dir string) bool {
	built, err := os.Stat(cp)
	if err != nil {
		return false
	}
	pom, err := os.Stat(filepath.Join(dir, "pom.xml"))
	if err != nil || pom.ModTime().After(built.ModTime()) {
		return false
	}
	err = filepath.WalkDir(filepath.Join(dir, "src"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err == nil && fi.ModTime().After(built.ModTime()) {
			err = errors.New("changed since the build")
		}
		return err
	})
	return err == nil
}
