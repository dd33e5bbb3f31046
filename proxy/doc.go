// Package proxy is winnow's refinement proxy: a fasthttp server in front
// of one or more search engines that removes, groups or annotates
// near-duplicate results.
//
// Transparent mode: a client speaks a engine's own API (Elasticsearch
// _search, Solr select, SearXNG, OpenSearch RSS/Atom, a JSON API) through
// the proxy. The request is rewritten to over-fetch from the first hit, the
// top results are signed (from the signature cache, from the text a hit
// carries, or by fetching the page within the request budget), clustered
// online, and the answer is rendered back in the engine's own format with
// the client's page size; group mode uses the engine's own grouping
// format (Elasticsearch inner_hits, Solr's expanded section, a feed
// extension element). Whatever fails on winnow's side (a page, the cache,
// the parse of an answer) only lowers what is refined: the client then
// gets the engine's answer as the engine gave it. An engine error is
// passed on unchanged. Transparent mode is a read-only search gateway:
// only the engine's search routes pass unless [Engine].AllowWrites.
//
// Files by job: server.go (options, defaults, lifecycle), routes.go,
// params.go (per-request parameters), gateway.go (what may pass, errors
// in the engine's shape), upstream.go (the HTTP client of one engine)
// and engineconn.go (its connections: a request's deadline, then the engine's silence),
// budget.go (the bound on answer bytes in flight), transparent.go, meta.go and searchpage.go, refine.go and sign.go,
// cache.go, memo.go and answers.go (the caches below), metrics.go and
// stats.go, feedback.go.
//
// Metasearch: /_winnow/search (HTML, the built-in search page) and
// /_winnow/search.json fan one query out to every engine with per-engine
// deadlines, fuse the answers by canonical URL with reciprocal rank fusion
// and group near-duplicates across engines.
//
// # Caches
//
// One signature cache, whose entries expire, and seven memo layers owned by
// one memo value under one rule: an entry is keyed by everything its value
// is computed from, so it is never stale, only evicted; an entry resting
// on signature-cache entries also holds them and serves only while each
// is still the cache's and fresh.
//
//	cache        key                                   holds                                   an entry dies
//	signatures   canonical URL                         page signature, validators, declared    TTL·2 (revalidated after TTL); cost
//	                                                   canonical URL                           eviction (CacheBytes)
//	verdicts     content IDs of the two signatures     the pair's verdict (server's decision)  second generation of 8 Ki
//	             (one cache per purpose: group, remove)
//	keys         raw result URL                        its canonical URL (or the failure)      second generation of 16 Ki
//	lists        128-bit hash of canonical URLs,       the list's clusters and marks           second generation of 1 Ki
//	             signature IDs, winners, declarations
//	remembered   hash of the raw URLs (URLs compared)  canonical URLs, weak pointers to the    second generation of 1 Ki; unusable
//	lists                                              cache entries, list key                 once an entry is not the cache's/fresh
//	answers      method, path, body, mode, window      engine answer and its rendering        second generation by bytes
//	                                                   (+ the remembered list it rests on)     (AnswerCacheBytes); unusable as above
//	rewrites     request path (no body, at most 1 KiB) the rewritten path and window           second generation of 4 Ki
//	routes       method, content type, URI (no body,    the gate's route and the checked path   second generation of 4 Ki
//	             at most 1 KiB)
//
// Operations: /metrics (Prometheus text format, HELP, TYPE and le
// buckets), [Server.Stats], /healthz, /readyz;
// limits on request size, header size and connections; graceful shutdown
// that finishes requests in flight and background fetches.
package proxy
