// Package demo is a small search engine over an in-memory corpus, served
// over HTTP on loopback, so that winnow serve has a real backend to stand
// in front of when it starts without a configuration, and so that the
// proxy's tests and benchmarks have a real search engine to query.
//
// [New] indexes documents (normally those of corpus/sample: 53 LLVM
// documentation pages of several releases, many of them near-duplicates)
// into an inverted index over each page's canonical main text, as
// [canon.HTML] with [canon.ContentMain] produces it, and ranks with BM25
// (Robertson and Zaragoza, "The Probabilistic Relevance Framework: BM25
// and Beyond", 2009; k1 = 1.2, b = 0.75, Lucene's idf
// log(1 + (N − n + 0.5)/(n + 0.5)) and its tf/(tf + k1·(1 − b + b·dl/avgdl))
// without the constant (k1 + 1) factor, as Elasticsearch 7 scores). The
// per-term, per-document scores are computed once at index time, so a query
// costs one pass over the postings of its terms plus a sort of the matching
// documents: a few microseconds on the sample, without allocation.
//
// [Engine.Handler] serves the pages themselves under /pages/ (with ETag
// and Last-Modified, so clients can revalidate) and answers queries in
// three wire formats that winnow's proxy speaks: an Elasticsearch 7
// _search subset, SearXNG JSON and OpenSearch RSS. The SearXNG endpoint
// ranks with a second scorer (page text plus the title with weight 3), so
// a metasearch over two endpoints sees two engines that disagree a little.
// Page URLs in results are absolute, built from the request's Host header,
// so they point back at the server the handler runs in.
//
// [Start] and [Serve] run the handler on a loopback listener.
package demo
