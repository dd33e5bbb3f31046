package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/html"
)

var dedupDir = flag.String("dedup.dir", "", "directory of .html pages for BenchmarkDedup (default: the embedded sample, written to a temporary directory)")

// BenchmarkDedup runs winnow dedup over a directory of HTML pages and,
// side by side in the same process, the floor it is measured against: a
// bare x/net/html tokenizer pass over the same files on every core
// (reading each file and tokenizing it, nothing else). Each reports
// MB/s, pages/s and its CPU use (100 % a busy core):
//
//	go test -run '^$' -bench Dedup -benchtime=3x -count=3 ./cmd/winnow/ -dedup.dir /tmp/llvm-docs/html
func BenchmarkDedup(b *testing.B) {
	dir := *dedupDir
	if dir == "" {
		dir = b.TempDir()
		samplePages(b, dir)
	}
	var files []string
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".html") {
			info, err := d.Info()
			if err != nil {
				return err
			}
			files = append(files, p)
			total += info.Size()
		}
		return err
	})
	if err != nil || len(files) == 0 {
		b.Fatalf("%s: %d pages, %v", dir, len(files), err)
	}
	measure := func(b *testing.B, f func(b *testing.B)) {
		b.SetBytes(total)
		cpu0 := processCPU()
		for b.Loop() {
			f(b)
		}
		wall := b.Elapsed()
		b.ReportMetric(float64(len(files))*float64(b.N)/wall.Seconds(), "pages/s")
		b.ReportMetric(100*(processCPU()-cpu0).Seconds()/wall.Seconds(), "cpu%")
	}
	b.Run("tokenizer", func(b *testing.B) {
		measure(b, func(b *testing.B) { tokenizeFiles(b, files, runtime.GOMAXPROCS(0)) })
	})
	b.Run("dedup", func(b *testing.B) {
		measure(b, func(b *testing.B) {
			var stderr bytes.Buffer
			args := []string{"-set", "dedup.progress=never", "dedup", "-o", os.DevNull, dir}
			if code := run(context.Background(), args, strings.NewReader(""), io.Discard, &stderr, func(string) string { return "" }); code != 0 {
				b.Fatalf("winnow dedup = exit %d: %s", code, stderr.String())
			}
		})
	})
}

// tokenizeFiles reads and tokenizes every file with the x/net tokenizer
// on workers goroutines.
func tokenizeFiles(b *testing.B, files []string, workers int) {
	next := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for p := range next {
				data, err := os.ReadFile(p)
				if err != nil {
					b.Error(err)
					continue
				}
				z := html.NewTokenizer(bytes.NewReader(data))
				for z.Next() != html.ErrorToken {
				}
			}
		})
	}
	for _, p := range files {
		next <- p
	}
	close(next)
	wg.Wait()
}
