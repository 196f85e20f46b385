package replay

import (
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/tier3"
)

// cleanKernel is the kernel of the clean flush; its activities are not a
// signature's.
const cleanKernel = "kr_l2_clean"

// cleanSource reads a buffer through the L2 (ld.global.cg) and writes
// nothing unless the bytes' XOR is a value they never take.
const cleanSource = `
extern "C" __global__ void kr_l2_clean(const uint4* __restrict__ p, unsigned long long n, unsigned int* sink) {
	unsigned int acc = 0;
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x) {
		uint4 v = __ldcg(p + i);
		acc ^= v.x ^ v.y ^ v.z ^ v.w;
	}
	if (acc == 0x9e3779b9u) *sink = acc;
}
`

// cleanL2 evicts the L2 and leaves it clean: it reads a zeroed buffer
// twice the L2's size, so that the dirty lines of earlier launches are
// written back now rather than while the next kernel runs. The captured
// binaries' samples start so: their producer then leaves its own output
// dirty in the L2, as in the real run. (The memset flush of flushL2
// leaves the L2 full of dirty lines: a weight-streaming GEMV after it
// runs well slower than traced, its weight reads sharing the memory bus
// with the flush's write-backs; see results/h100/capture/README.md.)
// Call inside Do.
func (d *Device) cleanL2() error {
	if err := d.setupClean(); err != nil {
		return err
	}
	blocks := uint32(max(d.SMs, 1) * 4)
	return d.cleanFn.Launch([3]uint32{blocks, 1, 1}, [3]uint32{512, 1, 1}, 0, d.stream,
		d.cleanBuf, uint64(d.cleanN/16), d.cleanBuf.Add(d.cleanN))
}

// setupClean compiles the clean flush's kernel and zeroes its buffer, once
// per device: before a measurement's activities are recorded, since the
// zeroing memset is none of a signature's. (Done inside the first
// measurement, it left CUPTI one activity more than the invocations, and
// that signature fell back to event time, its producer included.)
func (d *Device) setupClean() error {
	if d.cleanFn != nil {
		return nil
	}
	comp, err := d.compiler()
	if err != nil {
		return err
	}
	fn, err := comp.Function(tier3.Source{Name: "kr_l2_clean.cu", Code: cleanSource}, cleanKernel)
	if err != nil {
		return err
	}
	n := int(2 * max(d.L2Bytes, 1<<20))
	buf, err := cuda.MemAlloc(n + 16)
	if err != nil {
		return err
	}
	if err := cuda.MemsetD8Async(buf, 0, n+16, d.stream); err != nil {
		buf.Free()
		return err
	}
	if err := d.stream.Synchronize(); err != nil {
		buf.Free()
		return err
	}
	d.cleanFn, d.cleanBuf, d.cleanN = fn, buf, n
	return nil
}
