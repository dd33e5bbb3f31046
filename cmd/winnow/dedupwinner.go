package main

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/similarity"
)

// winnerRules are the cluster service's winner rules as dedup.winner
// configures them (market TLDs default to backend.market_tlds).
func winnerRules(cfg config.Config) (cluster.WinnerRules, error) {
	w := cfg.Dedup.Winner
	r := cluster.WinnerRules{
		PopularityTolerance: w.PopularityTolerance,
		MarketTLDs:          w.MarketTLDs,
		Order:               w.Rules,
	}
	if len(r.MarketTLDs) == 0 {
		r.MarketTLDs = cfg.Backend.MarketTLDs
	}
	if err := r.Validate(); err != nil {
		return r, fmt.Errorf("dedup.winner.rules: %w", err)
	}
	return r, nil
}

func candidate(d *signedDoc) cluster.Candidate {
	return cluster.Candidate{URL: d.url, Popularity: d.popularity}
}

// rankedKeys returns the clustering keys of docs: each document's key
// prefixed by its rank under the winner rules, so that the smallest key
// of a cluster, which similarity.BatchCluster makes its winner, is the
// member the rules prefer. Documents the rules cannot tell apart (no URL,
// no popularity: a directory) keep the order of their keys. Cost: one
// sort, O(n log n) rule decisions.
func rankedKeys(docs []signedDoc, rules cluster.WinnerRules) []string {
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ca, cb := candidate(&docs[a]), candidate(&docs[b])
		if better, rule := rules.Decide(ca, cb); rule != "" {
			if better {
				return -1
			}
			return 1
		}
		return cmp.Compare(docs[a].key, docs[b].key)
	})
	keys := make([]string, len(docs))
	for rank, i := range order {
		keys[i] = fmt.Sprintf("%010d %s", rank, docs[i].key)
	}
	return keys
}

// electedBy returns the rule that made c's winner win over the best of
// the other members ("" for a cluster the rules cannot order), and c's ID:
// the FNV-1a hash of the winner's own key, as BatchCluster would give it
// without ranks, so that IDs do not move when other documents come in.
func electedBy(c similarity.Cluster, docs []signedDoc, rules cluster.WinnerRules) (rule string, id uint64) {
	w := &docs[c.Members[0].Index]
	h := fnv.New64a()
	h.Write([]byte(w.key))
	if len(c.Members) < 2 {
		return "", h.Sum64()
	}
	// Members after the winner are in rank order: the second is the best
	// of the rest.
	_, rule = rules.Decide(candidate(w), candidate(&docs[c.Members[1].Index]))
	if rule == "" {
		rule = "key" // neither URL nor popularity: the smaller key
	}
	return rule, h.Sum64()
}
