// Package enginetest gives tests a Beam job server of the project's
// scripts/engine (flink or spark).
package enginetest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Endpoint returns the address of the job server of kind (scripts/engine:
// flink or spark), started for the test unless one runs (one the test
// started is stopped at its end). Without Java or Maven the test is
// skipped, unless CI=true, where it fails.
//
// The test has the job server to itself until it ends: go test runs the
// packages of a module in parallel processes, and Beam's Spark job server
// runs its pipelines in one SparkContext a JVM, so a second pipeline
// submitted while one runs fails ("Only one SparkContext should be running
// in this JVM").
func Endpoint(t *testing.T, kind string) string {
	t.Helper()
	holdJobServer(t, kind)
	engine := script()
	if out, err := exec.Command(engine, "url", kind).Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s job server: %s is not installed", kind, tool)
			}
			t.Skipf("%s job server: %s is not installed (scripts/engine start %s needs Java and Maven)", kind, tool, kind)
		}
	}
	var stderr bytes.Buffer
	start := exec.Command(engine, "start", kind)
	start.Stderr = &stderr
	out, err := start.Output()
	if err != nil {
		t.Fatalf("scripts/engine start %s: %v\n%s", kind, err, stderr.String())
	}
	t.Cleanup(func() { exec.Command(engine, "stop", kind).Run() })
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// script is the path of the project's scripts/engine.
func script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "../../../scripts/engine")
}

// LogTail returns the last lines of the job server of kind's log (at most
// about 8 KB), for a test's failure message: a job the runner failed says
// why there and nowhere else.
func LogTail(kind string) string {
	path, err := exec.Command(script(), "log", kind).Output()
	if err != nil {
		return fmt.Sprintf("(no %s log: %v)", kind, err)
	}
	f, err := os.Open(strings.TrimSpace(string(path)))
	if err != nil {
		return fmt.Sprintf("(no %s log: %v)", kind, err)
	}
	defer f.Close()
	const most = 8 << 10
	if st, err := f.Stat(); err == nil && st.Size() > most {
		f.Seek(st.Size()-most, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}
