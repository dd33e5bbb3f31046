// Package cluster is winnow's cluster service: it keeps the near-duplicate
// groups of a whole index up to date as pages are crawled, changed,
// redirected and deleted, after Zhu, Potapova, Alabduljalil, Liu and Yang,
// "Clustering and Load Balancing Optimization for Redundant Content
// Removal", WWW 2012, §5.
//
// Tier 1 keeps every URL in at most one group; each group has a winner
// whose signature is the group's representative. A known page whose new
// signature still matches its group's representative stays without any
// other comparison, which is the main saving of the scheme. Tier 2 takes
// the other pages of an ingest batch and compares each, in batch order,
// with the group representatives that share a candidate-table key with it
// (simhash blocks and min-hash bands) inside the partitions that the
// length-vector bound of package partition allows, then verifies with the
// similarity decision. The page joins the best matching group or founds a
// new one; pages of one batch see the groups founded earlier in it, so a
// batch gives the same groups as its pages sent one by one.
//
// Winners follow Zhu's rules ([WinnerRules]). When the winner changes,
// every member is verified against it; [Service.Lookup] reports a member
// as the winner's duplicate only when verified, and a group with too many
// failures is re-clustered. Redirects follow Zhu's cases 1–3: a redirect
// joins its final target's group, and the pages that redirect to a page
// move with it. A deleted winner passes the crown by the rules.
//
// State lives behind [Store]: [BoltStore] (the default; one fsynced bbolt
// transaction per ingest batch, so a batch is all-or-nothing and an
// acknowledged one survives kill -9), [PebbleStore] (a Pebble LSM tree,
// one batch with a synced write-ahead log per ingest; resident memory
// bounded by its block cache, lookups three to four times slower),
// [RedisStore] (a Redis Cluster that several replicas share: a batch runs
// under a writer lease whose fencing token every record write checks,
// the replicas replay each other's changed groups from a log into their
// candidate tables, and a batch is all-or-nothing through a journal that
// the next writer replays, not isolated from concurrent readers) or [MemStore]. The embedded stores record their
// format and refuse another ([ErrFormat]). Signatures are stored with
// their word sequence, so verification against a winner is the LCS that
// winnow compare uses; [Options.DropSeq] stores about 400 bytes a page
// instead and verifies by the decision's min-hash fallback, which keeps
// drifted copies of a page apart. The candidate tables
// are held in memory and rebuilt from the store at start (one pass over
// the pages where the store allows it): flat slices without pointers, one
// 8-byte posting per key in one open-addressing table over all
// partitions, each group's partition read from its slot, so a page costs
// one lookup per key and the partition bound filters the postings (about
// 320 MB of heap with 1 M pages held, 750 k groups; BenchmarkIngest1M).
//
// Writes of one page may carry a version (client.Page.Version), as
// Elasticsearch's external versioning: a write applies only above the
// stored version and is answered stale otherwise, so batches that arrive
// out of order keep the newest write; a versioned delete leaves a
// [Tombstone] for Options.TombstoneTTL. A batch may name the fingerprint
// of its signing settings (page.Signer.Fingerprint): the store records
// the first and [Service.IngestSigned] refuses another ([SignerError]),
// since signatures of other settings do not compare.
//
// [Service.Handler] serves the HTTP API; package client has the wire types
// and the Go client.
package cluster
