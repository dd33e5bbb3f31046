package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/winnow-search/winnow/options"
)

// maxInputBytes caps a page read by sig and compare.
const maxInputBytes = 64 << 20

// readPage reads a file, or stdin for "-", and guesses its content type
// from the name: .txt and .text are plain text, anything else is sniffed.
func readPage(e *env, name string) ([]byte, string, error) {
	var r io.Reader
	if name == "-" {
		r = e.stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, "", err
		}
		defer f.Close()
		r = f
	}
	body, err := io.ReadAll(io.LimitReader(r, maxInputBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	if len(body) > maxInputBytes {
		return nil, "", fmt.Errorf("%s: over the %d MiB input limit", name, maxInputBytes>>20)
	}
	ct := ""
	switch strings.ToLower(filepath.Ext(name)) {
	case ".txt", ".text":
		ct = "text/plain"
	case ".html", ".htm", ".xhtml":
		ct = "text/html"
	}
	return body, ct, nil
}

// sigView is the printable form of a signature.
type sigView struct {
	Source        string   `json:"source"`
	Title         string   `json:"title,omitempty"`
	Charset       string   `json:"charset,omitempty"`
	TextBytes     int      `json:"text_bytes"`
	Tokens        int      `json:"tokens"`
	Sentences     int      `json:"sentences"`
	Truncated     bool     `json:"truncated,omitempty"`
	Capped        bool     `json:"capped,omitempty"`
	Empty         bool     `json:"empty,omitempty"`
	Simhash       string   `json:"simhash"`
	Chunks        int      `json:"chunks"`
	BloomBitsSet  uint     `json:"bloom_bits_set"`
	MinHash       []uint16 `json:"minhash"`
	Supershingles []string `json:"supershingles"`
	Fingerprints  []string `json:"fingerprints"`
	Lengths       []uint32 `json:"lengths"`
	SeqLen        int      `json:"seq_len"`
	EncodedBytes  int      `json:"encoded_bytes"`
	Encoded       string   `json:"encoded"`
}

func runSig(_ context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("sig", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	withSeq := fs.Bool("seq", false, "include the word-hash sequence in the encoding")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: winnow sig [-json] [-seq] FILE|-")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("sig takes one FILE or - for stdin")
	}
	body, ct, err := readPage(e, fs.Arg(0))
	if err != nil {
		return err
	}
	res, err := options.Signer(e.cfg).Sign(body, ct)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	s := res.Sig
	enc := s
	if !*withSeq {
		enc.Seq = nil
	}
	b, err := enc.MarshalBinary()
	if err != nil {
		return err
	}
	v := sigView{
		Source: fs.Arg(0), Title: res.Doc.Title, Charset: res.Doc.Charset,
		TextBytes: len(res.Doc.Text), Tokens: s.Tokens, Sentences: len(res.Doc.Sentences),
		Truncated: res.Doc.Truncated, Capped: s.Capped, Empty: s.Empty(),
		Simhash: fmt.Sprintf("%016x", s.Simhash), Chunks: s.Chunks, MinHash: s.MinHash,
		Lengths: s.Lengths, SeqLen: len(s.Seq), EncodedBytes: len(b),
		Encoded: base64.StdEncoding.EncodeToString(b),
	}
	if s.Bloom != nil {
		v.BloomBitsSet = s.Bloom.BitSet().Count()
	}
	for _, x := range s.Supershingles {
		v.Supershingles = append(v.Supershingles, fmt.Sprintf("%016x", x))
	}
	for _, x := range s.Fingerprints {
		v.Fingerprints = append(v.Fingerprints, fmt.Sprintf("%08x", x))
	}
	if *asJSON {
		return writeIndentedJSON(e.stdout, v)
	}
	w := e.stdout
	fmt.Fprintf(w, "source         %s\n", v.Source)
	if v.Title != "" {
		fmt.Fprintf(w, "title          %s\n", v.Title)
	}
	fmt.Fprintf(w, "charset        %s\n", v.Charset)
	fmt.Fprintf(w, "canonical text %d bytes, %d tokens, %d sentences", v.TextBytes, v.Tokens, v.Sentences)
	if v.Truncated || v.Capped {
		fmt.Fprint(w, " (cut at the size cap)")
	}
	fmt.Fprintln(w)
	if v.Empty {
		fmt.Fprintln(w, "empty          too little text: this page never matches another")
	}
	fmt.Fprintf(w, "simhash        %s\n", v.Simhash)
	fmt.Fprintf(w, "bloom          %d chunks, %d bits set\n", v.Chunks, v.BloomBitsSet)
	fmt.Fprintf(w, "minhash        %d values (16-bit), first %v\n", len(v.MinHash), v.MinHash[:min(6, len(v.MinHash))])
	fmt.Fprintf(w, "supershingles  %s\n", strings.Join(v.Supershingles, " "))
	fmt.Fprintf(w, "fingerprints   %s\n", strings.Join(v.Fingerprints, " "))
	fmt.Fprintf(w, "lengths        %v\n", v.Lengths)
	fmt.Fprintf(w, "sequence       %d word hashes\n", v.SeqLen)
	fmt.Fprintf(w, "encoded        %d bytes (version %d)\n%s\n", v.EncodedBytes, b[0], v.Encoded)
	return nil
}
