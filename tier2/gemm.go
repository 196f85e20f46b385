package tier2

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/kreplay/kreplay/gpu"
	"github.com/kreplay/kreplay/internal/cublas"
	"github.com/kreplay/kreplay/internal/cublaslt"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// ErrNotGEMM is returned for signatures that are not tier-2 GEMMs.
var ErrNotGEMM = errors.New("not a tier-2 GEMM")

// API names the library call a GEMM replays with.
type API string

// The library calls PyTorch makes for GEMMs.
const (
	APIGemmEx               API = "cublasGemmEx"
	APIGemmStridedBatchedEx API = "cublasGemmStridedBatchedEx"
	APILtMatmulBias         API = "cublasLtMatmul+BIAS"
	// APILtMatmulFP8 is torch._scaled_mm with tensorwise or rowwise scales:
	// PyTorch's scaled_gemm (scaled.go, docs/pytorch-gemm.md section 7).
	APILtMatmulFP8 API = "cublasLtMatmul+FP8"
)

// PlanAPI says, without a GPU, which library call replays a GEMM signature's
// parameters.
func PlanAPI(g *signatures.GEMM) API {
	switch {
	case g.Scaled != nil:
		return APILtMatmulFP8
	case g.Bias:
		return APILtMatmulBias
	case g.Batch > 1:
		return APIGemmStridedBatchedEx
	}
	return APIGemmEx
}

// gemmSet is one buffer set of a GEMM.
type gemmSet struct{ a, b, c, bias cuda.DevicePtr }

// GEMM is a GEMM signature made launchable.
type GEMM struct {
	g                 signatures.GEMM
	api               API
	libs              *Libraries
	at, bt, ct        cublas.DataType
	ta, tb            cublas.Operation
	aBytes, bBytes    int64
	cBytes, biasBytes int64
	alpha, beta       float32
	sets              []gemmSet
	desc              *cublaslt.MatmulDesc
	la, lb, lc        *cublaslt.MatrixLayout
	pref              *cublaslt.MatmulPreference
	algo              cublaslt.MatmulAlgo
	ltWorkspaceNeeded uint64
	// An FP8 GEMM's D layout (C's is lc) and its scales: float32 device
	// scalars shared by the buffer sets, for cuBLAS's A and B and an FP8
	// output (scaled.go).
	ld                       *cublaslt.MatrixLayout
	scales                   cuda.DevicePtr
	scaleA, scaleB, scaleD   cuda.DevicePtr
	scaleAValue, scaleBValue float32
}

var _ launch.Kernel = (*GEMM)(nil)

func dataType(dtype string) (cublas.DataType, error) {
	switch dtype {
	case "f16":
		return cublas.R16F, nil
	case "bf16":
		return cublas.R16BF, nil
	case "f32":
		return cublas.R32F, nil
	case "f64":
		return cublas.R64F, nil
	case "f8e4m3":
		return cublas.R8FE4M3, nil
	case "f8e5m2":
		return cublas.R8FE5M2, nil
	}
	return 0, fmt.Errorf("dtype %q has no cuBLAS GEMM replay", dtype)
}

func operation(t string) (cublas.Operation, error) {
	switch t {
	case "N":
		return cublas.OpN, nil
	case "T":
		return cublas.OpT, nil
	}
	return 0, fmt.Errorf("transpose %q", t)
}

// API reports which library call replays the GEMM.
func (k *GEMM) API() API { return k.api }

// NewGEMM allocates a GEMM signature's operands (random data) and prepares
// its library call. It must run with the device's context current.
func NewGEMM(sig *signatures.Signature, libs *Libraries, opt gpu.Options, s *gpu.Stream) (k *GEMM, err error) {
	if sig.Class != signatures.ClassGEMM {
		return nil, fmt.Errorf("%s: %w", sig.ID, ErrNotGEMM)
	}
	if sig.Unreplayable != "" {
		return nil, errors.New(sig.Unreplayable)
	}
	if sig.GEMM == nil {
		return nil, fmt.Errorf("%s: GEMM signature without parameters", sig.ID)
	}
	g := *sig.GEMM
	k = &GEMM{g: g, libs: libs, alpha: float32(g.Alpha), beta: float32(g.Beta)}
	built := k
	defer func() {
		if err != nil {
			built.Close()
		}
	}()
	// cuBLAS's A is the op's B and cuBLAS's B is the op's A.
	if k.at, err = dataType(g.BType); err != nil {
		return nil, err
	}
	if k.bt, err = dataType(g.AType); err != nil {
		return nil, err
	}
	if k.ct, err = dataType(g.OutType); err != nil {
		return nil, err
	}
	if k.ta, err = operation(g.TransA); err != nil {
		return nil, err
	}
	if k.tb, err = operation(g.TransB); err != nil {
		return nil, err
	}
	// In cuBLAS's column-major terms: A is op(A) m x k, B is op(B) k x n,
	// C is m x n with m = n_op, n = m_op (the op's C^T = B^T A^T).
	m, n, kk := g.N, g.M, g.K
	colsA := kk
	if g.TransA == "T" {
		colsA = m
	}
	colsB := n
	if g.TransB == "T" {
		colsB = kk
	}
	span := func(ld, cols, stride, elem int64) int64 {
		return (ld*cols + stride*(g.Batch-1)) * elem
	}
	k.aBytes = span(g.LDA, colsA, g.StrideA, int64(k.at.Size()))
	k.bBytes = span(g.LDB, colsB, g.StrideB, int64(k.bt.Size()))
	k.cBytes = span(g.LDC, n, g.StrideC, int64(k.ct.Size()))
	k.api = PlanAPI(&g)
	if g.Bias {
		bt := k.ct
		if g.BiasType != "" {
			if bt, err = dataType(g.BiasType); err != nil {
				return nil, err
			}
		}
		k.biasBytes = m * int64(bt.Size())
	}
	if err = k.allocSets(opt, s); err != nil {
		return nil, err
	}
	switch k.api {
	case APILtMatmulBias:
		err = k.prepareLt(m, n, kk, colsA, colsB)
	case APILtMatmulFP8:
		err = k.prepareScaled(s)
	}
	if err != nil {
		return nil, err
	}
	return k, nil
}

// allocSets allocates opt.Sets buffer sets (at least one) of random data,
// within opt.FreeBytes.
func (k *GEMM) allocSets(opt launch.Options, s *cuda.Stream) error {
	g := k.g
	biasType := g.BiasType
	if biasType == "" {
		biasType = g.OutType
	}
	sets := max(opt.Sets, 1)
	if need := int64(sets) * k.Footprint(); opt.FreeBytes > 0 && need > opt.FreeBytes {
		return fmt.Errorf("needs %d bytes of device memory for %d buffer sets, %d available", need, sets, opt.FreeBytes)
	}
	for i := 0; i < sets; i++ {
		k.sets = append(k.sets, gemmSet{})
		cur := &k.sets[len(k.sets)-1]
		for _, buf := range []struct {
			p     *cuda.DevicePtr
			n     int64
			dtype string
		}{
			{&cur.a, k.aBytes, g.BType}, // cuBLAS's A is the op's B
			{&cur.b, k.bBytes, g.AType},
			{&cur.c, k.cBytes, g.OutType},
			{&cur.bias, k.biasBytes, biasType},
		} {
			if buf.n == 0 {
				continue
			}
			var err error
			if *buf.p, err = cuda.MemAlloc(int(buf.n)); err != nil {
				return err
			}
			if err = launch.FillRandom(*buf.p, buf.n, buf.dtype, opt.Seed+uint64(i*4)+uint64(len(buf.dtype)), s); err != nil {
				return err
			}
		}
	}
	return nil
}

// prepareLt builds the cuBLASLt descriptors PyTorch's gemm_and_bias builds:
// compute 32F, scale 32F, the BIAS epilogue, one layout shared by C and D,
// the workspace limit and 256-byte alignments, and the first heuristic.
func (k *GEMM) prepareLt(m, n, kk, colsA, colsB int64) (err error) {
	g := k.g
	if k.desc, err = cublaslt.NewMatmulDesc(cublas.Compute32F, cublas.R32F); err != nil {
		return err
	}
	if err = k.desc.SetTransA(k.ta); err != nil {
		return err
	}
	if err = k.desc.SetTransB(k.tb); err != nil {
		return err
	}
	if err = k.desc.SetEpilogue(cublaslt.EpilogueBias); err != nil {
		return err
	}
	if err = k.desc.SetBiasPointer(uintptr(k.sets[0].bias)); err != nil {
		return err
	}
	rowsA := m
	if g.TransA == "T" {
		rowsA = kk
	}
	rowsB := kk
	if g.TransB == "T" {
		rowsB = n
	}
	if k.la, err = cublaslt.NewMatrixLayout(k.at, uint64(rowsA), uint64(colsA), g.LDA); err != nil {
		return err
	}
	if k.lb, err = cublaslt.NewMatrixLayout(k.bt, uint64(rowsB), uint64(colsB), g.LDB); err != nil {
		return err
	}
	if k.lc, err = cublaslt.NewMatrixLayout(k.ct, uint64(m), uint64(n), g.LDC); err != nil {
		return err
	}
	if k.pref, err = cublaslt.NewMatmulPreference(); err != nil {
		return err
	}
	if err = k.pref.SetMaxWorkspaceBytes(uint64(k.libs.ltWSN)); err != nil {
		return err
	}
	for _, a := range []cublaslt.MatmulPreferenceAttribute{cublaslt.PrefMinAlignmentABytes,
		cublaslt.PrefMinAlignmentBBytes, cublaslt.PrefMinAlignmentCBytes, cublaslt.PrefMinAlignmentDBytes} {
		if err = k.pref.SetUint32(a, 256); err != nil {
			return err
		}
	}
	res, err := k.libs.lt.AlgoGetHeuristic(k.desc, k.la, k.lb, k.lc, k.lc, k.pref, 1)
	if err != nil {
		return err
	}
	if len(res) == 0 {
		return errors.New("cublasLtMatmulAlgoGetHeuristic found no algorithm")
	}
	k.algo, k.ltWorkspaceNeeded = res[0].Algo, res[0].WorkspaceSize
	return nil
}

// Launch enqueues the library call on s using buffer set set.
func (k *GEMM) Launch(s *gpu.Stream, set int) error {
	b := k.sets[set]
	g := k.g
	alpha, beta := k.alpha, k.beta
	pa, pb := unsafe.Pointer(&alpha), unsafe.Pointer(&beta)
	switch k.api {
	case APILtMatmulBias:
		if err := k.desc.SetBiasPointer(uintptr(b.bias)); err != nil {
			return err
		}
		var zero float32
		return k.libs.lt.Matmul(k.desc, pa, uintptr(b.a), k.la, uintptr(b.b), k.lb,
			unsafe.Pointer(&zero), uintptr(b.c), k.lc, uintptr(b.c), k.lc,
			&k.algo, uintptr(k.libs.ltWS), uint64(k.libs.ltWSN), s.Handle())
	case APILtMatmulFP8:
		return k.launchScaled(s, b)
	case APIGemmStridedBatchedEx:
		return k.libs.blas.GemmStridedBatchedEx(k.ta, k.tb, int(g.N), int(g.M), int(g.K),
			pa, uintptr(b.a), k.at, int(g.LDA), g.StrideA,
			uintptr(b.b), k.bt, int(g.LDB), g.StrideB,
			pb, uintptr(b.c), k.ct, int(g.LDC), g.StrideC,
			int(g.Batch), cublas.Compute32F, cublas.GemmDefaultTensorOp)
	default:
		return k.libs.blas.GemmEx(k.ta, k.tb, int(g.N), int(g.M), int(g.K),
			pa, uintptr(b.a), k.at, int(g.LDA),
			uintptr(b.b), k.bt, int(g.LDB),
			pb, uintptr(b.c), k.ct, int(g.LDC),
			cublas.Compute32F, cublas.GemmDefaultTensorOp)
	}
}

// Sets returns the number of buffer sets.
func (k *GEMM) Sets() int { return len(k.sets) }

// Footprint is the operands' device memory for one buffer set (an FP8
// GEMM's scales, shared by the sets, left out).
func (k *GEMM) Footprint() int64 { return k.aBytes + k.bBytes + k.cBytes + k.biasBytes }

// Work counts 2mnk FLOPs per batch and the operands' bytes.
func (k *GEMM) Work() gpu.Work {
	w := launch.Work{FLOPs: 2 * k.g.M * k.g.N * k.g.K * k.g.Batch, Bytes: k.Footprint()}
	if k.beta != 0 && k.api != APILtMatmulBias && k.api != APILtMatmulFP8 {
		w.Bytes += k.cBytes // C is read as well as written
	}
	return w
}

// Capturable is true: cuBLAS calls with a set workspace can be captured.
func (k *GEMM) Capturable() bool { return true }

// Close frees the operands and descriptors.
func (k *GEMM) Close() error {
	var errs []error
	for _, b := range k.sets {
		for _, p := range []cuda.DevicePtr{b.a, b.b, b.c, b.bias} {
			if p != 0 {
				errs = append(errs, p.Free())
			}
		}
	}
	k.sets = nil
	if k.desc != nil {
		errs = append(errs, k.desc.Destroy())
	}
	if k.scales != 0 {
		errs = append(errs, k.scales.Free())
		k.scales = 0
	}
	for _, l := range []*cublaslt.MatrixLayout{k.la, k.lb, k.lc, k.ld} {
		if l != nil {
			errs = append(errs, l.Destroy())
		}
	}
	if k.pref != nil {
		errs = append(errs, k.pref.Destroy())
	}
	return errors.Join(errs...)
}
