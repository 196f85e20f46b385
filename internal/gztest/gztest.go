// Package gztest reads gzipped test data.
package gztest

import (
	"compress/gzip"
	"io"
	"os"
	"testing"
)

// ReadFile returns the decompressed content of the gzipped file at path,
// failing the test on an error.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}
