package gztest

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
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

// A MapFile reads back as its data, and a CountingFS counts each open,
// of a missing file too.
func TestCountingFS(t *testing.T) {
	fsys := NewCountingFS(map[string]*fstest.MapFile{"a.gz": MapFile(t, []byte("x"))})
	for range 2 {
		f, err := fsys.Open("a.gz")
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(zr); err != nil || string(b) != "x" {
			t.Errorf("read %q, %v", b, err)
		}
		f.Close()
	}
	if _, err := fsys.Open("b.gz"); err == nil {
		t.Error("a missing file opened")
	}
	if a, b := fsys.Count("a.gz"), fsys.Count("b.gz"); a != 2 || b != 1 {
		t.Errorf("counted %d and %d opens, want 2 and 1", a, b)
	}
}
