package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/options"
)

// runClusterService runs the cluster service: the HTTP API over the store
// cluster.store names (bolt by default, pebble, redis or memory), until
// interrupted.
func runClusterService(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	listen := fs.String("listen", "", "listen `address` (overrides cluster.listen)")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: winnow cluster [-listen ADDR]\n\n"+
			"Runs the cluster service: POST /v1/ingest, POST /v1/lookup, GET /v1/groups/{id},\n"+
			"GET /v1/winners (winnow-beam assign's -groups), /metrics, /healthz. Feed it with\n"+
			"winnow dedup -cluster URL; the proxy asks it with serve.cluster: URL.")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	c := e.cfg.Cluster
	if *listen != "" {
		c.Listen = *listen
	}
	o, err := options.ClusterService(e.cfg, e.log)
	if err != nil {
		return err
	}
	var st cluster.Store
	switch c.Store {
	case "memory":
		st = cluster.NewMemStore()
	case "redis":
		r, err := cluster.OpenRedis(c.Redis, options.Redis(e.cfg))
		if err != nil {
			return err
		}
		st = r
	case "pebble":
		p, err := cluster.OpenPebble(c.Path, cluster.PebbleOptions{Logger: e.log})
		if err != nil {
			return err
		}
		st = p
	default:
		b, err := cluster.OpenBolt(c.Path)
		if err != nil {
			return err
		}
		st = b
	}
	defer st.Close()
	svc, err := cluster.New(st, o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return listenError(err, c.Listen, "cluster.listen")
	}
	srv := &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(e.stdout, "winnow cluster: serving on http://%s (store %s)\n", ln.Addr(), c.Store)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
