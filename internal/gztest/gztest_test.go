package gztest

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

// ReadFile gives back what was gzipped.
func TestReadFile(t *testing.T) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte("one line\n"))
	zw.Close()
	path := filepath.Join(t.TempDir(), "x.gz")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := string(ReadFile(t, path)); got != "one line\n" {
		t.Errorf("ReadFile = %q", got)
	}
}
