// Package offline holds the offline job's pieces shared by winnow dedup
// and winnow-beam: the keys of documents, the election of a cluster's
// winner, the JSON line written per cluster, and the loader that feeds
// the cluster service (package options builds their settings from the
// configuration).
// Both jobs call these, so that the Beam pipeline writes, byte for byte,
// the lines `winnow dedup` writes.
//
// Winners are elected without a global sort: each document's rank key
// ([Ranking.Key]) is its winner-rule sort key (cluster.WinnerRules.SortKey)
// followed by its key, so that the smallest rank key of a cluster, which
// similarity.BatchCluster makes the winner, is the member the rules prefer,
// and any subset of the corpus (a Beam worker's component) orders its
// members as the whole corpus does.
package offline
