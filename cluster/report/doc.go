// Package report measures the cluster service's data the way its source
// papers do, and writes the results as aligned text tables and a PNG:
//
//   - [Balance]: the load-imbalance factor of 1-D, 2-D and 3-D length
//     partitionings ([partition.Partitioner]) at 2 to 64 partitions, Zhu et
//     al., WWW 2012, §4 and Fig. 4; [WriteBalance], [PlotBalance].
//   - [Mirrors]: host pairs that share many near-duplicate clusters,
//     confirmed by common URL-path suffixes through Bloom filters, with
//     host aliases set apart (Fetterly, Manasse and Najork, "On the
//     Evolution of Clusters of Near-Duplicate Web Pages", LA-WEB 2003, §2
//     and §4); [WriteMirrors].
//   - [Evolution]: Fetterly's cluster containment and similarity
//     coefficients Φ and Ψ between two snapshots of the clusters, averaged
//     over the URLs of each range of cluster sizes (§3, Figs. 4, 5 and 7);
//     [WriteEvolution].
//
// The functions do no I/O except the writers and [PlotBalance], never log,
// and are safe for concurrent use on distinct arguments.
package report
