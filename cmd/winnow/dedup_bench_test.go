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

	"github.com/winnow-search/winnow/corpus"
	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/internal/crawltest"
)

var (
	dedupDir  = flag.String("dedup.dir", "", "directory of .html pages for BenchmarkDedup (default: the embedded sample, written to a temporary directory)")
	dedupWARC = flag.String("dedup.warc", "", "WARC file for BenchmarkDedupWARC (default: wget's crawl of the embedded sample served on loopback)")
)

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
	measure := func(b *testing.B, f func(b *testing.B)) { measureDedup(b, total, len(files), f) }
	b.Run("tokenizer", func(b *testing.B) {
		measure(b, func(b *testing.B) { tokenizeFiles(b, files, runtime.GOMAXPROCS(0)) })
	})
	b.Run("dedup", func(b *testing.B) {
		measure(b, func(b *testing.B) {
			var stderr bytes.Buffer
			args := []string{"-set", "dedup.progress=never", "dedup", "-o", os.DevNull, dir}
			if code := run(context.Background(), args, strings.NewReader(""), io.Discard, &stderr, nil); code != 0 {
				b.Fatalf("winnow dedup = exit %d: %s", code, stderr.String())
			}
		})
	})
}

// measureDedup runs f as the benchmark's loop and reports MB/s over total
// bytes, pages/s over pages and the CPU use (100 % a busy core).
func measureDedup(b *testing.B, total int64, pages int, f func(b *testing.B)) {
	b.SetBytes(total)
	cpu0 := processCPU()
	for b.Loop() {
		f(b)
	}
	wall := b.Elapsed()
	b.ReportMetric(float64(pages)*float64(b.N)/wall.Seconds(), "pages/s")
	b.ReportMetric(100*(processCPU()-cpu0).Seconds()/wall.Seconds(), "cpu%")
}

// BenchmarkDedupWARC is [BenchmarkDedup] on a WARC file, the input of the
// offline job: winnow dedup over the file, and side by side its floor,
// reading the file's documents (gzip and WARC records, one stream) and
// tokenizing them with the x/net tokenizer on every core. Bytes and pages
// are those of the documents the WARC holds. Without -dedup.warc it
// crawls the embedded sample with wget, as TestDedupWgetCrawl does; the
// figures in docs/performance.md use wget's crawl of the llvm-docs pages:
//
//	go test -run '^$' -bench DedupWARC -benchtime=3x -count=3 ./cmd/winnow/ -dedup.warc /tmp/crawl/llvm-docs.warc.gz
func BenchmarkDedupWARC(b *testing.B) {
	path := *dedupWARC
	if path == "" {
		pages := map[string][]byte{}
		for d, err := range sample.Docs() {
			if err != nil {
				b.Fatal(err)
			}
			pages[strings.TrimPrefix(d.ID, "sample://llvm/")+".html"] = d.Body
		}
		path = crawltest.Crawl(b, crawltest.NewSite(b, pages), b.TempDir(), "sample", false, "")
	}
	var total int64
	docs := 0
	for d, err := range corpus.Open(path) {
		if err != nil {
			b.Fatalf("%s: %v", path, err)
		}
		total += int64(len(d.Body))
		docs++
	}
	if docs == 0 {
		b.Fatalf("%s: no documents", path)
	}
	b.Run("tokenizer", func(b *testing.B) {
		measureDedup(b, total, docs, func(b *testing.B) { tokenizeWARC(b, path, runtime.GOMAXPROCS(0)) })
	})
	b.Run("dedup", func(b *testing.B) {
		measureDedup(b, total, docs, func(b *testing.B) {
			var stderr bytes.Buffer
			args := []string{"-set", "dedup.progress=never", "dedup", "-o", os.DevNull, path}
			if code := run(context.Background(), args, strings.NewReader(""), io.Discard, &stderr, nil); code != 0 {
				b.Fatalf("winnow dedup = exit %d: %s", code, stderr.String())
			}
		})
	})
}

// tokenizeWARC reads the documents of a WARC file in one stream and
// tokenizes them with the x/net tokenizer on workers goroutines.
func tokenizeWARC(b *testing.B, path string, workers int) {
	next := make(chan []byte, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for body := range next {
				z := html.NewTokenizer(bytes.NewReader(body))
				for z.Next() != html.ErrorToken {
				}
			}
		})
	}
	for d, err := range corpus.Open(path) {
		if err != nil {
			b.Error(err)
			break
		}
		next <- d.Body
	}
	close(next)
	wg.Wait()
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
