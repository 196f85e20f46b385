package captured

import (
	"encoding/binary"
	"io/fs"
	"slices"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/inject"
)

// maxRestore bounds the bytes of steering data a launch restores: a tile
// counter or semaphore that the kernel leaves changed. A kernel that
// changes more of the bytes kept of a buffer is writing its output there,
// which needs no restoring.
const maxRestore = 2 << 10

// restore is a span of a group's buffer that the kernel changes and must
// find as it was at capture before each launch: persistent kernels (cuDNN's
// fused attention, cuBLAS's stream-K GEMMs) take work from counters in
// global memory, and a replay that left them advanced would find no work.
type restore struct {
	g        *group
	off      int64
	n        int
	pristine cuda.DevicePtr
}

// findRestores launches the kernel once on buffer set 0 and compares the
// bytes the capture kept of each buffer (whole, or a sample from the
// pointer on: counters sit at the start of a workspace) with what the
// kernel left there. A changed span of at most maxRestore bytes is
// restored before every launch, from a pristine copy; set 0 is restored
// now.
func (k *Kernel) findRestores(fsys fs.FS, s *cuda.Stream) error {
	defer k.timing.enter(k.timing.enter(workLaunches))
	if err := k.Launch(s, 0); err != nil {
		return err
	}
	if err := s.Synchronize(); err != nil {
		return &FirstLaunchError{Kernel: k.l.Name, Err: err}
	}
	for _, g := range k.groups {
		for _, pi := range g.ptrs {
			p := k.l.Ptrs[pi]
			if p.Snap == "" {
				continue
			}
			if err := k.restoreSpan(fsys, g, p, s); err != nil {
				return err
			}
		}
	}
	return nil
}

func (k *Kernel) restoreSpan(fsys fs.FS, g *group, p inject.Pointer, s *cuda.Stream) error {
	want, err := k.pristine(fsys, g, p)
	if err != nil {
		return err
	}
	start := int64(p.Value - g.base)
	got := make([]byte, len(want))
	if err := cuda.CopyDtoH(got, g.bufs[0].Add(int(start)), s); err != nil {
		return err
	}
	lo, hi := changed(want, got)
	if hi == 0 || hi-lo >= maxRestore {
		return nil
	}
	lo, hi = lo&^15, min(len(want), (hi+15)&^15)
	defer k.timing.enter(k.timing.enter(workMemory))
	r := &restore{g: g, off: start + int64(lo), n: hi - lo}
	if r.pristine, err = cuda.MemAlloc(r.n); err != nil {
		return err
	}
	k.restores = append(k.restores, r)
	if err := cuda.CopyHtoD(r.pristine, want[lo:hi], s); err != nil {
		return err
	}
	return cuda.CopyHtoD(g.bufs[0].Add(int(r.off)), want[lo:hi], s)
}

// pristine is what pointer p's snapshot says buffer set 0 of g holds
// from p on: the snapshot, up to the buffer's end, with the inner
// pointers re-pointed as the buffer holds them.
func (k *Kernel) pristine(fsys fs.FS, g *group, p inject.Pointer) ([]byte, error) {
	defer k.timing.enter(k.timing.enter(workFiles))
	data, err := k.snaps.read(fsys, p.Snapshot)
	if err != nil {
		return nil, err
	}
	start := int64(p.Value - g.base)
	want := slices.Clone(data[:min(int64(len(data)), g.size-start)])
	for _, q := range g.patches {
		if at := q.off - start; at >= 0 && at+8 <= int64(len(want)) {
			binary.LittleEndian.PutUint64(want[at:], q.address(0))
		}
	}
	return want, nil
}

// changed returns the span [lo, hi) where a and b differ; hi is 0 when
// they are equal.
func changed(a, b []byte) (lo, hi int) {
	lo = -1
	for i := range a {
		if a[i] != b[i] {
			if lo < 0 {
				lo = i
			}
			hi = i + 1
		}
	}
	if lo < 0 {
		return 0, 0
	}
	return lo, hi
}

// Restores is the number of spans restored before each launch.
func (k *Kernel) Restores() int { return len(k.restores) }

// AuxMemcpy reports whether each launch, or a producer's, also copies
// memory (the restores): those copies are not the kernel's activities.
func (k *Kernel) AuxMemcpy() bool {
	if len(k.restores) > 0 {
		return true
	}
	for _, p := range k.producers {
		if p.AuxMemcpy() {
			return true
		}
	}
	return false
}
