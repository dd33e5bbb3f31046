// Package hashmix holds the integer mixer that the signatures and the
// cluster service's candidate tables both hash with, so the two can never
// drift apart.
package hashmix

// Mix64 is the murmur3 64-bit finalizer (Appleby, MurmurHash3's fmix64):
// a bijection on uint64 with full avalanche, five operations, inlined
// by the compiler. Safe for concurrent use; it has no state.
func Mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
