package cublaslt

/*
#include "cublaslt_shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/kreplay/kreplay/internal/cublas"
)

// MatmulAlgo is a cublasLtMatmulAlgo_t, the 64-byte semi-opaque
// algorithm descriptor (uint64_t data[8] in cublasLt.h). It can be saved
// and reused with the same library version.
type MatmulAlgo struct {
	Data [8]uint64
}

// HeuristicResult is one entry of cublasLtMatmulHeuristicResult_t
// (cublasLt.h: algo at offset 0, size_t workspaceSize at 64,
// cublasStatus_t state at 72, float wavesCount at 76, int reserved[4] at
// 80; 96 bytes).
type HeuristicResult struct {
	Algo          MatmulAlgo
	WorkspaceSize uint64        // workspace bytes the algorithm needs
	State         cublas.Status // the other fields are valid only if StatusSuccess
	WavesCount    float32       // 1.0 means the kernel fills the GPU once
}

// AlgoGetHeuristic asks cuBLASLt for up to requested algorithms for the
// operation, best first (cublasLtMatmulAlgoGetHeuristic). An empty result
// is returned as an error with CUBLAS_STATUS_NOT_SUPPORTED by the library.
func (h *Handle) AlgoGetHeuristic(desc *MatmulDesc, a, b, c, d *MatrixLayout,
	pref *MatmulPreference, requested int) ([]HeuristicResult, error) {
	const fn = "cublasLtMatmulAlgoGetHeuristic"
	if h == nil || h.h == nil || desc == nil || desc.d == nil || pref == nil || pref.p == nil ||
		a == nil || a.l == nil || b == nil || b.l == nil || c == nil || c.l == nil || d == nil || d.l == nil {
		return nil, nilErr(fn)
	}
	if requested < 1 || requested > 1<<16 {
		return nil, fmt.Errorf("%s: requested algorithm count %d out of range", fn, requested)
	}
	res := make([]C.kr_ltHeuristicResult_t, requested)
	var n C.int
	if err := check(fn, C.kr_ltMatmulAlgoGetHeuristic(h.h, desc.d, a.l, b.l, c.l, d.l, pref.p,
		C.int(requested), &res[0], &n)); err != nil {
		return nil, err
	}
	if int(n) < 0 || int(n) > requested {
		return nil, fmt.Errorf("%s: returned %d results for %d requested", fn, int(n), requested)
	}
	out := make([]HeuristicResult, int(n))
	for i := range out {
		r := &res[i]
		for j := range out[i].Algo.Data {
			out[i].Algo.Data[j] = uint64(r.algo.data[j])
		}
		out[i].WorkspaceSize = uint64(r.workspaceSize)
		out[i].State = cublas.Status(r.state)
		out[i].WavesCount = float32(r.wavesCount)
	}
	return out, nil
}

// Matmul computes D = alpha*op(A)*op(B) + beta*C (plus the descriptor's
// epilogue) on stream (cublasLtMatmul). a, b, c, d and workspace are
// device pointers; alpha and beta point to host scalars of the
// descriptor's scale type (default pointer mode) and need only be valid
// during the call. algo may be nil to let the library choose; workspace
// may be 0 with workspaceBytes 0. c and d may be the same pointer (in
// place) when their layouts match.
func (h *Handle) Matmul(desc *MatmulDesc, alpha unsafe.Pointer,
	a uintptr, aDesc *MatrixLayout, b uintptr, bDesc *MatrixLayout,
	beta unsafe.Pointer, c uintptr, cDesc *MatrixLayout, d uintptr, dDesc *MatrixLayout,
	algo *MatmulAlgo, workspace uintptr, workspaceBytes uint64, stream unsafe.Pointer) error {
	const fn = "cublasLtMatmul"
	if h == nil || h.h == nil || desc == nil || desc.d == nil ||
		aDesc == nil || aDesc.l == nil || bDesc == nil || bDesc.l == nil ||
		cDesc == nil || cDesc.l == nil || dDesc == nil || dDesc.l == nil {
		return nilErr(fn)
	}
	if alpha == nil || beta == nil {
		return fmt.Errorf("%s: alpha and beta must be non-nil", fn)
	}
	var cAlgo *C.kr_ltMatmulAlgo_t
	if algo != nil {
		cAlgo = (*C.kr_ltMatmulAlgo_t)(unsafe.Pointer(&algo.Data[0]))
	}
	return check(fn, C.kr_ltMatmul(h.h, desc.d, alpha,
		C.uintptr_t(a), aDesc.l, C.uintptr_t(b), bDesc.l, beta,
		C.uintptr_t(c), cDesc.l, C.uintptr_t(d), dDesc.l, cAlgo,
		C.uintptr_t(workspace), C.size_t(workspaceBytes), stream))
}

// MatmulAlgo must have exactly the size of the C declaration.
var _ [unsafe.Sizeof(MatmulAlgo{})]byte = [unsafe.Sizeof(C.kr_ltMatmulAlgo_t{})]byte{}
