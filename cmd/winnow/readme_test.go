package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeBlock is one fenced shell block of README.md.
type readmeBlock struct {
	line   int    // of the opening fence
	marker string // "runnable", "runnable: serve" or "not run: why"
	body   string
}

var markerRE = regexp.MustCompile(`^<!-- (runnable(?:: serve)?|not run: .+) -->$`)

// readmeBlocks reads the fenced sh blocks of the manual with the marker
// on the line before each; a block with no marker is an error, so a
// command cannot enter the manual without being run or saying why not.
func readmeBlocks(t *testing.T, path string) []readmeBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []readmeBlock
	var prev string
	var cur *readmeBlock
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur != nil && strings.HasPrefix(line, "```"):
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.body += line + "\n"
		case line == "```sh":
			m := markerRE.FindStringSubmatch(strings.TrimSpace(prev))
			if m == nil {
				t.Errorf("README.md:%d: a sh block needs <!-- runnable -->, <!-- runnable: serve --> or <!-- not run: why --> on the line before", n)
				cur = &readmeBlock{line: n, marker: "not run: unmarked"}
				continue
			}
			cur = &readmeBlock{line: n, marker: m[1]}
		}
		prev = line
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// TestReadmeCommands runs every shell block of README.md marked runnable,
// so the manual cannot rot: with the winnow binary on PATH for `go run
// ./cmd/winnow`, in a scratch folder that sees the repository's files, and
// for blocks marked "runnable: serve" with `winnow serve` running on its
// embedded demo (its address put where the manual says 127.0.0.1:8080).
// A block passes when bash runs it to exit status 0 under `set -e`.
func TestReadmeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds winnow and runs the manual's commands")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeBlocks(t, filepath.Join(root, "README.md"))
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "winnow"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var serveAddr string
	ran := 0
	for _, b := range blocks {
		if !strings.HasPrefix(b.marker, "runnable") {
			continue
		}
		script := strings.ReplaceAll(b.body, "go run ./cmd/winnow", "winnow")
		// A block that builds the binary gets the one built above.
		script = strings.ReplaceAll(script, "go build -o winnow ./cmd/winnow", "ln -sf "+filepath.Join(bin, "winnow")+" winnow")
		if b.marker == "runnable: serve" {
			if serveAddr == "" {
				serveAddr = freeAddr(t)
				startServe(t, serveAddr, "-set", "serve.demo_listen="+freeAddr(t))
			}
			script = strings.ReplaceAll(script, "127.0.0.1:8080", serveAddr)
		}
		// A scratch checkout (dir) with the repository's files it reads,
		// and the labelled sets beside it as ../shared, as in the
		// project's own layout.
		scratch := t.TempDir()
		dir := filepath.Join(scratch, "repo")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"corpus", "canon", "winnow.example.yaml"} {
			if err := os.Symlink(filepath.Join(root, name), filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		if strings.Contains(script, "../shared/") {
			shared := filepath.Join(root, "..", "shared")
			if _, err := os.Stat(shared); err != nil {
				t.Logf("README.md:%d: skipped: it reads ../shared (the labelled sets), not beside this checkout", b.line)
				continue
			}
			if err := os.Symlink(shared, filepath.Join(scratch, "shared")); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-c", "set -e\n"+script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "WINNOW_DEDUP_PROGRESS=never")
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("README.md:%d: %v\n%s\noutput:\n%s", b.line, err, script, out)
			continue
		}
		ran++
	}
	if ran == 0 {
		t.Fatal("no runnable block in README.md")
	}
}
