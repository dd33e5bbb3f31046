package options

import (
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/fetch"
	"github.com/winnow-search/winnow/proxy"
	"github.com/winnow-search/winnow/proxy/engine"
)

// Proxy returns the proxy's options of serve.* and the decisions, its
// engines those configured (the demo's are the caller's), logging to
// log. The proxy's own defaults (proxy.Options.WithDefaults) fill what
// the configuration leaves zero.
func Proxy(c config.Config, log *slog.Logger) (proxy.Options, error) {
	v := c.Serve
	dec, remove, err := Decisions(c)
	if err != nil {
		return proxy.Options{}, err
	}
	o := proxy.Options{
		Transparent:         v.Transparent,
		Factor:              v.Factor,
		TopK:                v.TopK,
		Budget:              time.Duration(v.Budget),
		Decision:            dec,
		Remove:              remove,
		Signer:              Signer(c),
		CacheBytes:          int64(v.CacheBytes),
		CacheTTL:            time.Duration(v.CacheTTL),
		AnswerCacheBytes:    int64(v.AnswerCacheBytes),
		AnswerBytesInFlight: v.AnswerBytesInFlight,
		AdmitWait:           time.Duration(v.AdmitWait),
		MaxRequestBytes:     v.MaxRequestBytes,
		MaxHeaderBytes:      v.MaxHeaderBytes,
		MaxConns:            v.MaxConns,
		Logger:              log,
		Fetch: fetch.Options{
			Timeout:         time.Duration(v.Fetch.Timeout),
			MaxBodyBytes:    int64(v.Fetch.MaxBodyBytes),
			MaxRedirects:    v.Fetch.MaxRedirects,
			MaxConns:        v.Fetch.MaxConns,
			MaxConnsPerHost: v.Fetch.MaxConnsPerHost,
			UserAgent:       v.Fetch.UserAgent,
			Logger:          log,
		},
	}
	if o.Mode, err = engine.ParseMode(v.Mode); err != nil {
		return o, fmt.Errorf("serve.mode: %w", err)
	}
	if v.Cluster != "" {
		// The feed's batches name the settings that signed them, so the
		// service refuses them if its store holds other signatures.
		cl, err := client.New(v.Cluster, client.Options{SignerFingerprint: o.Signer.Fingerprint()})
		if err != nil {
			return o, fmt.Errorf("serve.cluster: %w", err)
		}
		o.Cluster, o.ClusterTimeout, o.ClusterFeed = cl, time.Duration(v.ClusterTimeout), v.ClusterFeed
	}
	o.FeedbackLog, o.FeedbackLogBytes = v.FeedbackLog, v.FeedbackLogBytes
	if v.CursorKey != "" {
		o.CursorKey = []byte(v.CursorKey)
	}
	for _, a := range v.Fetch.Allow {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			return o, err
		}
		o.Fetch.Allow = append(o.Fetch.Allow, p)
	}
	for _, en := range v.Engines {
		o.Engines = append(o.Engines, proxy.Engine{
			Name:        en.Name,
			URL:         en.URL,
			Timeout:     time.Duration(en.Timeout),
			AllowWrites: en.AllowWrites,
			Adapter:     engineConfig(en),
		})
	}
	if err := checkEngines(c); err != nil {
		return o, err
	}
	return o, nil
}

// engineConfig is the adapter configuration of one serve.engines entry.
func engineConfig(en config.Engine) engine.Config {
	return engine.Config{
		Kind:         en.Kind,
		Path:         en.Path,
		TextField:    en.TextField,
		Extra:        en.Extra,
		ResultWindow: en.ResultWindow,
		SolrHandlers: en.SolrHandlers,
		SolrJSONP:    en.SolrJSONP,
		Fields: engine.FieldPaths{Results: en.Results, Total: en.Total,
			URL: en.URLField, Title: en.Title, Snippet: en.Snippet},
	}
}

// checkEngines asks the engine registry about each serve.engines entry:
// its kind and what the kind needs of the other fields (config names no
// kind). The error names the entry.
func checkEngines(c config.Config) error {
	for i, en := range c.Serve.Engines {
		if _, err := engine.New(engineConfig(en)); err != nil {
			return fmt.Errorf("serve.engines[%d] (%s): %w", i, en.Name, err)
		}
		// scripts/engine and Solr's own docs print the base URL with
		// /solr; the search path repeats it, and the engine would answer
		// every search with a 404.
		if en.Kind == "solr" && strings.HasSuffix(strings.TrimSuffix(en.URL, "/"), "/solr") && strings.HasPrefix(en.Path, "/solr/") {
			return fmt.Errorf("serve.engines[%d] (%s): url %q ends in /solr and path %q starts with it: give url without /solr (the server's root)", i, en.Name, en.URL, en.Path)
		}
	}
	return nil
}

// Check reports what config.Validate cannot see, because the library
// that reads a key checks it: the decisions (similarity.NewDecision) and
// the engines (the proxy's engine registry). winnow runs it at start-up,
// so such an error is a configuration error of every command.
func Check(c config.Config) error {
	if _, _, err := Decisions(c); err != nil {
		return err
	}
	return checkEngines(c)
}
