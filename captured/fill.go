package captured

import (
	"fmt"
	"io/fs"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/inject"
)

// bufWriter is fill's device side: it writes one buffer.
type bufWriter struct {
	// zero sets the buffer's first n bytes to 0; upload writes b at
	// offset at; dup copies n bytes from offset src to offset dst.
	zero   func(n int64) error
	upload func(at int64, b []byte) error
	dup    func(dst, src, n int64) error
}

// deviceBuf writes buf, in order on s.
func deviceBuf(buf cuda.DevicePtr, s *cuda.Stream) bufWriter {
	return bufWriter{
		zero:   func(n int64) error { return cuda.MemsetD8Async(buf, 0, int(n), s) },
		upload: func(at int64, b []byte) error { return cuda.CopyHtoD(buf.Add(int(at)), b, s) },
		dup: func(dst, src, n int64) error {
			return cuda.MemcpyDtoDAsync(buf.Add(int(dst)), buf.Add(int(src)), int(n), s)
		},
	}
}

// fill writes a group's buffer with w: zeros, then each view's snapshot
// tiled from its pointer to the next view's (the first one also backwards
// to the buffer's start, in phase); a sampled snapshot is first scrambled
// into a longer period (see scramble). It reports whether any snapshot was
// written.
func fill(fsys fs.FS, g *group, views []view, w bufWriter, c *Snapshots, t *Timing) (bool, error) {
	if err := w.zero(g.size); err != nil {
		return false, err
	}
	wrote := false
	for i, v := range views {
		if v.Snap == "" {
			continue
		}
		data, err := viewData(fsys, v, c.pattern, t)
		if err != nil {
			return wrote, err
		}
		start := int64(v.value - g.base)
		end := g.size
		if i+1 < len(views) {
			if next := int64(views[i+1].value - g.base); next < end {
				end = next
			}
		}
		from := start
		if !wrote {
			from = 0
		}
		if end <= from {
			continue
		}
		if err := tileWith(from, end, data, start, w.upload, w.dup); err != nil {
			return wrote, err
		}
		wrote = true
	}
	return wrote, nil
}

// writeViews writes each view's snapshot into a group's buffer shared
// with kernels made before (Shared), at its pointer, its recorded bytes
// only: the kernel finds its inputs as recorded on its first launch, and
// what the other kernels left elsewhere in the allocation stays. It
// reports whether any snapshot was written.
func writeViews(fsys fs.FS, g *group, views []view, w bufWriter, c *Snapshots, t *Timing) (bool, error) {
	wrote := false
	for _, v := range views {
		if v.Snap == "" {
			continue
		}
		data, err := viewData(fsys, v, c.read, t)
		if err != nil {
			return wrote, err
		}
		start := int64(v.value - g.base)
		n := min(int64(len(data)), g.size-start)
		if n <= 0 {
			continue
		}
		if err := w.upload(start, data[:n]); err != nil {
			return wrote, err
		}
		wrote = true
	}
	return wrote, nil
}

// viewData reads v's snapshot with read (Snapshots.pattern or
// Snapshots.read), charging the time to reading files.
func viewData(fsys fs.FS, v view, read func(fs.FS, inject.Snapshot) ([]byte, error), t *Timing) ([]byte, error) {
	defer t.enter(t.enter(workFiles))
	data, err := read(fsys, v.Snapshot)
	if err != nil {
		return nil, fmt.Errorf("snapshot of %s: %w", v.what, err)
	}
	return data, nil
}

// tileWith fills [from, to) of a buffer with pattern repeated so that
// pattern[0] lies at offset phase: byte x gets pattern[(x-phase) mod
// len(pattern)]. It uploads one period (upload writes b at offset at) and
// doubles it with device copies (dup copies n bytes from offset src to
// offset dst).
func tileWith(from, to int64, pattern []byte, phase int64, upload func(at int64, b []byte) error, dup func(dst, src, n int64) error) error {
	n := to - from
	first := rotated(pattern, from, min(int64(len(pattern)), n), phase)
	if err := upload(from, first); err != nil {
		return err
	}
	for have := int64(len(first)); have < n; {
		c := min(have, n-have)
		if err := dup(from+have, from, c); err != nil {
			return err
		}
		have += c
	}
	return nil
}

// rotated returns the n bytes of pattern, repeated with pattern[0] at
// offset phase, that start at offset from: a part of pattern itself where
// they lie in one piece there.
func rotated(pattern []byte, from, n, phase int64) []byte {
	period := int64(len(pattern))
	if period == 0 {
		return make([]byte, n)
	}
	at := ((from-phase)%period + period) % period
	if at+n <= period {
		return pattern[at : at+n]
	}
	out := make([]byte, n)
	for j := int64(0); j < n; {
		c := copy(out[j:], pattern[at:])
		j, at = j+int64(c), 0
	}
	return out
}

// scramblePeriod is the period a sampled snapshot is tiled with.
const scramblePeriod = 1 << 20

// scramble returns n bytes: the sample, then 8-byte words of the sample
// drawn pseudo-randomly (a fixed hash of the position), so that a buffer
// holds the real run's values without the sample's period. Tiled as it
// was, a 4 KiB sample of a weight matrix with 2048 f16 columns made every
// row the same, and the captured GEMMs of a compiled Llama prefill ran 10%
// faster than traced (tensor cores switch less on repeated data); cuBLAS
// called on random data ran within 3%. Eight-byte words keep every value
// of a 1-, 2-, 4- or 8-byte dtype whole.
func scramble(sample []byte, n int) []byte {
	words := len(sample) / 8
	if words < 2 || n <= len(sample) {
		return sample
	}
	out := make([]byte, n-n%8)
	copy(out, sample)
	for i := len(sample) - len(sample)%8; i+8 <= len(out); i += 8 {
		h := uint64(i) * 0x9e3779b97f4a7c15
		h ^= h >> 29
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 32
		j := int(h%uint64(words)) * 8
		copy(out[i:i+8], sample[j:j+8])
	}
	return out
}
