package similarity

// The multidimensional length vector of Zhu et al. §4: the dictionary is
// split into N disjoint parts and each part's sub-document length (the sum
// of the frequencies of its words) is one dimension. The part of a word is
// fastRange of its xxh3 hash, so the split needs no dictionary and covers
// every language. A near-duplicate at Jaccard τ lies inside the bound
// (L·τ/ρ, L·ρ/τ) in each dimension (Zhu §4.1), which the cluster service
// uses to pick partitions.

// lengthDim returns the dimension of a token with hash x in a length
// vector of n dimensions.
func lengthDim(x uint64, n int) int {
	return fastRange(x, n)
}
