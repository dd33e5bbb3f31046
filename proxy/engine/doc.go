// Package engine adapts search backends for the winnow proxy: it rewrites a
// client's request so the backend over-fetches, parses the backend's answer
// into plain [Result] values, and renders the answer back in the backend's
// own format once the proxy has decided which results duplicate which.
//
// [New] returns an [Adapter] for Elasticsearch and OpenSearch _search
// ("elasticsearch"), Solr JSON ("solr"), SearXNG JSON ("searxng"), OpenSearch
// RSS 2.0 and Atom feeds such as Xapian Omega's opensearch template
// ("opensearch-rss") and any JSON API described by dotted field paths
// ("json").
//
// Rendering splices bytes: the answer is scanned once for the byte span of
// its result list (hits.hits, response.docs, results, the <item> or <entry>
// elements), and Render copies everything outside that span unchanged, so
// unknown fields, their order, totals, aggregations, facets, timing and XML
// namespace prefixes survive byte for byte. Inside the span a result is
// copied as it was, dropped, or gets one extra member ("_winnow" in JSON, a
// <winnow:...> child in XML, namespace [Namespace]).
//
// Paging. With a factor f, Rewrite asks for the first (from+size)·f raw hits
// (while that stays under [Config].MaxFetch) and returns a [Window] whose
// From counts distinct results, so the same query always dedups the same
// prefix and a cluster shown on page N does not come back on page N+1.
// Deeper pages fall back to from..from+size·f of the raw list. SearXNG has
// no page size: its adapter also implements [Pager], which asks for the
// client's page and the f-1 pages after it and merges them.
//
// The package does no I/O, never logs and imports no other winnow package.
// Adapters are immutable after [New] and safe for concurrent use; a
// [Parsed] belongs to one request.
package engine
