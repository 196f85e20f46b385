package launch

import (
	_ "embed"
	"fmt"
	"slices"
	"sync"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/nvrtc"
)

//go:embed fill.cu
var fillSource string

// fillKinds maps dtypes to the kind argument of kr_fill, with element sizes.
var fillKinds = map[string]struct {
	kind int32
	size int64
}{
	"f16": {0, 2}, "bf16": {1, 2}, "f32": {2, 4}, "f64": {3, 8}, "i64": {4, 8}, "i32": {5, 4},
	"bool": {6, 1}, "u8": {7, 1}, "i8": {7, 1}, "bytes": {7, 1}, "": {7, 1},
	"f8e4m3": {8, 1}, "f8e5m2": {9, 1},
}

var (
	fillMu    sync.Mutex
	fillFuncs = map[cuda.ContextKey]*cuda.Function{} // by context lifetime
	fillErr   error                                  // NVRTC unusable: fall back to host patterns
)

// fillFunction compiles kr_fill once per process (as PTX, which the driver
// compiles for whatever GPU runs it) and loads it once per context.
func fillFunction() (*cuda.Function, error) {
	fillMu.Lock()
	defer fillMu.Unlock()
	if fillErr != nil {
		return nil, fillErr
	}
	ctx, err := cuda.CurrentContextKey()
	if err != nil {
		return nil, err
	}
	if f := fillFuncs[ctx]; f != nil {
		return f, nil
	}
	// PTX for the oldest architecture this NVRTC supports: the driver
	// compiles it for whatever GPU runs it.
	archs, err := nvrtc.SupportedArchs()
	if err != nil || len(archs) == 0 {
		fillErr = fmt.Errorf("NVRTC supported architectures: %v", err)
		return nil, fillErr
	}
	res, err := nvrtc.Compile(fillSource, "fill.cu", []string{fmt.Sprintf("--gpu-architecture=compute_%d", slices.Min(archs))})
	if err != nil {
		fillErr = err
		return nil, err
	}
	mod, err := cuda.LoadData(res.PTX)
	if err != nil {
		fillErr = err
		return nil, err
	}
	f, err := mod.Function("kr_fill")
	if err != nil {
		fillErr = err
		return nil, err
	}
	fillFuncs[ctx] = f
	return f, nil
}

// FillRandom fills n bytes at dst with random elements of dtype (see
// RandomPattern for the values), on the GPU with a hash of each element's
// index, so that no buffer is periodic. Where NVRTC is missing it falls
// back to copying a random host pattern over the buffer. It synchronizes
// s and must be called with the context current.
func FillRandom(dst cuda.DevicePtr, n int64, dtype string, seed uint64, s *cuda.Stream) error {
	k, ok := fillKinds[dtype]
	if !ok {
		return fmt.Errorf("no random data for dtype %q", dtype)
	}
	f, err := fillFunction()
	if err != nil {
		return fillFromHost(dst, n, dtype, seed, s)
	}
	elems := n / k.size
	if elems > 0 {
		grid := uint32(min((elems+255)/256, 8192))
		if err := f.Launch([3]uint32{grid, 1, 1}, [3]uint32{256, 1, 1}, 0, s, dst, uint64(elems), seed, k.kind); err != nil {
			return err
		}
	}
	if tail := n - elems*k.size; tail > 0 {
		if err := f.Launch([3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, s, dst.Add(int(elems*k.size)), uint64(tail), seed+1, int32(7)); err != nil {
			return err
		}
	}
	return s.Synchronize()
}

// fillFromHost copies a random host pattern over the buffer.
func fillFromHost(dst cuda.DevicePtr, n int64, dtype string, seed uint64, s *cuda.Stream) error {
	pat, err := RandomPattern(dtype, int(min(n, patternBytes)), seed)
	if err != nil {
		return err
	}
	host, err := cuda.HostAlloc(len(pat))
	if err != nil {
		return err
	}
	defer host.Free()
	copy(host.Bytes(), pat)
	for off := int64(0); off < n; off += int64(len(pat)) {
		c := min(int64(len(pat)), n-off)
		if err := cuda.MemcpyHtoDAsync(dst.Add(int(off)), host.Ptr(), int(c), s); err != nil {
			return err
		}
	}
	return s.Synchronize()
}
