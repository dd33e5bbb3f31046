//go:build unix

package enginetest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// holdJobServer takes the job server of kind for t until t ends: an
// exclusive lock on a file in the temporary directory, which test
// processes of every package share, waiting while another test holds it.
func holdJobServer(t *testing.T, kind string) {
	t.Helper()
	name := filepath.Join(os.TempDir(), "winnow-jobserver-"+kind+".lock")
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatalf("%s job server lock: %v", kind, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		t.Fatalf("%s job server lock %s: %v", kind, name, err)
	}
	// Closing the file releases the lock; so does the process's end.
	t.Cleanup(func() { f.Close() })
}
