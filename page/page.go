// Package page wires canon to similarity: it turns the raw bytes of one
// page (HTML or plain text) into its canonical document and its
// [similarity.Signature]. The proxy, the cluster service, the offline job
// and the evaluation all sign pages through a [Signer], so one page always
// gets the same signature whichever path it takes.
package page

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/similarity"
)

// Signer signs pages. The zero value uses the defaults of canon and
// similarity and reads no head. A Signer is safe for concurrent use.
type Signer struct {
	Canon     canon.Options
	Signature similarity.Options
	// Head makes Sign and SignURL read the head of HTML pages into
	// Result.Head ([canon.HTMLHead]: some 50 µs a page, a few percent of
	// canon's own time). It changes no signature.
	Head bool
}

// Result is one signed page.
type Result struct {
	Doc canon.Document
	Sig similarity.Signature
	// Head is what the page's <head> declares (its canonical URL, ...),
	// for an HTML page signed with Signer.Head; zero otherwise.
	Head canon.Head
	// CanonTime and SignTime are the time spent canonicalizing the page
	// and signing its canonical text (for the stage times of an offline
	// run; two clock reads a page).
	CanonTime, SignTime time.Duration
}

// Sign canonicalizes body according to contentType (an HTTP Content-Type
// value; "" means HTML when the body looks like markup, else text) and
// signs the canonical text. It is SignURL without a page URL: relative
// URLs in the head are resolved against its <base href> only.
func (s Signer) Sign(body []byte, contentType string) (Result, error) {
	return s.SignURL(body, contentType, "")
}

// SignURL is Sign for the page fetched from pageURL (the final URL after
// redirects), against which, with Signer.Head, the head's relative URLs
// are resolved.
func (s Signer) SignURL(body []byte, contentType, pageURL string) (Result, error) {
	var (
		r   Result
		err error
	)
	t0 := time.Now()
	switch {
	case IsText(body, contentType):
		r.Doc, err = canon.TextType(body, contentType, s.Canon)
	case s.Head:
		r.Doc, r.Head, err = canon.HTMLHead(body, contentType, pageURL, s.Canon)
	default:
		r.Doc, err = canon.HTML(body, contentType, s.Canon)
	}
	if err != nil {
		return Result{}, fmt.Errorf("page: %w", err)
	}
	t1 := time.Now()
	r.Sig = s.SignDoc(r.Doc)
	r.CanonTime, r.SignTime = t1.Sub(t0), time.Since(t1)
	return r, nil
}

// SignDoc signs an already canonical document.
func (s Signer) SignDoc(doc canon.Document) similarity.Signature {
	return similarity.Sign(similarity.Input{
		// The text's bytes without a copy: Sign neither keeps nor
		// changes Input's slices (a copy was a page-sized allocation).
		Text:      unsafe.Slice(unsafe.StringData(doc.Text), len(doc.Text)),
		Tokens:    doc.Tokens,
		Sentences: doc.Sentences,
		Links:     doc.Links,
	}, s.Signature)
}

// Fingerprint returns 16 hex digits that name the settings deciding
// what a page's signature is: canon's MaxBytes and content mode and
// every field of the similarity options, defaults filled in (so the zero
// Signer and one with the defaults spelled out agree). Signatures made
// under two fingerprints do not compare, and the cluster service refuses
// a batch whose fingerprint is not its store's. What gives the same
// signatures (Head, canon's Enough) or only adds the optional link
// sketch, which a decision compares only when both pages have it
// (canon's Links), is left out. A field added to the options must be
// written only when it differs from its default, so that the
// fingerprints of existing settings stay as they are.
func (s Signer) Fingerprint() string {
	o := s.Signature.WithDefaults()
	maxBytes := s.Canon.MaxBytes
	if maxBytes <= 0 {
		maxBytes = canon.DefaultMaxBytes
	}
	h := sha256.New()
	fmt.Fprintf(h, "winnow-signer/1\ncanon max_bytes=%d content=%d\n", maxBytes, s.Canon.Content)
	fmt.Fprintf(h, "similarity max_bytes=%d max_tokens=%d max_seq=%d chunk=%d/%d/%d bloom_max_bytes=%d bloom=%d/%d simhash_shingle=%d minhash=%d/%d supershingles=%d/%d fingerprints=%d/%d length_dims=%d\n",
		o.MaxBytes, o.MaxTokens, o.MaxSeq, o.ChunkMin, o.ChunkAvg, o.ChunkMax, o.BloomMaxBytes, o.BloomBits, o.BloomHashes,
		o.SimhashShingle, o.MinHashes, o.MinHashShingle, o.Supershingles, o.SupershingleSize, o.Fingerprints, o.FingerprintBuckets, o.LengthDims)
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// IsText reports whether a body with this content type is plain text rather
// than markup. Without a content type, or one without a type/subtype
// ([canon.MediaType]), a body whose first non-space byte is '<' is taken
// as markup.
func IsText(body []byte, contentType string) bool {
	if mt := canon.MediaType(contentType); mt != "" {
		return mt == "text/plain"
	}
	trimmed := strings.TrimLeft(string(body[:min(len(body), 512)]), " \t\r\n\ufeff")
	return !strings.HasPrefix(trimmed, "<")
}
