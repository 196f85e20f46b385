package gztest

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"maps"
	"sync"
	"testing"
	"testing/fstest"
)

// MapFile is data gzipped, as a file of an fstest.MapFS.
func MapFile(tb testing.TB, data []byte) *fstest.MapFile {
	tb.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return &fstest.MapFile{Data: b.Bytes()}
}

// CountingFS is an fstest.MapFS that counts the files opened from it
// (those missing too). Safe for concurrent use.
type CountingFS struct {
	fstest.MapFS
	mu     sync.Mutex
	opened map[string]int
}

// NewCountingFS counts the files opened from m.
func NewCountingFS(m fstest.MapFS) *CountingFS {
	return &CountingFS{MapFS: m, opened: map[string]int{}}
}

// Open opens name from the MapFS and counts it.
func (c *CountingFS) Open(name string) (fs.File, error) {
	c.mu.Lock()
	c.opened[name]++
	c.mu.Unlock()
	return c.MapFS.Open(name)
}

// Count is how many times name was opened.
func (c *CountingFS) Count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opened[name]
}

// Opened is how many times each file was opened, since the last Reset.
func (c *CountingFS) Opened() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.opened)
}

// Reset forgets the counts.
func (c *CountingFS) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.opened)
}
