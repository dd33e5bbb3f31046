package proxy

import "github.com/winnow-search/winnow/fetch"

// Stats is a snapshot of the proxy's counters since [New], for programs
// that embed the proxy (winnow bench) and for /metrics: nothing needs to
// parse the Prometheus text to read them.
type Stats struct {
	// Signatures counts refined results by where their signature came
	// from.
	Signatures SignatureStats
	// CacheHits and CacheMisses count look-ups in the signature cache;
	// CacheUsedBytes and CacheMaxBytes are its cost in use and its bound.
	CacheHits, CacheMisses        uint64
	CacheUsedBytes, CacheMaxBytes int64
	// AnswerHits and AnswerMisses count the answer cache's uses (0 when
	// it is off).
	AnswerHits, AnswerMisses uint64
	// Fetch is the page fetcher's own snapshot.
	Fetch fetch.Stats
}

// SignatureStats counts results by the source of their signature.
type SignatureStats struct {
	Cached    uint64 // the signature cache
	Text      uint64 // the text the hit carried
	Fetched   uint64 // fetched and signed within the budget
	Service   uint64 // a verified duplicate the cluster service knew
	Unrefined uint64 // none in the budget, or past the top K
}

// Stats returns a snapshot of the counters. Safe for concurrent use.
func (s *Server) Stats() Stats {
	c := s.cache.c
	return Stats{
		Signatures:     s.m.signatures(),
		CacheHits:      s.cache.hits.Load(),
		CacheMisses:    s.cache.miss.Load(),
		CacheUsedBytes: c.MaxCost() - c.RemainingCost(),
		CacheMaxBytes:  c.MaxCost(),
		AnswerHits:     s.memo.answers.load(true),
		AnswerMisses:   s.memo.answers.load(false),
		Fetch:          s.fetcher.Stats(),
	}
}
