// Package config holds winnow's one configuration tree: defaults, loading
// from a YAML file, overrides from the environment and from command-line
// "key=value" settings, and validation that names every bad field.
//
// The package is a leaf: it knows nothing of the packages it configures.
// cmd/winnow maps each section onto that package's own Options, so tests
// build components without a config file. A zero field means "use the
// default"; [Config.WithDefaults] fills them in one place.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is the whole configuration of the winnow binary.
type Config struct {
	Canon     Canon     `yaml:"canon"`
	Signature Signature `yaml:"signature"`
	Decision  Decision  `yaml:"decision"`
	Dedup     Dedup     `yaml:"dedup"`
}

// Canon configures HTML and text canonicalization.
type Canon struct {
	// MaxBytes caps the bytes of one page that are read. Default 8 MiB.
	MaxBytes int `yaml:"max_bytes"`
	// Content selects the text a signature is built from: "all" (every
	// visible word) or "main" (boilerplate and site templates removed).
	// Default "main".
	Content string `yaml:"content"`
}

// Signature configures the signature families. Zero fields take the
// papers' defaults (see package similarity).
type Signature struct {
	// ChunkSize is the expected CDC chunk size in bytes (Jain: 256).
	ChunkSize int `yaml:"chunk_size"`
	// BloomBits is the fixed Bloom filter size m in bits (Jain: 2048).
	BloomBits int `yaml:"bloom_bits"`
	// BloomHashes is the number of Bloom hash functions k (default 6).
	BloomHashes int `yaml:"bloom_hashes"`
	// MinHashes is the number of min-hash values (Fetterly: 84).
	MinHashes int `yaml:"minhashes"`
	// ShingleWords is the min-hash shingle width in words (Fetterly: 5).
	ShingleWords int `yaml:"shingle_words"`
	// Fingerprints is the number of sentence fingerprints kept (default 8).
	Fingerprints int `yaml:"fingerprints"`
	// LengthDims is the number of length-vector dimensions (Zhu: 3).
	LengthDims int `yaml:"length_dims"`
	// MaxSeq caps the word-hash sequence kept for LCS verification
	// (default 8192 words); -1 disables LCS.
	MaxSeq int `yaml:"max_seq"`
}

// Decision configures when two pages are near-duplicates.
type Decision struct {
	// Method is "default" (cheap candidate test, then verification) or a
	// single paper method: "simhash", "bloom", "supershingles", "jaccard",
	// "lcs", "lcs-central". Default "default".
	Method string `yaml:"method"`
	// Threshold overrides the method's threshold: a Hamming distance for
	// simhash, a count of supershingles, a ratio in (0, 1] otherwise.
	// Zero keeps the method's default.
	Threshold float64 `yaml:"threshold"`
	// MinTokens is the token count below which a page never matches
	// (default 10).
	MinTokens int `yaml:"min_tokens"`
}

// Dedup configures the offline job.
type Dedup struct {
	// Workers is the number of pages canonicalized and signed in
	// parallel. Default: the number of CPUs.
	Workers int `yaml:"workers"`
	// MaxFileBytes caps one input file or record. Default 50 MiB.
	MaxFileBytes int `yaml:"max_file_bytes"`
	// Progress shows a progress bar on stderr: "auto" (when stderr is a
	// terminal), "always" or "never". Default "auto".
	Progress string `yaml:"progress"`
	// Timeout stops the job after this long; 0 means no limit.
	Timeout Duration `yaml:"timeout"`
}

// Duration is a time.Duration written as "250ms" or "1m30s" in YAML.
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a Go duration string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// String returns the duration as a Go duration string.
func (d Duration) String() string { return time.Duration(d).String() }

// Default returns the configuration with every default filled in.
func Default() Config { return Config{}.WithDefaults() }

// WithDefaults returns c with every zero field set to its default. It is the
// one place that defaults live.
func (c Config) WithDefaults() Config {
	c.Canon.MaxBytes = cmpOr(c.Canon.MaxBytes, 8<<20)
	c.Canon.Content = cmpOr(c.Canon.Content, "main")
	c.Signature.ChunkSize = cmpOr(c.Signature.ChunkSize, 256)
	c.Signature.BloomBits = cmpOr(c.Signature.BloomBits, 2048)
	c.Signature.BloomHashes = cmpOr(c.Signature.BloomHashes, 6)
	c.Signature.MinHashes = cmpOr(c.Signature.MinHashes, 84)
	c.Signature.ShingleWords = cmpOr(c.Signature.ShingleWords, 5)
	c.Signature.Fingerprints = cmpOr(c.Signature.Fingerprints, 8)
	c.Signature.LengthDims = cmpOr(c.Signature.LengthDims, 3)
	c.Signature.MaxSeq = cmpOr(c.Signature.MaxSeq, 8192)
	c.Decision.Method = cmpOr(c.Decision.Method, "default")
	c.Decision.MinTokens = cmpOr(c.Decision.MinTokens, 10)
	c.Dedup.MaxFileBytes = cmpOr(c.Dedup.MaxFileBytes, 50<<20)
	c.Dedup.Progress = cmpOr(c.Dedup.Progress, "auto")
	return c
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Methods lists the decision methods that [Decision.Method] accepts.
var Methods = []string{"default", "simhash", "bloom", "supershingles", "jaccard", "lcs", "lcs-central"}

// Validate reports every invalid field, each error naming the field by its
// YAML path.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config: %s: "+format, append([]any{field}, args...)...))
	}
	if c.Canon.MaxBytes < 1024 {
		bad("canon.max_bytes", "%d is below 1024", c.Canon.MaxBytes)
	}
	if c.Canon.Content != "all" && c.Canon.Content != "main" {
		bad("canon.content", "%q is not one of all, main", c.Canon.Content)
	}
	s := c.Signature
	if s.ChunkSize < 16 || s.ChunkSize > 1<<20 || s.ChunkSize&(s.ChunkSize-1) != 0 {
		bad("signature.chunk_size", "%d is not a power of two in [16, 1 MiB]", s.ChunkSize)
	}
	if s.BloomBits < 64 || s.BloomBits%64 != 0 || s.BloomBits > 1<<20 {
		bad("signature.bloom_bits", "%d is not a multiple of 64 in [64, 1048576]", s.BloomBits)
	}
	if s.BloomHashes < 1 || s.BloomHashes > 32 {
		bad("signature.bloom_hashes", "%d is not in [1, 32]", s.BloomHashes)
	}
	if s.MinHashes < 6 || s.MinHashes > 1024 {
		bad("signature.minhashes", "%d is not in [6, 1024]", s.MinHashes)
	}
	if s.ShingleWords < 1 || s.ShingleWords > 16 {
		bad("signature.shingle_words", "%d is not in [1, 16]", s.ShingleWords)
	}
	if s.Fingerprints < 1 || s.Fingerprints > 256 {
		bad("signature.fingerprints", "%d is not in [1, 256]", s.Fingerprints)
	}
	if s.LengthDims < 1 || s.LengthDims > 16 {
		bad("signature.length_dims", "%d is not in [1, 16]", s.LengthDims)
	}
	if s.MaxSeq < -1 {
		bad("signature.max_seq", "%d is below -1", s.MaxSeq)
	}
	known := false
	for _, m := range Methods {
		known = known || c.Decision.Method == m
	}
	if !known {
		bad("decision.method", "%q is not one of %s", c.Decision.Method, strings.Join(Methods, ", "))
	}
	if c.Decision.Threshold < 0 || c.Decision.Threshold > 64 {
		bad("decision.threshold", "%g is not in [0, 64]", c.Decision.Threshold)
	}
	if c.Decision.MinTokens < 0 {
		bad("decision.min_tokens", "%d is negative", c.Decision.MinTokens)
	}
	if c.Dedup.Workers < 0 {
		bad("dedup.workers", "%d is negative", c.Dedup.Workers)
	}
	if c.Dedup.MaxFileBytes < 1024 {
		bad("dedup.max_file_bytes", "%d is below 1024", c.Dedup.MaxFileBytes)
	}
	switch c.Dedup.Progress {
	case "auto", "always", "never":
	default:
		bad("dedup.progress", "%q is not one of auto, always, never", c.Dedup.Progress)
	}
	if c.Dedup.Timeout < 0 {
		bad("dedup.timeout", "%s is negative", c.Dedup.Timeout)
	}
	return errors.Join(errs...)
}

// EnvPrefix starts every environment variable that [Load] reads: the YAML
// path upper-cased with "." as "_", e.g. WINNOW_DECISION_METHOD.
const EnvPrefix = "WINNOW_"

// Load builds the configuration: defaults, then the YAML file at path (if
// path is not empty; unknown keys are errors), then environment variables
// read through getenv (nil: none), then sets, each "section.field=value"
// as given by a command-line flag. The result is validated.
func Load(path string, getenv func(string) string, sets []string) (Config, error) {
	var c Config
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return Config{}, fmt.Errorf("config: %w", err)
		}
		if err := Parse(b, &c); err != nil {
			return Config{}, fmt.Errorf("config: %s: %w", path, err)
		}
	}
	if getenv != nil {
		for _, key := range Keys() {
			name := EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
			if v := getenv(name); v != "" {
				if err := c.Set(key, v); err != nil {
					return Config{}, fmt.Errorf("config: environment %s: %w", name, err)
				}
			}
		}
	}
	for _, kv := range sets {
		key, v, ok := strings.Cut(kv, "=")
		if !ok {
			return Config{}, fmt.Errorf("config: setting %q is not key=value", kv)
		}
		if err := c.Set(strings.TrimSpace(key), strings.TrimSpace(v)); err != nil {
			return Config{}, fmt.Errorf("config: setting %q: %w", kv, err)
		}
	}
	c = c.WithDefaults()
	return c, c.Validate()
}

// Parse decodes YAML into c, refusing unknown keys.
func Parse(b []byte, c *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	// An empty document decodes to the zero config.
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// Keys lists every settable key as a dotted YAML path, in declaration order.
func Keys() []string {
	var keys []string
	walk(reflect.ValueOf(&Config{}).Elem(), "", func(key string, _ reflect.Value) { keys = append(keys, key) })
	return keys
}

// Set assigns value to the field named by its dotted YAML path.
func (c *Config) Set(key, value string) error {
	var found reflect.Value
	walk(reflect.ValueOf(c).Elem(), "", func(k string, v reflect.Value) {
		if k == key {
			found = v
		}
	})
	if !found.IsValid() {
		return fmt.Errorf("unknown key %q", key)
	}
	switch found.Interface().(type) {
	case Duration:
		d, err := time.ParseDuration(value)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		found.SetInt(int64(d))
		return nil
	}
	switch found.Kind() {
	case reflect.String:
		found.SetString(value)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(value, 0, 64)
		if err != nil {
			return fmt.Errorf("%s: %q is not an integer", key, value)
		}
		found.SetInt(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return fmt.Errorf("%s: %q is not a number", key, value)
		}
		found.SetFloat(f)
	case reflect.Bool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("%s: %q is not a boolean", key, value)
		}
		found.SetBool(b)
	default:
		return fmt.Errorf("%s: cannot be set from text", key)
	}
	return nil
}

func walk(v reflect.Value, prefix string, fn func(key string, field reflect.Value)) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		fv := v.Field(i)
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[Duration]() {
			walk(fv, key, fn)
			continue
		}
		fn(key, fv)
	}
}
