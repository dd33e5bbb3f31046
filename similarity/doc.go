// Package similarity computes near-duplicate signatures of documents and
// compares and clusters them. It does no I/O, never logs and imports no
// other winnow package: canon produces an [Input] (canonical text, word
// tokens, sentences) and the caller passes it to [Sign].
//
// A [Signature] bundles the families of the papers winnow is built from:
//
//   - a Bloom filter of content-defined chunks (Jain, Dahlin and Tewari,
//     WebDB 2005), compared by [BloomMatch], [BloomContained],
//     [BloomContainment] and [BloomJaccard];
//   - a 64-bit simhash over word shingles weighted by term frequency (the
//     Moz post; Charikar), compared by [Hamming];
//   - 84 b-bit min-hash values over 5-word shingles, 6 supershingles of 14
//     and 15 megashingles (Fetterly, Manasse and Najork), compared by
//     [EstimateJaccard], [SupershingleMatches] and
//     [Signature.Megashingles];
//   - the smallest sentence fingerprints (Huang, Wang and Li, with xxh3
//     in place of their MD5), compared by [SharedFingerprints] and
//     [BucketFingerprints];
//   - an N-dimensional length vector for partitioning (Zhu et al.);
//   - optionally the word hash sequence for LCS verification, every
//     number one token.
//
// Every parameter is in [Options]; its zero value means the paper
// defaults. Signatures built with different Options do not compare. A
// Signature encodes to about 400 bytes for a typical page with
// [Signature.MarshalBinary], led by [SignatureVersion].
//
// A [Decision] decides one pair for a [Purpose]: near-duplicates (group)
// or content-equivalence (remove). Its cheap candidate test is followed by
// a logistic [Model] over the LCS alignment's scores whose coefficients
// were fitted and whose features and confidences were chosen by
// cross-validation on labelled data (package eval, `winnow eval -cv`);
// every [Verdict] carries the model's probability and names each
// feature's contribution. [ParseDecision] reads a decision's settings the
// same way for the configuration, the flags and the proxy's requests.
package similarity
