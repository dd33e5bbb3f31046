// Package indextag tags the documents of a search engine's index with
// their near-duplicate groups: `winnow index`. It reads an Elasticsearch
// or OpenSearch index through a point in time with search_after on
// _shard_doc (a scroll where the engine has no point in time), in
// parallel slices, or a Solr core through cursorMark on its unique key;
// each stored document becomes a page as a JSON Lines record does for
// `winnow dedup` (corpus.JSONLFields.Object), or is fetched from its URL
// field, and is signed as it streams (page.Signer); only the signatures
// stay in memory. The pages are then clustered and their winners elected
// exactly as `winnow dedup` does (similarity.BatchCluster under the rank
// keys of offline.Ranking, each cluster's line from offline.NewLine), with
// the document's _id as its key, so that the same pages give the same
// groups, winners and cluster IDs.
//
// A dry run ([Options.Apply] false) only reports. Applying writes four
// fields per document, after adding them to the mapping (schema):
// winnow_group (keyword, the cluster ID, singletons included),
// winnow_winner, winnow_removable (the content-equivalence decision accepts
// the document against its winner) and winnow_probability (the group
// decision's probability against the winner, 1 for a winner). Writes are
// partial updates conditioned on what was read (if_seq_no and
// if_primary_term; Solr's _version_), so a document changed since it was
// read is re-read and decided again, never overwritten. Back-pressure
// (429, 503, a bulk item's es_rejected_execution_exception) is retried
// with exponential backoff; [Options.Rate] bounds the documents written a
// second.
//
// A checkpoint file records what was read (every document's version and
// signature) and what was written (each acknowledged batch), appended and
// synced as the job goes, so that a run stopped at any point (kill -9
// included) resumes without reading again, without missing a document and
// without writing one twice: a batch sent but not recorded comes back as
// a version conflict, and the document re-read then already carries its
// tags.
//
// Incremental runs ([Options.Since]) read only the documents a range on
// one field selects (a timestamp, _seq_no, Solr's _version_) and compare
// them with the winners of the groups already written, as the cluster
// service's tier 2 and `winnow-beam assign` do: a page joins the group
// whose winner it matches best (highest Jaccard, then the smaller group
// ID); the pages that match no winner are clustered among themselves. A
// group whose winner is gone elects a new one among its members.
package indextag
