package similarity

import "github.com/winnow-search/winnow/internal/hashmix"

// BandHash is the key of band band (rows min-hash values from
// band·rows) of minHash in [BatchCluster]'s band tables, for jobs that
// build the same tables elsewhere (the Beam pipeline). The caller checks
// that (band+1)·rows <= len(minHash).
func BandHash(minHash []uint16, band, rows int) uint64 {
	h := hashmix.Mix64(uint64(band) + 1)
	for _, v := range minHash[band*rows : (band+1)*rows] {
		h = hashmix.Mix64(h ^ uint64(v))
	}
	return h
}

// Matchable reports whether d may match s: s is not empty and not
// shorter than d's MinTokens. [BatchCluster] leaves the others out of its
// candidate tables.
func (d *Decision) Matchable(s *Signature) bool { return !d.tooShort(s) }
