package similarity

import (
	"strings"
	"testing"
)

func TestOptionsDefaults(t *testing.T) {
	o := Options{}.WithDefaults()
	want := Options{
		MaxBytes: 256 << 10, MaxTokens: 50000, MaxSeq: 8192,
		ChunkMin: 64, ChunkAvg: 256, ChunkMax: 64 << 10, BloomMaxBytes: 64 << 10,
		BloomBits: 2048, BloomHashes: 6, SimhashShingle: 3,
		MinHashes: 84, MinHashShingle: 5, Supershingles: 6, SupershingleSize: 14,
		Fingerprints: 8, FingerprintBuckets: 1, LengthDims: 3,
	}
	if o != want {
		t.Errorf("Options{}.WithDefaults() = %+v, want %+v", o, want)
	}
	if o.WithDefaults() != o {
		t.Errorf("WithDefaults is not idempotent")
	}
	if err := o.Validate(); err != nil {
		t.Errorf("defaults: Validate() = %v, want nil", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name   string
		o      Options
		fields []string
	}{
		{"negative caps", Options{MaxBytes: -1, MaxTokens: -2}, []string{"MaxBytes", "MaxTokens"}},
		{"avg not power of two", Options{ChunkAvg: 300}, []string{"ChunkAvg"}},
		{"chunk order", Options{ChunkMin: 512}, []string{"ChunkAvg"}},
		{"bloom too big", Options{BloomBits: 1 << 20, BloomHashes: 64}, []string{"BloomBits", "BloomHashes"}},
		{"supershingles over min-hashes", Options{MinHashes: 20}, []string{"Supershingles"}},
		{"fingerprints", Options{Fingerprints: 100, FingerprintBuckets: 100}, []string{"Fingerprints"}},
		{"dims", Options{LengthDims: 100, SimhashShingle: 65}, []string{"LengthDims", "SimhashShingle"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.WithDefaults().Validate()
			if err == nil {
				t.Fatalf("Validate(%+v) = nil, want error naming %v", tt.o, tt.fields)
			}
			for _, f := range tt.fields {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("Validate(%+v) = %q, want it to name %s", tt.o, err, f)
				}
			}
			if !strings.HasPrefix(err.Error(), "similarity: ") {
				t.Errorf("Validate error %q lacks the package prefix", err)
			}
		})
	}
}
