package captured

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kreplay/kreplay/internal/gztest"
	"github.com/kreplay/kreplay/internal/inject"
)

// tileHost runs tile's plan (tileWith) on a host buffer.
func tileHost(buf []byte, from, to int64, pattern []byte, phase int64) {
	tileWith(from, to, pattern, phase,
		func(at int64, b []byte) error { copy(buf[at:], b); return nil },
		func(dst, src, n int64) error { copy(buf[dst:dst+n], buf[src:src+n]); return nil })
}

// Tiling puts pattern[0] at the phase offset and repeats the pattern
// with its period everywhere in the range, before the phase too.
func TestTile(t *testing.T) {
	pattern := []byte("abcdefg")
	for _, tc := range []struct{ from, to, phase int64 }{
		{0, 64, 0}, {0, 64, 10}, {5, 50, 5}, {0, 3, 1}, {13, 100, 40}, {0, 7, 0},
	} {
		buf := bytes.Repeat([]byte{'.'}, 110)
		tileHost(buf, tc.from, tc.to, pattern, tc.phase)
		for x := int64(0); x < int64(len(buf)); x++ {
			want := byte('.')
			if x >= tc.from && x < tc.to {
				want = pattern[((x-tc.phase)%7+7)%7]
			}
			if buf[x] != want {
				t.Fatalf("from %d to %d phase %d: byte %d is %q, want %q (%s)", tc.from, tc.to, tc.phase, x, buf[x], want, buf)
			}
		}
		if tc.phase >= tc.from && tc.phase+7 <= tc.to && !bytes.Equal(buf[tc.phase:tc.phase+7], pattern) {
			t.Errorf("pattern not at phase %d: %s", tc.phase, buf)
		}
	}
}

func TestChanged(t *testing.T) {
	for _, tc := range []struct {
		a, b   string
		lo, hi int
	}{
		{"abcdef", "abcdef", 0, 0},
		{"abcdef", "aXcdef", 1, 2},
		{"abcdef", "XbcdeY", 0, 6},
		{"abcdef", "abcXYf", 3, 5},
	} {
		if lo, hi := changed([]byte(tc.a), []byte(tc.b)); lo != tc.lo || hi != tc.hi {
			t.Errorf("changed(%q, %q) = %d, %d, want %d, %d", tc.a, tc.b, lo, hi, tc.lo, tc.hi)
		}
	}
}

// A scrambled sample starts with the sample itself, holds only its 8-byte
// words beyond, and has no short period: no 4 KiB row repeats.
func TestScramble(t *testing.T) {
	sample := make([]byte, 4096)
	for i := range sample {
		sample[i] = byte(i*7 + i/256)
	}
	out := scramble(sample, 1<<20)
	if len(out) != 1<<20 || !bytes.Equal(out[:4096], sample) {
		t.Fatalf("len %d, starts with the sample: %v", len(out), bytes.Equal(out[:4096], sample))
	}
	words := map[string]bool{}
	for i := 0; i+8 <= len(sample); i += 8 {
		words[string(sample[i:i+8])] = true
	}
	for i := 4096; i < len(out); i += 8 {
		if !words[string(out[i:i+8])] {
			t.Fatalf("word at %d is not one of the sample's", i)
		}
	}
	rows := map[string]int{}
	for i := 0; i+4096 <= len(out); i += 4096 {
		rows[string(out[i:i+4096])]++
	}
	if len(rows) != 256 {
		t.Errorf("%d distinct 4 KiB rows of 256", len(rows))
	}
	if got := scramble(sample[:8], 64); len(got) != 8 {
		t.Errorf("a one-word sample is kept as it is, got %d bytes", len(got))
	}
}

// rotatedByByte is rotated as its contract says, byte by byte.
func rotatedByByte(pattern []byte, from, n, phase int64) []byte {
	period := int64(len(pattern))
	out := make([]byte, n)
	for j := range out {
		out[j] = pattern[((from+int64(j)-phase)%period+period)%period]
	}
	return out
}

// rotated gives the bytes of the repeated pattern that start at from,
// however from, n and phase lie against the period.
func TestRotated(t *testing.T) {
	pattern := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	for _, tc := range []struct{ from, n, phase int64 }{
		{0, 36, 0}, {0, 10, 0}, {5, 36, 0}, {0, 36, 5}, {100, 36, 7}, {3, 100, 50},
		{7, 0, 2}, {0, 1, 35}, {36, 36, 0}, {1 << 40, 50, 12345}, {0, 80, 1 << 33},
	} {
		got, want := rotated(pattern, tc.from, tc.n, tc.phase), rotatedByByte(pattern, tc.from, tc.n, tc.phase)
		if !bytes.Equal(got, want) {
			t.Errorf("from %d n %d phase %d: got %q, want %q", tc.from, tc.n, tc.phase, got, want)
		}
	}
}

func FuzzRotated(f *testing.F) {
	f.Add([]byte("abcdefg"), int64(3), int64(20), int64(5))
	f.Fuzz(func(t *testing.T, pattern []byte, from, n, phase int64) {
		if len(pattern) == 0 || n < 0 || n > 1<<12 || from < 0 || phase < 0 {
			return
		}
		if got, want := rotated(pattern, from, n, phase), rotatedByByte(pattern, from, n, phase); !bytes.Equal(got, want) {
			t.Errorf("from %d n %d phase %d: got %x, want %x", from, n, phase, got, want)
		}
	})
}

// A kernel that shares a buffer writes its snapshots' recorded bytes at
// its pointers, cut at the buffer's end, and leaves the rest as it was.
func TestWriteViews(t *testing.T) {
	fsys := fstest.MapFS{
		"snaps/a.bin.gz": gztest.MapFile(t, []byte("AAAAAAAA")),
		"snaps/b.bin.gz": gztest.MapFile(t, []byte("BBBBBBBBBBBBBBBBBBBB")),
	}
	g := &group{base: 0x1000, size: 64}
	views := []view{
		{value: 0x1008, Snapshot: inject.Snapshot{Snap: "a", SnapLen: 8}, what: "pointer at 0"},
		{value: 0x1010, what: "pointer at 8"},
		{value: 0x1030, Snapshot: inject.Snapshot{Snap: "b", SnapLen: 20}, what: "pointer at 16"},
	}
	buf := bytes.Repeat([]byte{'.'}, 64)
	w := bufWriter{upload: func(at int64, b []byte) error { copy(buf[at:], b); return nil }}
	wrote, err := writeViews(fsys, g, views, w, nil, nil)
	if err != nil || !wrote {
		t.Fatalf("writeViews: wrote %v, %v", wrote, err)
	}
	want := "........AAAAAAAA................................BBBBBBBBBBBBBBBB"
	if string(buf) != want {
		t.Errorf("buffer %q, want %q", buf, want)
	}
	missing := []view{{value: 0x1000, Snapshot: inject.Snapshot{Snap: "c", SnapLen: 4}, what: "pointer at 0"}}
	if _, err := writeViews(fsys, g, missing, w, nil, nil); err == nil || !strings.Contains(err.Error(), "pointer at 0") {
		t.Errorf("a missing snapshot: %v, want an error naming the pointer", err)
	}
}
