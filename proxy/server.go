package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/fetch"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/proxy/engine"
	"github.com/winnow-search/winnow/similarity"
)

// Engine is one search engine the proxy speaks to.
type Engine struct {
	// Name labels the engine in metrics, logs and the search page.
	Name string
	// URL is the engine's base URL, e.g. "http://127.0.0.1:9200".
	URL string
	// Adapter configures how its API is spoken (kind, fields, paths).
	Adapter engine.Config
	// Timeout bounds what one client request waits for the engine:
	// connecting, sending and the answer's head, and the whole body when
	// winnow keeps it (refined, the metasearch, SearXNG's pages), as one
	// deadline that a fallback to the client's own request shares. A body
	// passed through to the client is bounded by the engine's silence
	// only (the next bytes within Timeout), so a large answer streamed to
	// a slow client is never cut while the engine keeps sending. Default
	// 2s.
	Timeout time.Duration
	// AllowWrites lets every method and path through to this engine in
	// transparent mode (indexing, admin). Default false: a read-only
	// search gateway, where anything but the engine's search routes gets
	// 403.
	AllowWrites bool
}

// Options configure a [Server]. Zero fields take the defaults named.
type Options struct {
	// Engines are the engines; at least one.
	Engines []Engine
	// Transparent names the engine that requests outside winnow's own
	// paths are forwarded to, in that engine's API; default the first
	// engine; "-" turns transparent mode off.
	Transparent string
	// Mode is how duplicates are shown by default: engine.Group (the
	// zero value), engine.Remove or engine.Annotate.
	Mode engine.Mode
	// Factor is the over-fetch factor: a page of n results asks the
	// engine for (from+n)·Factor. Default 3.
	Factor int
	// TopK is the number of results refined per query. Default 50.
	TopK int
	// Budget bounds the refinement of one query: what is not signed in
	// time passes through unmarked. Default 300ms.
	Budget time.Duration
	// Decision decides near-duplicates, the clusters of every mode (zero
	// value: the default near-duplicate decision).
	Decision similarity.Decision
	// Remove decides content-equivalence: in remove mode a duplicate is
	// dropped only when Remove accepts it against its winner, else it
	// stays, annotated (engine.Mark.Keep). Its Purpose is set to
	// similarity.PurposeRemove; the zero value is the default
	// content-equivalence decision.
	Remove similarity.Decision
	// Signer signs pages.
	Signer page.Signer
	// Fetch configures the page fetcher (SSRF guard on by default).
	Fetch fetch.Options
	// Cluster is the cluster service (winnow cluster) the proxy asks
	// first; nil means none. Results it knows as verified duplicates of
	// another result need no online work; a service that is down, slow or
	// failing only means the proxy works alone.
	Cluster *client.Client
	// ClusterTimeout bounds one lookup in the cluster service, inside the
	// budget. Default 50ms.
	ClusterTimeout time.Duration
	// ClusterFeed sends the signatures the proxy computes (pages it
	// fetched, texts hits carried) to the cluster service in the
	// background, so the service learns them. Needs Cluster.
	ClusterFeed bool
	// CacheBytes bounds the signature cache. Default 256 MiB.
	CacheBytes int64
	// CacheTTL is how long a signature is used before it is revalidated.
	// Default 1h.
	CacheTTL time.Duration
	// AnswerCacheBytes bounds the cache of refined answers: a request
	// whose engine answer is the same as last time (but for digits
	// before the results, such as the time taken) reuses the last
	// refinement while its signatures are still cached. Default 16 MiB;
	// negative turns it off.
	AnswerCacheBytes int64
	// AnswerBytesInFlight bounds the bytes of engine answers held in
	// memory at once, over all requests: an answer is admitted (two bytes
	// a byte, for the answer and its rendering) by its Content-Length
	// before it is read, or chunk by chunk as it is read when its length
	// is unknown. Past the bound an answer waits briefly, then the
	// client's own request passes through unrefined, streamed from the
	// engine without being held, so a burst of large answers never grows
	// memory. Default 128 MiB.
	AnswerBytesInFlight int64
	// AdmitWait bounds how long an answer of known length waits for room
	// under AnswerBytesInFlight before the client's own request passes
	// through unrefined instead: long enough for a request refining a
	// large answer to finish and give its bytes back, short against the
	// engine's own time, since a pass-through asks the engine again.
	// Default 50ms.
	AdmitWait time.Duration
	// MaxRequestBytes caps a client request body. Default 1 MiB.
	MaxRequestBytes int
	// MaxHeaderBytes caps a client request's headers. Default 16 KiB.
	MaxHeaderBytes int
	// MaxConns caps concurrent client connections. Default 10,000.
	MaxConns int
	// ReadTimeout, WriteTimeout and IdleTimeout bound client
	// connections: reading a request, a client that takes none of an
	// answer (each write to it, not the whole answer, so a slow client
	// gets a large answer whole), an idle keep-alive connection. Defaults
	// 10s, 30s, 60s.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// FeedbackLog is the file (JSON Lines) where the search page's
	// "not a duplicate" and "same page" buttons write the pairs a reader
	// judged ([FeedbackRecord]), for `winnow calibrate`; "" (the
	// default) turns the buttons and the log off.
	FeedbackLog string
	// FeedbackLogBytes bounds the feedback log: past it the file moves
	// to FeedbackLog + ".1" and a new one begins. Default 16 MiB.
	FeedbackLogBytes int64
	// CursorKey is the key that seals the scroll and point in time IDs
	// clients get through the gateway ([engine.CursorSeal]): at least 16
	// bytes, the same for replicas behind one load balancer. Empty (the
	// default): a random key per process, so the IDs do not outlive it.
	CursorKey []byte
	// Logger receives the server's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Server is winnow's refinement proxy: a fasthttp server in front of one
// or more search engines. Create it with [New], run it with
// [Server.Serve] and stop it with [Server.Shutdown].
type Server struct {
	o        Options
	engines  []*upstream
	transp   *upstream
	fetcher  *fetch.Client
	cache    *sigCache
	memo     *memo // shared with ref
	inflight byteBudget
	ref      *refiner
	seal     *engine.CursorSeal // seals the engines' cursor IDs
	fb       *feedbackLog       // nil: feedback off
	m        *metrics
	log      *slog.Logger
	srv      *fasthttp.Server
	ready    atomic.Bool
	// readiness caches the engines' reachability for /readyz.
	readiness readiness
	stopLife  context.CancelFunc

	// unrefinedSince counts answers passed unrefined since the last
	// answer_not_refined log line, written at unrefinedLogged (Unix ns).
	unrefinedSince, unrefinedLogged atomic.Int64

	lnMu   sync.Mutex
	lns    []net.Listener // given to Serve
	closed bool           // Shutdown has begun

}

// WithDefaults returns o with every zero field set to its default: the
// one place the proxy's defaults live, which the configuration, `winnow
// serve` and `winnow bench` read effective values from. The engines are
// copied, not modified. It is idempotent.
func (o Options) WithDefaults() Options {
	o.Factor = cmp.Or(o.Factor, 3)
	o.TopK = cmp.Or(o.TopK, 50)
	o.Budget = cmp.Or(o.Budget, 300*time.Millisecond)
	o.ClusterTimeout = cmp.Or(o.ClusterTimeout, 50*time.Millisecond)
	o.CacheBytes = cmp.Or(o.CacheBytes, 256<<20)
	o.CacheTTL = cmp.Or(o.CacheTTL, time.Hour)
	o.AnswerCacheBytes = cmp.Or(o.AnswerCacheBytes, 16<<20)
	o.AnswerBytesInFlight = cmp.Or(o.AnswerBytesInFlight, 128<<20)
	o.AdmitWait = cmp.Or(o.AdmitWait, 50*time.Millisecond)
	o.MaxRequestBytes = cmp.Or(o.MaxRequestBytes, 1<<20)
	o.MaxHeaderBytes = cmp.Or(o.MaxHeaderBytes, 16<<10)
	o.MaxConns = cmp.Or(o.MaxConns, 10_000)
	o.ReadTimeout = cmp.Or(o.ReadTimeout, 10*time.Second)
	o.WriteTimeout = cmp.Or(o.WriteTimeout, 30*time.Second)
	o.IdleTimeout = cmp.Or(o.IdleTimeout, 60*time.Second)
	o.Remove.Purpose = similarity.PurposeRemove
	o.FeedbackLogBytes = cmp.Or(o.FeedbackLogBytes, defaultFeedbackLogBytes)
	o.Engines = slices.Clone(o.Engines)
	for i := range o.Engines {
		o.Engines[i].Timeout = cmp.Or(o.Engines[i].Timeout, defaultEngineTimeout)
	}
	return o
}

// defaultEngineTimeout is [Engine.Timeout]'s default.
const defaultEngineTimeout = 2 * time.Second

// New validates the options and builds the server.
func New(o Options) (*Server, error) {
	o = o.WithDefaults()
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{o: o, log: log, inflight: byteBudget{max: o.AnswerBytesInFlight, wait: o.AdmitWait}}
	var err error
	if s.seal, err = engine.NewCursorSeal(o.CursorKey); err != nil {
		return nil, fmt.Errorf("proxy: CursorKey: %w", err)
	}
	if err := s.addEngines(); err != nil {
		return nil, err
	}
	if o.Fetch.Logger == nil {
		o.Fetch.Logger = log
	}
	if s.fetcher, err = fetch.New(o.Fetch); err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	if s.cache, err = newSigCache(o.CacheBytes, o.CacheTTL); err != nil {
		return nil, err
	}
	answerBytes := o.AnswerCacheBytes
	if o.Cluster != nil {
		// Only lists signed from the cache alone are remembered
		// (hotLists), and the cluster service's verdicts are not.
		answerBytes = 0
	}
	s.memo = newMemo(answerBytes)
	if o.FeedbackLog != "" {
		if s.fb, err = openFeedbackLog(o.FeedbackLog, o.FeedbackLogBytes); err != nil {
			return nil, err
		}
	}
	s.m = newMetrics(s)
	life, stop := context.WithCancel(context.Background())
	s.stopLife = stop
	s.ref = &refiner{signer: o.Signer, fetcher: s.fetcher, cache: s.cache, log: log, m: s.m, life: life,
		clusterTimeout: o.ClusterTimeout, memo: s.memo}
	if o.Cluster != nil {
		s.ref.cluster = o.Cluster
		if o.ClusterFeed {
			s.ref.feed = newFeeder(o.Cluster, log, s.m)
		}
	} else if o.ClusterFeed {
		return nil, errors.New("proxy: ClusterFeed needs a Cluster service")
	}
	s.srv = &fasthttp.Server{
		// Answers are compressed for clients that accept it: the engine
		// is asked for identity so its answer can be parsed.
		Handler:                      fasthttp.CompressHandlerLevel(s.handle, fasthttp.CompressBestSpeed),
		Name:                         "winnow",
		Concurrency:                  o.MaxConns,
		ReadBufferSize:               o.MaxHeaderBytes,
		MaxRequestBodySize:           o.MaxRequestBytes,
		ReadTimeout:                  o.ReadTimeout,
		WriteTimeout:                 o.WriteTimeout,
		IdleTimeout:                  o.IdleTimeout,
		DisablePreParseMultipartForm: true,
		NoDefaultServerHeader:        true,
		Logger:                       fasthttpLogger{log},
		ErrorHandler:                 requestError,
	}
	return s, nil
}

// addEngines builds the upstreams of the configured engines and picks the
// transparent one, reporting every fault.
func (s *Server) addEngines() error {
	var errs []error
	if len(s.o.Engines) == 0 {
		errs = append(errs, errors.New("proxy: no engines configured"))
	}
	for i, e := range s.o.Engines {
		b, err := newUpstream(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("proxy: engines[%d] (%s): %w", i, e.Name, err))
			continue
		}
		b.gate = b.gate.WithCursorSeal(s.seal)
		b.cut = func(err error, relayed int64) {
			s.m.answerCut(b)
			s.log.Warn("engine_answer_cut", "engine", b.Name, "relayed_bytes", relayed, "err", err)
		}
		s.engines = append(s.engines, b)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	switch s.o.Transparent {
	case "-":
	case "":
		s.transp = s.engines[0]
	default:
		for _, b := range s.engines {
			if b.Name == s.o.Transparent {
				s.transp = b
			}
		}
		if s.transp == nil {
			return fmt.Errorf("proxy: transparent engine %q is not configured", s.o.Transparent)
		}
	}
	return nil
}

// requestError answers a request fasthttp could not read: 413 for a body
// over the limit, 431 for headers over the limit, 408 for a client too
// slow, 400 otherwise.
func requestError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		ctx.Error("winnow: request body too large", fasthttp.StatusRequestEntityTooLarge)
	case errors.As(err, &small):
		ctx.Error("winnow: request headers too large", fasthttp.StatusRequestHeaderFieldsTooLarge)
	case errors.Is(err, fasthttp.ErrTimeout):
		ctx.Error("winnow: request timeout", fasthttp.StatusRequestTimeout)
	default:
		ctx.Error("winnow: bad request", fasthttp.StatusBadRequest)
	}
}

// fasthttpLogger routes fasthttp's own messages to slog.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Warn("fasthttp", "msg", fmt.Sprintf(format, args...))
}

// Serve accepts connections on ln until [Server.Shutdown]. It marks the
// server ready.
func (s *Server) Serve(ln net.Listener) error {
	s.lnMu.Lock()
	if s.closed {
		s.lnMu.Unlock()
		ln.Close()
		return nil
	}
	s.lns = append(s.lns, ln)
	s.lnMu.Unlock()
	s.ready.Store(true)
	return s.srv.Serve(clientListener{ln, s.o.WriteTimeout})
}

// Shutdown stops accepting connections, waits for requests in flight and
// the background fetches to finish and for the signatures still queued for
// the cluster service to be sent (or ctx to end), and frees the cache.
func (s *Server) Shutdown(ctx context.Context) error {
	s.ready.Store(false)
	err := s.srv.ShutdownWithContext(ctx)
	// A Serve that had not yet handed its listener to fasthttp when
	// fasthttp shut down would accept on it for ever: closing it ends
	// that Serve (a listener fasthttp closed already just errs).
	s.lnMu.Lock()
	s.closed = true
	for _, ln := range s.lns {
		ln.Close()
	}
	s.lnMu.Unlock()
	s.stopLife()
	done := make(chan struct{})
	go func() { s.ref.wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		err = cmp.Or(err, ctx.Err())
	}
	if s.ref.feed != nil {
		err = cmp.Or(err, s.ref.feed.close(ctx))
	}
	s.fetcher.Close()
	s.cache.close()
	if s.fb != nil {
		err = cmp.Or(err, s.fb.close())
	}
	return err
}
