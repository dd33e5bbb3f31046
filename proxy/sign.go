package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/fetch"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// signText signs a page text (or HTML) that a hit carries for the
// result whose URL is rawURL and whose key is key, and returns the
// canonical URL an HTML text declares (see sign). The engine's answer
// decoded it: it is Unicode, whatever charset a <meta> in it names (as
// winnow index and dedup read a stored page).
func (r *refiner) signText(key, rawURL, text string) (*similarity.Signature, string) {
	ct := "text/html; charset=utf-8"
	if page.IsText([]byte(text[:min(len(text), 512)]), "") {
		ct = "text/plain; charset=utf-8"
	}
	res, canonical, err := r.sign(key, rawURL, []byte(text), ct, "")
	if err != nil {
		return nil, ""
	}
	return detach(&res), canonical
}

// sign signs the page body fetched from pageURL (whose key is key) and
// returns, besides, the canonical URL its head declares, else the one
// its Link header (link, "" for none) declares: "" for none and for the
// page's own key (most pages declare themselves), which the cache entry
// need not hold.
func (r *refiner) sign(key, pageURL string, body []byte, contentType, link string) (page.Result, string, error) {
	s := r.signer
	s.Head = true
	res, err := s.SignURL(body, contentType, pageURL)
	if err != nil {
		return page.Result{}, "", err
	}
	canonical := res.Head.Canonical
	if canonical == "" && link != "" {
		canonical = canon.LinkCanonical(link, pageURL)
	}
	if canonical == key {
		canonical = ""
	}
	return res, canonical, nil
}

// detach returns the signature of res in an allocation of its own: a
// pointer to res.Sig would keep the whole page.Result alive, the canonical
// document with its text, tokens and sentences (tens of KB a page), for as
// long as the cache holds the signature, which its cost does not count.
func detach(res *page.Result) *similarity.Signature {
	sig := new(similarity.Signature)
	*sig = res.Sig
	return sig
}

// startFetch fetches, signs and caches one page in the background and
// delivers the signature on done (buffered, never blocking).
func (r *refiner) startFetch(i int, key, rawURL string, val fetch.Validators, done chan<- signed) {
	var e *entry
	var err error
	r.background(func() { e, err = r.fetchSign(key, rawURL, val, nil) },
		func() {
			if e == nil {
				done <- signed{i: i, internal: internalRefusal(err)}
				return
			}
			done <- signed{i: i, sig: e.sig, canonical: e.canonical}
		})
}

// revalidate refreshes a stale cache entry in the background with a
// conditional request; the stale signature serves meanwhile.
func (r *refiner) revalidate(key, rawURL string, old *entry) {
	if r.running.Load() >= maxBackground {
		return // the stale signature serves; a later query revalidates
	}
	r.background(func() { r.fetchSign(key, rawURL, old.val, old) }, nil) // on failure the stale entry serves on

}

// background runs work in a goroutine counted for Shutdown and for
// maxBackground, then finish (if not nil) even when work panics. The
// goroutine exits when work ends: a fetch ends at the latest at the fetch
// client's timeout, or when the server closes.
func (r *refiner) background(work, finish func()) {
	r.bg.Add(1)
	r.running.Add(1)
	go func() {
		defer r.bg.Done()
		defer r.running.Add(-1)
		if finish != nil {
			defer finish()
		}
		defer func() {
			if p := recover(); p != nil {
				r.log.Error("background_panic", "panic", fmt.Sprint(p))
			}
		}()
		work()
	}()
}

// fetchSign fetches rawURL, signs and caches it, and returns the cache
// entry (nil, with the error, when the fetch or the signing failed). A 304 keeps the old
// signature with a new date.
func (r *refiner) fetchSign(key, rawURL string, val fetch.Validators, old *entry) (*entry, error) {
	pg, err := r.fetcher.Get(r.life, rawURL, val)
	if err != nil {
		r.m.fetchOutcome(err)
		switch {
		case internalRefusal(err):
			r.internal.refused(r.log, rawURL)
		case !errors.Is(err, context.Canceled):
			r.log.Debug("fetch_failed", "err", err)
		}
		return nil, err
	}
	r.m.fetchOutcome(nil)
	if pg.NotModified && old != nil {
		e := &entry{sig: old.sig, canonical: old.canonical, val: old.val, fetchedAt: time.Now()}
		r.cache.set(key, e)
		return e, nil
	}
	res, canonical, err := r.sign(key, cmp.Or(pg.URL, rawURL), pg.Body, pg.ContentType, pg.Link)
	if err != nil {
		r.log.Debug("sign_failed", "err", err)
		return nil, err
	}
	e := &entry{sig: detach(&res), canonical: canonical, val: fetch.Validators{ETag: pg.ETag, LastModified: pg.LastModified}, fetchedAt: time.Now()}
	r.cache.set(key, e)
	r.feedBack(key, e.sig)
	return e, nil
}

// feedBack hands a computed signature to the feeder, if there is one.
func (r *refiner) feedBack(key string, sig *similarity.Signature) {
	if r.feed != nil {
		r.feed.add(key, sig)
	}
}

// wait blocks until every background fetch has ended.
func (r *refiner) wait() { r.bg.Wait() }

// internalRefusal reports whether the SSRF guard refused a page for its
// address (serve.fetch.allow opens it), not for a port browsers refuse on
// every network.
func internalRefusal(err error) bool {
	return errors.Is(err, fetch.ErrBlocked) && !errors.Is(err, fetch.ErrBadPort)
}

// internalWarner warns that result pages are not refined because the
// SSRF guard refuses their addresses, the normal case for an intranet
// search engine: at the first refusal and then at most once per
// internalWarnEvery, naming the setting that allows them. Safe for
// concurrent use.
type internalWarner struct {
	last    atomic.Int64 // UnixNano of the last warning; 0: none yet
	refusal atomic.Uint64
}

// internalWarnEvery spaces the warnings about refused addresses.
const internalWarnEvery = 10 * time.Minute

func (w *internalWarner) refused(log *slog.Logger, rawURL string) {
	n := w.refusal.Add(1)
	now := time.Now().UnixNano()
	last := w.last.Load()
	if last != 0 && now-last < int64(internalWarnEvery) || !w.last.CompareAndSwap(last, now) {
		return
	}
	log.Warn("result_pages_internal",
		"msg", "result pages are not refined: their addresses are internal and the SSRF guard refuses them; list the networks to allow in serve.fetch.allow",
		"refused", n, "example_host", hostOf(rawURL))
}

// hostOf is the host of rawURL, for logs: never the path or query.
func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
