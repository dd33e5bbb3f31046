package corpus

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nlnwa/gowarc"
)

// writeGowarc writes records with github.com/nlnwa/gowarc's file writer,
// a WARC writer independent of wget (it computes its own digests and
// revisit blocks), gzip per record, and returns the file's path.
func writeGowarc(t *testing.T, dir string, build func(add func(gowarc.WarcRecord))) string {
	t.Helper()
	w := gowarc.NewWarcFileWriter(
		gowarc.WithFileNameGenerator(&gowarc.PatternNameGenerator{Directory: dir, Pattern: "gowarc.%{ext}s"}),
		gowarc.WithCompression(true), gowarc.WithMaxConcurrentWriters(1))
	build(func(r gowarc.WarcRecord) {
		for _, res := range w.Write(r) {
			if res.Err != nil {
				t.Fatalf("gowarc write: %v", res.Err)
			}
		}
	})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "gowarc.warc.gz"))
	if len(files) != 1 {
		t.Fatalf("gowarc wrote %v", files)
	}
	return files[0]
}

func record(t *testing.T, typ gowarc.RecordType, uri, contentType, block string, id int) gowarc.WarcRecord {
	t.Helper()
	b := gowarc.NewRecordBuilder(typ, gowarc.WithAddMissingDigest(true), gowarc.WithFixDigest(true))
	if _, err := b.WriteString(block); err != nil {
		t.Fatal(err)
	}
	b.AddWarcHeader(gowarc.WarcRecordID, fmt.Sprintf("<urn:uuid:00000000-0000-4000-8000-%012d>", id))
	b.AddWarcHeader(gowarc.WarcDate, "2026-11-22T10:00:00Z")
	b.AddWarcHeader(gowarc.WarcTargetURI, uri)
	b.AddWarcHeader(gowarc.ContentType, contentType)
	r, _, err := b.Build()
	if err != nil {
		t.Fatalf("gowarc build %s: %v", uri, err)
	}
	return r
}

// TestGowarcWriter reads a WARC file that gowarc wrote: a gzip-encoded
// chunked response, a resource, a revisit of the response, a request, a
// metadata record, a 404 and gowarc's own warcinfo.
func TestGowarcWriter(t *testing.T) {
	page, err := os.ReadFile("testdata/dir/CommandGuide/llvm-link.html")
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(page)
	zw.Close()
	var chunked bytes.Buffer
	for rest := z.Bytes(); len(rest) > 0; {
		n := min(len(rest), 1000)
		fmt.Fprintf(&chunked, "%x\r\n%s\r\n", n, rest[:n])
		rest = rest[n:]
	}
	chunked.WriteString("0\r\n\r\n")
	http := "application/http;msgtype=response"
	path := writeGowarc(t, t.TempDir(), func(add func(gowarc.WarcRecord)) {
		add(record(t, gowarc.Request, "https://llvm.example/link.html", "application/http;msgtype=request",
			"GET /link.html HTTP/1.1\r\nHost: llvm.example\r\nAccept-Encoding: gzip\r\n\r\n", 1))
		resp := record(t, gowarc.Response, "https://llvm.example/link.html", http,
			"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"+chunked.String(), 2)
		add(resp)
		add(record(t, gowarc.Metadata, "https://llvm.example/link.html", "application/warc-fields", "via: https://llvm.example/\r\n", 3))
		add(record(t, gowarc.Resource, "https://llvm.example/notes.txt", "text/plain", "plain notes of a resource record", 4))
		add(record(t, gowarc.Response, "https://llvm.example/gone.html", http, "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\n<p>gone</p>", 5))
		rev, err := resp.ToRevisitRecord(&gowarc.RevisitRef{Profile: gowarc.ProfileIdenticalPayloadDigestV1_1, TargetRecordId: resp.RecordId(), TargetUri: "https://llvm.example/link.html", TargetDate: "2026-11-22T10:00:00Z"})
		if err != nil {
			t.Fatal(err)
		}
		rev.WarcHeader().Set(gowarc.WarcTargetURI, "https://mirror.example/link.html")
		rev.WarcHeader().SetId(gowarc.WarcRecordID, "urn:uuid:00000000-0000-4000-8000-000000000006")
		add(rev)
	})

	skips := map[string]int{}
	var got []string
	for doc, err := range (Options{OnSkip: func(s Skip) { skips[s.Kind]++ }}).Open(path) {
		if err != nil {
			t.Errorf("Open(gowarc file): %v", err)
			continue
		}
		got = append(got, fmt.Sprintf("%s %s %d", doc.ID, doc.URL, len(doc.Body)))
		if strings.HasSuffix(doc.URL, "link.html") && !bytes.Equal(doc.Body, page) {
			t.Errorf("%s: body not the page (%d bytes, want %d)", doc.URL, len(doc.Body), len(page))
		}
	}
	want := []string{
		fmt.Sprintf("<urn:uuid:00000000-0000-4000-8000-000000000002> https://llvm.example/link.html %d", len(page)),
		"<urn:uuid:00000000-0000-4000-8000-000000000004> https://llvm.example/notes.txt 32",
		fmt.Sprintf("<urn:uuid:00000000-0000-4000-8000-000000000006> https://mirror.example/link.html %d", len(page)),
	}
	if !slices.Equal(got, want) {
		t.Errorf("documents of the gowarc file:\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	if fmt.Sprint(skips) != fmt.Sprint(map[string]int{"metadata": 1, "request": 1, "response 404": 1}) {
		t.Errorf("skipped %v", skips)
	}
}
