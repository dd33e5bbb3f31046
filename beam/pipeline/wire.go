package pipeline

import (
	"bytes"
	"encoding/gob"
)

// gobBytes encodes v, a struct holding slices, to cross a Reshuffle as
// bytes: Flink's job server decodes what a Reshuffle moves and misread
// the SDK's row encoding of such structs. gob, not JSON: JSON coerces a
// string to UTF-8, each invalid byte becoming U+FFFD, and the strings that
// cross are binary (the 8-byte document IDs of ids.go, candidate bucket
// keys) or file paths that need not be UTF-8.
func gobBytes[T any](v T) []byte {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		panic(err) // strings, integers and slices of them: cannot fail
	}
	return b.Bytes()
}

// fromGob decodes what gobBytes encoded.
func fromGob[T any](b []byte) (T, error) {
	var v T
	err := gob.NewDecoder(bytes.NewReader(b)).Decode(&v)
	return v, err
}
