package roofline

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"unsafe"

	"github.com/kreplay/kreplay/internal/cublas"
	"github.com/kreplay/kreplay/internal/cublaslt"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/replay"
)

// workspace is the cuBLAS and cuBLASLt workspace, PyTorch's on Hopper
// (tier2.DefaultWorkspace).
const workspace = 32 << 20

// gemms holds the library handles the GEMM peaks run with, bound to the
// device's stream; the device times them. Use it inside Device.Do.
type gemms struct {
	d    *replay.Device
	s    *cuda.Stream
	blas *cublas.Handle
	lt   *cublaslt.Handle
	ws   cuda.DevicePtr
}

// openGEMMs creates a cuBLAS handle in the state PyTorch sets (the
// stream, a workspace, CUBLAS_DEFAULT_MATH: TF32 off) and a cuBLASLt
// handle, on d's stream.
func openGEMMs(d *replay.Device) (g *gemms, err error) {
	s := d.Stream()
	g = &gemms{d: d, s: s}
	defer func() {
		if err != nil {
			g.close()
		}
	}()
	if g.blas, err = cublas.Create(); err != nil {
		return nil, err
	}
	if err = g.blas.SetStream(s.Handle()); err != nil {
		return nil, err
	}
	if g.ws, err = cuda.MemAlloc(workspace); err != nil {
		return nil, err
	}
	if err = g.blas.SetWorkspace(uintptr(g.ws), workspace); err != nil {
		return nil, err
	}
	if err = g.blas.SetMathMode(cublas.DefaultMath); err != nil {
		return nil, err
	}
	if g.lt, err = cublaslt.Create(); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *gemms) close() error {
	var errs []error
	if g.blas != nil {
		errs = append(errs, g.blas.Destroy())
	}
	if g.lt != nil {
		errs = append(errs, g.lt.Destroy())
	}
	if g.ws != 0 {
		errs = append(errs, g.ws.Free())
	}
	return errors.Join(errs...)
}

// gemmTypes are the operand and output types of each dtype's GEMM.
var gemmTypes = map[string]struct{ in, out cublas.DataType }{
	"f16":    {cublas.R16F, cublas.R16F},
	"bf16":   {cublas.R16BF, cublas.R16BF},
	"f32":    {cublas.R32F, cublas.R32F},
	"f8e4m3": {cublas.R8FE4M3, cublas.R16BF},
}

// measure times an n x n x n GEMM of dtype, "TN" (A transposed, as
// nn.Linear's weight is and as FP8 needs), with random operands.
func (g *gemms) measure(dtype string, n int, o MeasureOptions) (Run, error) {
	ty, ok := gemmTypes[dtype]
	if !ok {
		return Run{}, unsupported{fmt.Errorf("no GEMM peak for dtype %q", dtype)}
	}
	inBytes, outBytes := int64(n)*int64(n)*int64(ty.in.Size()), int64(n)*int64(n)*int64(ty.out.Size())
	var bufs []cuda.DevicePtr
	defer func() {
		for _, p := range bufs {
			p.Free()
		}
	}()
	alloc := func(size int64) (cuda.DevicePtr, error) {
		p, err := cuda.MemAlloc(int(size))
		if err == nil {
			bufs = append(bufs, p)
		}
		return p, err
	}
	var ab [2]cuda.DevicePtr
	for i := range ab {
		p, err := alloc(inBytes)
		if err != nil {
			return Run{}, err
		}
		if err := fill(p, inBytes, dtype, uint64(i+1), g.s); err != nil {
			return Run{}, err
		}
		ab[i] = p
	}
	c, err := alloc(outBytes)
	if err != nil {
		return Run{}, err
	}
	if err := cuda.MemsetD8Async(c, 0, int(outBytes), g.s); err != nil {
		return Run{}, err
	}
	var op func() error
	var call string
	if dtype == "f8e4m3" {
		one, err := alloc(256)
		if err != nil {
			return Run{}, err
		}
		if err := cuda.MemsetD32Async(one, 0x3f800000, 64, g.s); err != nil {
			return Run{}, err
		}
		lt, err := g.ltMatmul(ty.in, ty.out, n, ab[0], ab[1], c, one)
		if err != nil {
			return Run{}, err
		}
		defer lt.close()
		op, call = lt.run, fmt.Sprintf("cublasLtMatmul TN %d^3, %s x %s -> %s, compute 32F, scales 1", n, ty.in, ty.in, ty.out)
	} else {
		alpha, beta := float32(1), float32(0)
		// CUBLAS_GEMM_DEFAULT_TENSOR_OP, as PyTorch passes, for f16 and
		// bf16; plain CUBLAS_GEMM_DEFAULT for f32, since the tensor-op
		// value also allows 32F_FAST_16F kernels, which are not FP32.
		algo := cublas.GemmDefaultTensorOp
		if dtype == "f32" {
			algo = cublas.GemmDefault
		}
		op = func() error {
			return g.blas.GemmEx(cublas.OpT, cublas.OpN, n, n, n, unsafe.Pointer(&alpha), uintptr(ab[0]), ty.in, n,
				uintptr(ab[1]), ty.in, n, unsafe.Pointer(&beta), uintptr(c), ty.out, n, cublas.Compute32F, algo)
		}
		call = fmt.Sprintf("cublasGemmEx TN %d^3, %s -> %s, compute 32F, CUBLAS_DEFAULT_MATH, algo %d", n, ty.in, ty.out, algo)
	}
	best, median, err := g.d.TimeRepeats(o.Warmup, o.Repeats, op)
	if err != nil {
		return Run{}, err
	}
	flops := 2 * float64(n) * float64(n) * float64(n)
	return Run{Peak: dtype, Call: call, Repeats: o.Repeats, BestNS: best, MedianNS: median, Rate: flops / best / 1e3}, nil
}

// fill fills n bytes at p with random elements of dtype in [-1, 1).
func fill(p cuda.DevicePtr, n int64, dtype string, seed uint64, s *cuda.Stream) error {
	if dtype != "f8e4m3" {
		return launch.FillRandom(p, n, dtype, seed, s)
	}
	// e4m3 (bias 7): a sign, an exponent field of 0 to 6 (magnitudes
	// under 1, never NaN) and a random mantissa, copied over the buffer
	// from a pinned 1 MiB pattern.
	const patN = 1 << 20
	host, err := cuda.HostAlloc(patN)
	if err != nil {
		return err
	}
	defer host.Free()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := host.Bytes()
	for i := range b {
		b[i] = byte(r.IntN(2)<<7 | r.IntN(7)<<3 | r.IntN(8))
	}
	for off := int64(0); off < n; off += patN {
		if err := cuda.MemcpyHtoDAsync(p.Add(int(off)), host.Ptr(), int(min(patN, n-off)), s); err != nil {
			return err
		}
	}
	return s.Synchronize()
}

// ltGEMM is a cuBLASLt matmul ready to run.
type ltGEMM struct {
	g          *gemms
	desc       *cublaslt.MatmulDesc
	la, lb, lc *cublaslt.MatrixLayout
	pref       *cublaslt.MatmulPreference
	algo       cublaslt.MatmulAlgo
	a, b, c    cuda.DevicePtr
}

// ltMatmul prepares D = A^T B in cuBLASLt, n on each side, with the
// per-tensor scales of A and B at the device float scale (as
// torch._scaled_mm passes them) and the first heuristic's algorithm. No
// algorithm, or a status that says the types are not supported, is
// unsupported.
func (g *gemms) ltMatmul(in, out cublas.DataType, n int, a, b, c, scale cuda.DevicePtr) (_ *ltGEMM, err error) {
	l := &ltGEMM{g: g, a: a, b: b, c: c}
	defer func() {
		if err != nil {
			l.close()
			var ce *cublas.Error
			if errors.As(err, &ce) && (ce.Status == cublas.StatusNotSupported || ce.Status == cublas.StatusArchMismatch) {
				err = unsupported{err}
			}
		}
	}()
	if l.desc, err = cublaslt.NewMatmulDesc(cublas.Compute32F, cublas.R32F); err != nil {
		return nil, err
	}
	for _, set := range []func() error{
		func() error { return l.desc.SetTransA(cublas.OpT) },
		func() error { return l.desc.SetTransB(cublas.OpN) },
		func() error { return l.desc.SetPointer(cublaslt.DescAScalePointer, uintptr(scale)) },
		func() error { return l.desc.SetPointer(cublaslt.DescBScalePointer, uintptr(scale)) },
	} {
		if err = set(); err != nil {
			return nil, err
		}
	}
	if l.la, err = cublaslt.NewMatrixLayout(in, uint64(n), uint64(n), int64(n)); err != nil {
		return nil, err
	}
	if l.lb, err = cublaslt.NewMatrixLayout(in, uint64(n), uint64(n), int64(n)); err != nil {
		return nil, err
	}
	if l.lc, err = cublaslt.NewMatrixLayout(out, uint64(n), uint64(n), int64(n)); err != nil {
		return nil, err
	}
	if l.pref, err = cublaslt.NewMatmulPreference(); err != nil {
		return nil, err
	}
	if err = l.pref.SetMaxWorkspaceBytes(workspace); err != nil {
		return nil, err
	}
	res, err := g.lt.AlgoGetHeuristic(l.desc, l.la, l.lb, l.lc, l.lc, l.pref, 1)
	if err != nil {
		return nil, err
	}
	if len(res) == 0 {
		return nil, unsupported{fmt.Errorf("cublasLtMatmulAlgoGetHeuristic found no algorithm for %s x %s -> %s", in, in, out)}
	}
	l.algo = res[0].Algo
	return l, nil
}

func (l *ltGEMM) run() error {
	alpha, beta := float32(1), float32(0)
	return l.g.lt.Matmul(l.desc, unsafe.Pointer(&alpha), uintptr(l.a), l.la, uintptr(l.b), l.lb,
		unsafe.Pointer(&beta), uintptr(l.c), l.lc, uintptr(l.c), l.lc, &l.algo, uintptr(l.g.ws), workspace, l.g.s.Handle())
}

func (l *ltGEMM) close() {
	if l.desc != nil {
		l.desc.Destroy()
	}
	for _, x := range []*cublaslt.MatrixLayout{l.la, l.lb, l.lc} {
		if x != nil {
			x.Destroy()
		}
	}
	if l.pref != nil {
		l.pref.Destroy()
	}
}
