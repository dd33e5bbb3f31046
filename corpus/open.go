package corpus

import (
	"context"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// openFile opens path for reading and stops waiting when ctx is done. A
// regular file or directory opens at once; a named pipe (FIFO) blocks in
// open(2) until a writer appears, so anything else is opened in a
// goroutine that ctx abandons. An abandoned FIFO open is released by
// opening the FIFO for writing without blocking, which completes our own
// reader's open, and the file it returns is closed.
func openFile(ctx context.Context, path string, fi fs.FileInfo) (*os.File, error) {
	if fi.Mode().IsRegular() || fi.IsDir() {
		return os.Open(path)
	}
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
	}
	go func() {
		// Exits once the open returns: at once if the release below
		// reaches it, else when a writer appears or the process ends.
		if fi.Mode()&fs.ModeNamedPipe != 0 {
			for range 50 {
				w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
				if err == nil {
					w.Close()
					break
				}
				select {
				case o := <-done:
					if o.f != nil {
						o.f.Close()
					}
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
		if o := <-done; o.f != nil {
			o.f.Close()
		}
	}()
	return nil, ctx.Err()
}

// ctxReader reads r until ctx is done, then returns ctx's error (a read
// that blocks is woken by [openInput]'s deadline).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	if err != nil && c.ctx.Err() != nil {
		return n, c.ctx.Err()
	}
	return n, err
}

// openInput is openFile, and when ctx is done a read of the file that
// blocks (on a pipe) returns: a deadline set on it wakes the read (a
// regular file takes no deadline and needs none). Close the file to
// forget ctx.
func openInput(ctx context.Context, path string, fi fs.FileInfo) (*os.File, error) {
	f, err := openFile(ctx, path, fi)
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Now()) })
	return f, nil
}
