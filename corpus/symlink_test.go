package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestDirSymlinks: a folder whose pages are reached through symbolic
// links (to a file outside it, to a folder beside it, to its own parent,
// to nothing) and that holds a named pipe gives every page once per link
// and counts everything else it passes over.
func TestDirSymlinks(t *testing.T) {
	tmp := t.TempDir()
	page := []byte("<html><body><p>one page reached by a link</p></body></html>")
	outside := filepath.Join(tmp, "outside")
	root := filepath.Join(tmp, "root")
	for _, d := range []string{outside, filepath.Join(root, "real"), filepath.Join(root, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(outside, "far.html"), filepath.Join(root, "real", "a.html")} {
		if err := os.WriteFile(p, page, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"file.html": filepath.Join(outside, "far.html"), // a page outside the folder
		"sub/alias": "../real",                          // a folder walked already (real < sub)
		"sub/loop":  "..",                               // the folder itself
		"zz":        filepath.Join(outside),             // a folder outside, walked under zz/
		"dead.html": filepath.Join(tmp, "missing.html"),
		"sub/self":  "self", // a link to itself
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.html"), 0o600); err != nil {
		t.Fatal(err)
	}
	skips := map[string]int{}
	var ids []string
	o := Options{OnSkip: func(s Skip) { skips[s.Kind]++ }}
	for doc, err := range o.Dir(root) {
		if err != nil {
			t.Errorf("Dir: %v", err)
			continue
		}
		ids = append(ids, doc.ID)
	}
	slices.Sort(ids)
	if want := []string{"file.html", "real/a.html", "zz/far.html"}; !slices.Equal(ids, want) {
		t.Errorf("documents %q, want %q", ids, want)
	}
	want := map[string]int{"symlink to a walked folder": 2, "symlink broken": 2, "not a regular file": 1}
	if fmt.Sprint(skips) != fmt.Sprint(want) {
		t.Errorf("skipped %v, want %v", skips, want)
	}
}

// TestDirNonUTF8Names: file and folder names that are not UTF-8 (Latin-1
// names of an old archive, the bytes of a URL a wget mirror kept) name
// pages like any other; io/fs's path check refused them ("invalid
// argument"), and a single such file given as the input likewise.
func TestDirNonUTF8Names(t *testing.T) {
	root := t.TempDir()
	page := []byte("<html><body><p>a page under a Latin-1 name</p></body></html>")
	if err := os.Mkdir(filepath.Join(root, "r\xe9sum\xe9s"), 0o755); err != nil {
		t.Fatal(err)
	}
	names := []string{"caf\xe8.html", "caf\xe9.html", "r\xe9sum\xe9s/index.html"}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(root, n), page, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for doc, err := range Dir(root) {
		if err != nil {
			t.Errorf("Dir: %v", err)
			continue
		}
		ids = append(ids, doc.ID)
	}
	if !slices.Equal(ids, names) {
		t.Errorf("documents %q, want %q", ids, names)
	}
	single := filepath.Join(root, names[1])
	for doc, err := range Open(single) {
		if err != nil || doc.ID != single || len(doc.Body) != len(page) {
			t.Errorf("Open(%q) = %q, %d bytes, %v; want the page", single, doc.ID, len(doc.Body), err)
		}
	}
}
