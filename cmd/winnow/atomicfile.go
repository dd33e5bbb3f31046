package main

import (
	"os"
	"path/filepath"
)

// atomicFile is an output file written under a temporary name in its
// directory and renamed to its name only when complete, so that an
// interrupted command leaves no half-written file that looks finished.
type atomicFile struct {
	*os.File
	name    string
	inPlace bool // name is written directly
	done    bool
}

// createAtomic starts the file name: it creates .NAME.tmp* beside it. A
// name that exists and is no regular file (/dev/null, a named pipe) is
// written in place.
func createAtomic(name string) (*atomicFile, error) {
	if fi, err := os.Stat(name); err == nil && !fi.Mode().IsRegular() {
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &atomicFile{File: f, name: name, inPlace: true}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return nil, err
	}
	return &atomicFile{File: f, name: name}, nil
}

// commit syncs and closes the file and renames it to its name.
func (a *atomicFile) commit() error {
	if a.inPlace {
		a.done = true
		return a.Close()
	}
	err := a.Chmod(0o644)
	if err == nil {
		err = a.Sync()
	}
	if cerr := a.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(a.File.Name(), a.name)
	}
	if err != nil {
		os.Remove(a.File.Name())
		return err
	}
	a.done = true
	return nil
}

// abort removes the temporary file unless commit renamed it; it is safe
// after commit.
func (a *atomicFile) abort() {
	switch {
	case a.done:
	case a.inPlace:
		a.Close()
	default:
		a.Close()
		os.Remove(a.File.Name())
	}
}
