package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/similarity"
)

// FeedbackPath is where the search page posts a reader's verdict on two
// results ("not a duplicate", "same page").
const FeedbackPath = "/_winnow/feedback"

// defaultFeedbackLogBytes is [Options.FeedbackLogBytes]'s default.
const defaultFeedbackLogBytes = 16 << 20

// FeedbackRecord is one line of the feedback log (JSON Lines): two
// results a reader judged on the search page, the verdict, the scores of
// their signatures when the proxy still held both (nil otherwise), whether
// the pair passes the decisions' candidate test, and the time. Nothing
// else: no query, no address, no cookie. `winnow calibrate` reads it.
type FeedbackRecord struct {
	Time time.Time `json:"time"`
	// A and B are the two results' URLs as the page showed them: A the
	// group's winner (or the result above), B the result judged.
	A string `json:"a"`
	B string `json:"b"`
	// Verdict is "not_duplicate" (on a grouped or removed result) or
	// "same_page" (on two results shown apart).
	Verdict   string             `json:"verdict"`
	Scores    map[string]float64 `json:"scores,omitempty"`
	Candidate bool               `json:"candidate"`
}

// feedbackVerdicts are the verdicts the search page posts.
var feedbackVerdicts = map[string]bool{"not_duplicate": true, "same_page": true}

// feedbackLog appends records to a file, bounded in size: past max bytes
// the file is renamed to its name + ".1" (replacing the one before) and
// a new one begun, so the log never holds more than twice max. Safe for
// concurrent use.
type feedbackLog struct {
	mu      sync.Mutex // guards f and size
	path    string
	max     int64
	f       *os.File
	size    int64
	written atomic.Uint64
}

func openFeedbackLog(path string, max int64) (*feedbackLog, error) {
	l := &feedbackLog{path: path, max: max}
	if err := l.openLocked(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *feedbackLog) openLocked() error {
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("proxy: feedback log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("proxy: feedback log: %w", err)
	}
	l.f, l.size = f, st.Size()
	return nil
}

// write appends rec as one line.
func (l *feedbackLog) write(rec *FeedbackRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("proxy: feedback log closed")
	}
	if l.size > 0 && l.size+int64(len(b)) > l.max {
		l.f.Close()
		l.f = nil
		if err := os.Rename(l.path, l.path+".1"); err != nil {
			return fmt.Errorf("proxy: feedback log: %w", err)
		}
		if err := l.openLocked(); err != nil {
			return err
		}
	}
	n, err := l.f.Write(b)
	l.size += int64(n)
	if err != nil {
		return fmt.Errorf("proxy: feedback log: %w", err)
	}
	l.written.Add(1)
	return nil
}

func (l *feedbackLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// feedback answers the search page's verdict form: it checks the two
// URLs and the verdict, scores the pair from the signature cache, writes
// the record and sends the reader back to the results (303). A bad form
// is a 400 naming the field; a POST only.
func (s *Server) feedback(ctx *fasthttp.RequestCtx) {
	if s.fb == nil {
		ctx.Error("winnow: feedback is off (serve.feedback_log)", fasthttp.StatusNotFound)
		return
	}
	if !ctx.IsPost() {
		ctx.Response.Header.Set("Allow", "POST")
		ctx.Error("winnow: feedback takes a POST", fasthttp.StatusMethodNotAllowed)
		return
	}
	args := ctx.PostArgs()
	rec := FeedbackRecord{Time: time.Now().UTC(), A: string(args.Peek("a")), B: string(args.Peek("b")), Verdict: string(args.Peek("verdict"))}
	var keys [2]string
	for i, u := range []string{rec.A, rec.B} {
		k, err := canon.URL(u)
		if err != nil || len(u) > 4096 {
			ctx.Error(fmt.Sprintf("winnow: feedback: %c is not an http(s) URL", 'a'+i), fasthttp.StatusBadRequest)
			return
		}
		keys[i] = k
	}
	if !feedbackVerdicts[rec.Verdict] {
		ctx.Error("winnow: feedback: verdict is not not_duplicate or same_page", fasthttp.StatusBadRequest)
		return
	}
	ea, okA := s.cache.get(keys[0])
	eb, okB := s.cache.get(keys[1])
	if okA && okB {
		sc := similarity.Compare(ea.sig, eb.sig, similarity.CompareOptions{LCS: true, Numbers: true, Bag: true,
			Central: similarity.CentralOptions{PageShare: similarity.DefaultPageShare}})
		rec.Scores = sc.Record()
		rec.Candidate = s.o.Decision.IsCandidate(ea.sig, eb.sig)
	}
	if err := s.fb.write(&rec); err != nil {
		s.log.Warn("feedback_write_failed", "err", err)
		ctx.Error("winnow: feedback could not be written", fasthttp.StatusInternalServerError)
		return
	}
	back := url.Values{}
	for _, k := range []string{"q", "mode"} {
		if v := string(args.Peek(k)); v != "" {
			back.Set(k, v)
		}
	}
	back.Set("feedback", rec.Verdict)
	ctx.Redirect("/_winnow/search?"+back.Encode(), fasthttp.StatusSeeOther)
}
