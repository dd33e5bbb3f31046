// Package proxy is winnow's refinement proxy: a fasthttp server in front
// of one or more search backends that removes, groups or annotates
// near-duplicate results.
//
// Transparent mode: a client speaks a backend's own API (Elasticsearch
// _search, Solr select, SearXNG, OpenSearch RSS/Atom, a JSON API) through
// the proxy. The request is rewritten to over-fetch from the first hit, the
// top results are signed (from the signature cache, from the text a hit
// carries, or by fetching the page within the request budget), clustered
// online, and the answer is rendered back in the backend's own format with
// the client's page size. Whatever fails on winnow's side (a page, the
// cache, the parse of an answer) only lowers what is refined: the client
// then gets the backend's answer as the backend gave it. A backend error is
// passed on unchanged.
//
// Metasearch: /_winnow/search (HTML, the built-in search page) and
// /_winnow/search.json fan one query out to every engine with per-engine
// deadlines, fuse the answers by canonical URL with reciprocal rank fusion
// and group near-duplicates across engines.
//
// Operations: /metrics (Prometheus text format), /healthz, /readyz;
// limits on request size, header size and connections; graceful shutdown
// that finishes requests in flight and background fetches.
package proxy
