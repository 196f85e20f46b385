package tier2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/kreplay/kreplay/internal/cublas"
	"github.com/kreplay/kreplay/internal/cublaslt"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// FP8 GEMMs (aten::_scaled_mm with tensorwise or rowwise scales),
// replayed with the cuBLASLt call PyTorch 2.11's at::cuda::blas::scaled_gemm
// makes on sm_90 (docs/pytorch-gemm.md, section 7): a descriptor of compute
// type 32F and scale type 32F with the transposes, device float32 scales
// for each operand (cuBLAS's A is the op's B, so it takes scale_b): one
// value in the scalar scale mode for tensorwise scales, one per row of the
// op's A and per column of its B in the outer-vector mode for rowwise ones
// (cuBLASLt 12.9 or later; with an older one PyTorch runs CUTLASS's
// f8f8bf16_rowwise instead, which a plain trace cannot replay), FAST_ACCUM
// as the op asked, the BIAS epilogue with the
// bias's data type where the op has a bias; layouts of the operands' FP8
// type, C of the bias's type (the output's where there is no bias, half
// for an FP8 output) and D of the output's, both m x n; a preference
// holding only the workspace limit (no alignment hints, unlike
// addmm's); the first heuristic result; alpha 1 and beta 0 on the host,
// and a C pointer that is not D's (cuBLAS 13 requires C == D to have one
// layout; PyTorch passes the first operand's pointer, never read as beta
// is 0).

// ltLayout is a cublasLtMatrixLayoutCreate's arguments.
type ltLayout struct {
	t          cublas.DataType
	rows, cols uint64
	ld         int64
}

// ltScaledCall is the cuBLASLt call of an FP8 GEMM, in cuBLAS's
// column-major terms.
type ltScaledCall struct {
	compute        cublas.ComputeType
	scale          cublas.DataType
	transA, transB cublas.Operation
	a, b, c, d     ltLayout
	bias           bool
	biasType       cublas.DataType
	dScale         bool // D_SCALE_POINTER: the op's scale_result, for an FP8 output
	fastAccum      bool
	rowwise        bool // outer-vector scales (scaleLens)
}

// scaledCall derives the cuBLASLt call PyTorch makes for FP8 GEMM g.
func scaledCall(g *signatures.GEMM) (*ltScaledCall, error) {
	sc := g.Scaled
	if sc == nil {
		return nil, errors.New("not a scaled GEMM")
	}
	rowwise := sc.Scaling == signatures.ScalingRowwise
	if (sc.Scaling != signatures.ScalingTensorwise && !rowwise) || sc.ScaleAType != "f32" || sc.ScaleBType != "f32" {
		return nil, fmt.Errorf("%s scaling with %s and %s scales: kreplay replays tensorwise and rowwise float32 scales only",
			sc.Scaling, sc.ScaleAType, sc.ScaleBType)
	}
	if g.Batch != 1 {
		return nil, fmt.Errorf("scaled GEMM of batch %d", g.Batch)
	}
	c := &ltScaledCall{compute: cublas.Compute32F, scale: cublas.R32F, bias: g.Bias, fastAccum: sc.FastAccum, rowwise: rowwise}
	var err error
	// cuBLAS's A is the op's B, its B the op's A.
	if c.a.t, err = dataType(g.BType); err != nil {
		return nil, err
	}
	if c.b.t, err = dataType(g.AType); err != nil {
		return nil, err
	}
	if c.d.t, err = dataType(g.OutType); err != nil {
		return nil, err
	}
	if c.transA, err = operation(g.TransA); err != nil {
		return nil, err
	}
	if c.transB, err = operation(g.TransB); err != nil {
		return nil, err
	}
	m, n, k := uint64(g.N), uint64(g.M), uint64(g.K)
	c.a.rows, c.a.cols, c.a.ld = m, k, g.LDA
	if c.transA == cublas.OpT {
		c.a.rows, c.a.cols = k, m
	}
	c.b.rows, c.b.cols, c.b.ld = k, n, g.LDB
	if c.transB == cublas.OpT {
		c.b.rows, c.b.cols = n, k
	}
	c.d.rows, c.d.cols, c.d.ld = m, n, g.LDC
	fp8Out := c.d.t == cublas.R8FE4M3 || c.d.t == cublas.R8FE5M2
	// C's type is the bias type PyTorch passes: the bias's, else the
	// output's, half for an FP8 output.
	c.c = c.d
	switch {
	case g.Bias:
		if c.biasType, err = dataType(g.BiasType); err != nil {
			return nil, err
		}
		c.c.t = c.biasType
	case fp8Out:
		c.c.t = cublas.R16F
	}
	c.dScale = fp8Out && sc.ResultScale
	if rowwise && fp8Out {
		return nil, fmt.Errorf("rowwise scales with an %s output: cuBLASLt's outer-vector mode has no D scale, and PyTorch takes bf16 or f16 outputs only", g.OutType)
	}
	return c, nil
}

// scaleLens is the number of float32 values in cuBLAS's A and B scales:
// one each for tensorwise scales; for rowwise ones, A's (the op's
// scale_b, [1,N]) holds one per row of cuBLAS's m x n output and B's (the
// op's scale_a, [M,1]) one per column.
func (c *ltScaledCall) scaleLens() (a, b uint64) {
	if !c.rowwise {
		return 1, 1
	}
	return c.d.rows, c.d.cols
}

// scaleModeVersion is the first cuBLASLt with the A/B_SCALE_MODE
// attributes (12.8.0); PyTorch built against it sets them, to the scalar
// mode for tensorwise scales (the default, so older libraries do the same).
// outerVecVersion is the first with the outer-vector mode (12.9.0), below
// which PyTorch runs rowwise scales on CUTLASS.
const (
	scaleModeVersion = 120800
	outerVecVersion  = 120900
)

// scaleAlign is the alignment of each scale in their allocation.
// PyTorch's scales are tensors of their own, each at the start of an
// allocator block. With the scales packed 4 bytes apart cublasLtMatmul
// returns CUBLAS_STATUS_NOT_SUPPORTED (cuBLASLt 13.1 on Hopper), while an
// FP8 GEMM with one scale pointer for both runs; the misaligned scale
// pointer is the likely cause (inferred, not documented).
const scaleAlign = 256

// scaleSpan is the bytes n float32 scales take, rounded up to scaleAlign.
func scaleSpan(n uint64) uint64 { return (4*n + scaleAlign - 1) / scaleAlign * scaleAlign }

// fp8RMS is the root mean square of an FP8 dtype's values over its finite
// codes, as the random fill draws them.
func fp8RMS(dtype string) float64 {
	var s float64
	for c := 0; c < 256; c++ {
		v := float64(launch.FP8ToF32(dtype, launch.FiniteFP8(dtype, byte(c))))
		s += v * v
	}
	return math.Sqrt(s / 256)
}

// prepareScaled builds an FP8 GEMM's descriptors (scaledCall), writes its
// scales (writeScales) and asks for the first heuristic result.
func (k *GEMM) prepareScaled(s *cuda.Stream) (err error) {
	c, err := scaledCall(&k.g)
	if err != nil {
		return err
	}
	if err = k.writeScales(c, s); err != nil {
		return err
	}
	if k.desc, err = cublaslt.NewMatmulDesc(c.compute, c.scale); err != nil {
		return err
	}
	if err = k.setScaledAttributes(c); err != nil {
		return err
	}
	for _, l := range []struct {
		dst **cublaslt.MatrixLayout
		l   ltLayout
	}{{&k.la, c.a}, {&k.lb, c.b}, {&k.lc, c.c}, {&k.ld, c.d}} {
		if *l.dst, err = cublaslt.NewMatrixLayout(l.l.t, l.l.rows, l.l.cols, l.l.ld); err != nil {
			return err
		}
	}
	if k.pref, err = cublaslt.NewMatmulPreference(); err != nil {
		return err
	}
	if err = k.pref.SetMaxWorkspaceBytes(uint64(k.libs.ltWSN)); err != nil {
		return err
	}
	res, err := k.libs.lt.AlgoGetHeuristic(k.desc, k.la, k.lb, k.lc, k.ld, k.pref, 1)
	if err != nil {
		return err
	}
	if len(res) == 0 {
		return errors.New("cublasLtMatmulAlgoGetHeuristic found no algorithm for the FP8 GEMM")
	}
	k.algo, k.ltWorkspaceNeeded = res[0].Algo, res[0].WorkspaceSize
	return nil
}

// writeScales allocates cuBLAS's A, B and D scales (scaleLens values
// each, D one) and fills them about 1 / (their operand's RMS * k^(1/4)),
// which makes the products of the random operands about 1 (so that a half
// or FP8 output does not overflow); D's is 1. Rowwise vectors vary by up
// to 7/8 along their length (scaleRamp), so that a test can tell which
// scale multiplied which row or column.
func (k *GEMM) writeScales(c *ltScaledCall, s *cuda.Stream) (err error) {
	na, nb := c.scaleLens()
	offB := scaleSpan(na)
	offD := offB + scaleSpan(nb)
	size := offD + scaleSpan(1)
	if k.scales, err = cuda.MemAlloc(int(size)); err != nil {
		return err
	}
	k.scaleA, k.scaleB, k.scaleD = k.scales, k.scales.Add(int(offB)), k.scales.Add(int(offD))
	q := math.Pow(float64(k.g.K), 0.25)
	k.scaleAValue = float32(1 / (fp8RMS(k.g.BType) * q)) // cuBLAS's A is the op's B
	k.scaleBValue = float32(1 / (fp8RMS(k.g.AType) * q))
	host := make([]byte, size)
	fill := func(off, n uint64, v float32) {
		for i := uint64(0); i < n; i++ {
			binary.LittleEndian.PutUint32(host[off+4*i:], math.Float32bits(v*scaleRamp(i, n)))
		}
	}
	fill(0, na, k.scaleAValue)
	fill(offB, nb, k.scaleBValue)
	fill(offD, 1, 1)
	return cuda.CopyHtoD(k.scales, host, s)
}

// scaleRamp is the factor of element i of a scale vector of n: 1 for a
// single scale, else 1 + (i mod 8)/8.
func scaleRamp(i, n uint64) float32 {
	if n == 1 {
		return 1
	}
	return 1 + float32(i%8)/8
}

// setScaledAttributes sets the descriptor attributes PyTorch's
// scaled_gemm sets, in its order; the bias pointer is set at each launch.
func (k *GEMM) setScaledAttributes(c *ltScaledCall) error {
	d := k.desc
	set := []error{
		d.SetTransA(c.transA), d.SetTransB(c.transB),
		d.SetAScalePointer(uintptr(k.scaleA)), d.SetBScalePointer(uintptr(k.scaleB)),
	}
	if c.dScale {
		set = append(set, d.SetDScalePointer(uintptr(k.scaleD)))
	}
	set = append(set, d.SetFastAccum(c.fastAccum))
	if c.bias {
		set = append(set, d.SetBiasPointer(uintptr(k.sets[0].bias)), d.SetEpilogue(cublaslt.EpilogueBias), d.SetBiasDataType(c.biasType))
	}
	v, err := cublaslt.GetVersion()
	switch {
	case err != nil:
		return err
	case c.rowwise && v < outerVecVersion:
		return fmt.Errorf("rowwise FP8 scales need cuBLASLt %d or later for the outer-vector mode, this one is %d; "+
			"PyTorch with it runs CUTLASS's f8f8bf16_rowwise, which only a bundle with the captured kernel replays", outerVecVersion, v)
	case c.rowwise:
		set = append(set, d.SetScaleModes(cublaslt.ScaleOuterVec32F, cublaslt.ScaleOuterVec32F))
	case v >= scaleModeVersion:
		set = append(set, d.SetScaleModes(cublaslt.ScaleScalar32F, cublaslt.ScaleScalar32F))
	}
	return errors.Join(set...)
}

// launchScaled enqueues an FP8 GEMM on buffer set b.
func (k *GEMM) launchScaled(s *cuda.Stream, b gemmSet) error {
	if b.bias != 0 {
		if err := k.desc.SetBiasPointer(uintptr(b.bias)); err != nil {
			return err
		}
	}
	alpha, beta := float32(1), float32(0)
	return k.libs.lt.Matmul(k.desc, unsafe.Pointer(&alpha), uintptr(b.a), k.la, uintptr(b.b), k.lb,
		unsafe.Pointer(&beta), uintptr(b.a), k.lc, uintptr(b.c), k.ld,
		&k.algo, uintptr(k.libs.ltWS), uint64(k.libs.ltWSN), s.Handle())
}
