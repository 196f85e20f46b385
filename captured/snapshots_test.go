package captured

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kreplay/kreplay/internal/gztest"
	"github.com/kreplay/kreplay/internal/inject"
)

// A kept snapshot is read once, and gives the bytes and the scrambled
// period a read without Snapshots gives; one dropped beyond the bound is
// read again; a missing or short one is an error each time.
func TestSnapshots(t *testing.T) {
	a, b := bytes.Repeat([]byte("abcdefgh"), 512), bytes.Repeat([]byte("01234567"), 256)
	fsys := gztest.NewCountingFS(fstest.MapFS{"snaps/a.bin.gz": gztest.MapFile(t, a), "snaps/b.bin.gz": gztest.MapFile(t, b)})
	sa := inject.Snapshot{Snap: "a", SnapLen: len(a)}
	sb := inject.Snapshot{Snap: "b", SnapLen: len(b), Whole: true}
	// a's bytes and period (4 KiB + 1 MiB) fit; b's (2 KiB) then drops
	// a's bytes, the least recently used.
	c := NewSnapshots(scramblePeriod + 5<<10)
	for _, cache := range []*Snapshots{nil, c} {
		for range 3 {
			if got, err := cache.read(fsys, sa); err != nil || !bytes.Equal(got, a) {
				t.Fatalf("bytes of a: %d bytes, %v", len(got), err)
			}
			got, err := cache.pattern(fsys, sa) // uses its bytes, then its period
			if err != nil || !bytes.Equal(got, scramble(a, scramblePeriod)) {
				t.Fatalf("pattern of a: %d bytes, %v", len(got), err)
			}
		}
	}
	if n := fsys.Count("snaps/a.bin.gz"); n != 6+1 {
		t.Errorf("a opened %d times, want 6 without Snapshots and 1 with", n)
	}
	if got, err := c.pattern(fsys, sb); err != nil || !bytes.Equal(got, b) {
		t.Fatalf("a whole snapshot's pattern is its bytes: %d bytes, %v", len(got), err)
	}
	if c.Bytes() != scramblePeriod+int64(len(b)) {
		t.Errorf("holds %d bytes, want a's period and b's bytes", c.Bytes())
	}
	c.pattern(fsys, sa) // its period still there, its bytes read again
	if n := fsys.Count("snaps/a.bin.gz"); n != 8 {
		t.Errorf("a opened %d times after its bytes were dropped, want 8", n)
	}
	if c.Bytes() > c.max {
		t.Errorf("holds %d bytes, over its bound %d", c.Bytes(), c.max)
	}
	for _, bad := range []inject.Snapshot{{Snap: "missing", SnapLen: 8}, {Snap: "a", SnapLen: len(a) + 8}} {
		for range 2 {
			if _, err := c.pattern(fsys, bad); err == nil || !strings.Contains(err.Error(), bad.Snap) {
				t.Errorf("%+v: err %v", bad, err)
			}
		}
	}
	small := NewSnapshots(100)
	if got, err := small.read(fsys, sa); err != nil || !bytes.Equal(got, a) || small.Bytes() != 0 {
		t.Errorf("a snapshot over the bound: %d bytes, %v; %d kept", len(got), err, small.Bytes())
	}
}
