package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/options"
	"github.com/winnow-search/winnow/proxy"
	"github.com/winnow-search/winnow/proxy/engine"
)

// memoryLimit sets the Go runtime's soft memory limit to held (the
// effective caches, signatures and answers, and the bound on engine
// answers in flight) plus 112 MiB, unless the operator set GOMEMLIMIT,
// until the proxy runs: then [proxy.Server.LimitMemory] lowers it to
// the caches' bytes in use instead of their bounds, so the room of empty
// caches is not the collector's headroom (eight concurrent 41 MB answers
// peaked at about 400 MiB under a 512 MiB limit with empty caches). A
// full, churning cache otherwise lets the heap grow to twice what is
// live before a collection, past the caches + answers in flight +
// 150 MiB the proxy promises; a limit without the answers in flight
// would have the collector run without pause once full caches and a full
// answer budget are live together. The limit covers Go's memory only;
// goroutine stacks of a cold-query flood and the runtime's slack add
// about 25 MiB of resident memory above it (a 64 MiB cache churned by
// wrk: 233 MiB resident at + 128 MiB, 221 MiB at + 112). Under the limit
// it collects less often while the heap is small (GOGC 400 unless the
// operator set GOGC): on two cores a collection's marking takes a quarter
// to a half of the CPU; the limit, not GOGC, bounds the heap once the
// cache fills.
func memoryLimit(held int64) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(held + 112<<20)
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

// demoEngines starts the embedded demo search engine on loopback and
// returns the engines that speak to it: its Elasticsearch-style API
// (transparent mode) and its SearXNG-style API, so the search page shows
// a metasearch over two engines that rank differently.
func demoEngines(e *env) (*demo.Server, []proxy.Engine, error) {
	eng, err := demo.New(sample.Docs(), demo.Options{Logger: e.log})
	if err != nil {
		return nil, nil, err
	}
	addr := e.cfg.Serve.DemoListen
	srv, err := demo.Start(addr, eng)
	if errors.Is(err, syscall.EADDRINUSE) && addr == config.DefaultDemoListen {
		// The first command of the README must work whatever else runs
		// here: only the walk-through with a cluster service needs the
		// fixed address (the sample's URLs carry it).
		e.log.Warn("demo engine: its default address is in use, so it takes a free port; "+
			"set serve.demo_listen for the cluster-service walk-through", "addr", addr)
		srv, err = demo.Start("127.0.0.1:0", eng)
	}
	if err != nil {
		return nil, nil, err
	}
	return srv, []proxy.Engine{
		{Name: "demo-es", URL: srv.URL(), Adapter: engine.Config{Kind: "elasticsearch", Path: "/llvm/_search"}},
		{Name: "demo-searx", URL: srv.URL(), Adapter: engine.Config{Kind: "searxng", Path: "/searxng/search"}},
	}, nil
}

func runServe(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	listen := fs.String("listen", "", "listen `address` (overrides serve.listen)")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: winnow serve [-listen ADDR]\n\n"+
			"Runs the refinement proxy. With no engines configured (serve.engines), it starts an\n"+
			"embedded demo search engine over the sample corpus on loopback and proxies it.")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("serve takes no arguments")
	}
	cfg := e.cfg
	if *listen != "" {
		cfg.Serve.Listen = *listen
	}
	o, err := options.Proxy(cfg, e.log)
	if err != nil {
		return err
	}
	eff := o.WithDefaults()
	memoryLimit(eff.CacheBytes + max(eff.AnswerCacheBytes, 0) + eff.AnswerBytesInFlight)
	var demoSrv *demo.Server
	if len(o.Engines) == 0 {
		if demoSrv, o.Engines, err = demoEngines(e); err != nil {
			return fmt.Errorf("demo engine: %w", err)
		}
		defer demoSrv.Close()
		// The demo's pages live on loopback, which the SSRF guard refuses
		// unless allowed.
		o.Fetch.Allow = append(o.Fetch.Allow, netip.MustParsePrefix("127.0.0.0/8"))
	}
	srv, err := proxy.New(o)
	if err != nil {
		return err
	}
	srv.LimitMemory(ctx, time.Second)
	ln, err := net.Listen("tcp", cfg.Serve.Listen)
	if err != nil {
		return listenError(err, cfg.Serve.Listen, "serve.listen")
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	addr := ln.Addr().String()
	if demoSrv != nil {
		fmt.Fprintf(e.stdout, "winnow: open http://%s/ (search page, also at /_winnow/search; try \"benchmark\" or \"code review\")\n"+
			"winnow: demo engine at %s; its Elasticsearch API through winnow: curl 'http://%s/llvm/_search?q=benchmark&size=5'\n",
			addr, demoSrv.URL(), addr)
	} else {
		fmt.Fprintf(e.stdout, "winnow: open http://%s/ (search page, also at /_winnow/search); /metrics, /healthz, /readyz\n", addr)
	}
	e.log.Info("serving", "addr", addr, "engines", len(o.Engines))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	e.log.Info("shutting_down")
	sctx, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.Serve.ShutdownTimeout))
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return <-errc
}
