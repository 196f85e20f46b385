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

// FP8 GEMMs (aten::_scaled_mm with tensorwise scales), replayed with the
// cuBLASLt call PyTorch 2.11's at::cuda::blas::scaled_gemm makes on sm_90
// (docs/pytorch-gemm.md, section 7): a descriptor of compute type 32F and
// scale type 32F with the transposes, a device float32 scale for each
// operand (cuBLAS's A is the op's B, so it takes scale_b), the scalar
// scale mode, FAST_ACCUM as the op asked, the BIAS epilogue with the
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
}

// scaledCall derives the cuBLASLt call PyTorch makes for FP8 GEMM g.
func scaledCall(g *signatures.GEMM) (*ltScaledCall, error) {
	sc := g.Scaled
	if sc == nil {
		return nil, errors.New("not a scaled GEMM")
	}
	if sc.Scaling != signatures.ScalingTensorwise || sc.ScaleAType != "f32" || sc.ScaleBType != "f32" {
		return nil, fmt.Errorf("%s scaling with %s and %s scales: kreplay replays tensorwise float32 scales only",
			sc.Scaling, sc.ScaleAType, sc.ScaleBType)
	}
	if g.Batch != 1 {
		return nil, fmt.Errorf("scaled GEMM of batch %d", g.Batch)
	}
	c := &ltScaledCall{compute: cublas.Compute32F, scale: cublas.R32F, bias: g.Bias, fastAccum: sc.FastAccum}
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
	return c, nil
}

// scaleModeVersion is the first cuBLASLt with the A/B_SCALE_MODE
// attributes (12.8.0); PyTorch built against it sets them, to the scalar
// mode for tensorwise scales (the default, so older libraries do the same).
const scaleModeVersion = 120800

// scaleStride is the distance between the scales in their allocation.
// PyTorch's scales are tensors of their own, each at the start of an
// allocator block; with the three packed 4 bytes apart (an earlier
// version), every cublasLtMatmul of the GPU test returned
// CUBLAS_STATUS_NOT_SUPPORTED on the H100 (cuBLASLt 13.1), as did a C
// probe with the B scale 4 bytes after the A scale, while the roofline's
// FP8 GEMM with one scale pointer for both ran. The misaligned scale
// pointer is the likely cause (an inference from those runs).
const scaleStride = 256

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
// scales and asks for the first heuristic result. The scales make the
// products of the random operands about 1 (so that a half or FP8 output
// does not overflow): each is 1 / (its operand's RMS * k^(1/4)).
func (k *GEMM) prepareScaled(s *cuda.Stream) (err error) {
	c, err := scaledCall(&k.g)
	if err != nil {
		return err
	}
	if k.scales, err = cuda.MemAlloc(3 * scaleStride); err != nil {
		return err
	}
	k.scaleA, k.scaleB, k.scaleD = k.scales, k.scales.Add(scaleStride), k.scales.Add(2*scaleStride)
	q := math.Pow(float64(k.g.K), 0.25)
	k.scaleAValue = float32(1 / (fp8RMS(k.g.BType) * q)) // cuBLAS's A is the op's B
	k.scaleBValue = float32(1 / (fp8RMS(k.g.AType) * q))
	host := make([]byte, 3*scaleStride)
	binary.LittleEndian.PutUint32(host[0:], math.Float32bits(k.scaleAValue))
	binary.LittleEndian.PutUint32(host[scaleStride:], math.Float32bits(k.scaleBValue))
	binary.LittleEndian.PutUint32(host[2*scaleStride:], math.Float32bits(1))
	if err = cuda.CopyHtoD(k.scales, host, s); err != nil {
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
	if v, err := cublaslt.GetVersion(); err != nil {
		return err
	} else if v >= scaleModeVersion {
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
