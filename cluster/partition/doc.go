// Package partition maps documents to partitions by their multidimensional
// length vectors, as in Zhu, Potapova, Alabduljalil, Liu and Yang,
// "Clustering and Load Balancing Optimization for Redundant Content
// Removal", WWW 2012, §4.
//
// A [Partitioner] is built from a sample of length vectors
// (similarity.Signature.Lengths: the token count split into N parts by
// word hash). Each of P partitions is an axis-aligned box of length
// vectors, and the boxes are cut at quantiles of the sample so that each
// holds about the same number of pages ([Imbalance] measures how well).
// [Partitioner.Partition] puts a document in its box;
// [Partitioner.Candidates] lists the boxes that can hold a near-duplicate
// of it under a similarity threshold, so tier 2 of the cluster service
// compares a page only with those partitions.
//
// # The bound
//
// Zhu §4.1 bounds each dimension i of a near-duplicate B of A by
// (L(A_i)·τ/ρ, L(A_i)·ρ/τ), with ρ ≥ 1 absorbing two approximations: that
// every dimension holds about 1/N of the words (δ), and that a page's
// shingle-set size is about its length (ε). The δ part is not safe: with
// A = (100, 100, 1) and B = (100, 100, 5) words, B can be a 98% duplicate
// of A while its third dimension is five times A's.
//
// Candidates implements instead the exact consequence of the length vectors
// for the multiset Jaccard similarity of the words,
// J(A, B) = Σ_w min(a_w, b_w) / Σ_w max(a_w, b_w), where a_w counts word w
// in A. The dimensions hold disjoint sets of words, so Σ_w min(a_w, b_w) ≤
// Σ_i min(A_i, B_i) and Σ_w max(a_w, b_w) ≥ Σ_i max(A_i, B_i): J is at most
// the weighted Jaccard of the length vectors,
//
//	J(A, B) ≤ Σ_i min(A_i, B_i) / Σ_i max(A_i, B_i).
//
// Writing min(A_i, B_i) = A_i − u_i and max(A_i, B_i) = A_i + o_i with
// u_i = max(A_i − B_i, 0) and o_i = max(B_i − A_i, 0), a pair with J ≥ τ
// therefore satisfies
//
//	Σ_i (u_i + τ·o_i) ≤ (1 − τ)·|A|.
//
// The sum is separable and grows with the distance from A in each
// dimension, so its least value over a box is taken at the point of the
// box nearest to A. Candidates returns every partition whose box holds a
// vector meeting the inequality, and only those: no pair with J ≥ τ falls
// outside them. In one dimension the inequality is exactly Zhu's bound with
// ρ = 1, τ·|A| ≤ |B| ≤ |A|/τ; in N dimensions the region contains Zhu's box
// with ρ = 1 (each corner of the box meets it with equality and the region
// is convex), so Candidates never returns fewer partitions than Zhu's rule.
//
// The bound covers the similarities winnow verifies with: the LCS ratio
// |LCS|/(|A| + |B| − |LCS|) of two token sequences is at most J, since a
// common subsequence holds each word at most min(a_w, b_w) times. It does
// not strictly cover the Jaccard similarity of shingle sets (and its
// min-hash estimate): sets forget repetition, which is Zhu's ε. For those,
// pass τ/ρ as the threshold, with Zhu's ρ between 1 and 1.3. The length
// vector counts at most similarity.Options.MaxTokens tokens and the LCS
// sees at most MaxSeq of them, so for documents longer than MaxSeq tokens
// the bound is about prefixes and holds only approximately.
//
// # Slicing
//
// Zhu §4.3 slices each dimension on its own into intervals holding equal
// numbers of pages and takes the product. The dimensions of a length
// vector are strongly correlated (each is about 1/N of the length), so a
// product grid of marginal quantiles leaves most cells nearly empty and a
// few overloaded. New therefore cuts like a k-d tree: dimension 1 at the
// quantiles of the whole sample, dimension 2 at the quantiles of the pages
// inside each dimension-1 slab, and so on; the partitions are still boxes,
// P is still the product of the per-dimension counts, and each box holds
// about |sample|/P sample pages. A run of equal values (a spike of the
// length distribution) cannot be cut, which is what limits one-dimensional
// balance.
package partition
