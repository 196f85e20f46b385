package cublas

/*
#include "cublas_shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// errScalar reports a nil alpha or beta.
var errScalar = errors.New("alpha and beta must be non-nil host pointers")

func intArgs(fn string, names string, vals ...int) error {
	for i, v := range vals {
		if v < math.MinInt32 || v > math.MaxInt32 {
			return fmt.Errorf("%s: argument %d of (%s) = %d does not fit a C int", fn, i, names, v)
		}
	}
	return nil
}

// GemmEx computes C = alpha*op(A)*op(B) + beta*C in column-major order
// (cublasGemmEx): op(A) is m×k, op(B) is k×n and C is m×n. a, b and c are
// device pointers; alpha and beta are host pointers to scalars of the
// compute type's ScaleType (see ScalarBytes) and only need to be valid
// during the call. The call is asynchronous on the handle's stream.
func (h *Handle) GemmEx(transa, transb Operation, m, n, k int,
	alpha unsafe.Pointer, a uintptr, aType DataType, lda int,
	b uintptr, bType DataType, ldb int,
	beta unsafe.Pointer, c uintptr, cType DataType, ldc int,
	compute ComputeType, algo GemmAlgo) error {
	const fn = "cublasGemmEx"
	if err := h.ok(fn); err != nil {
		return err
	}
	if alpha == nil || beta == nil {
		return fmt.Errorf("%s: %w", fn, errScalar)
	}
	if err := intArgs(fn, "m, n, k, lda, ldb, ldc", m, n, k, lda, ldb, ldc); err != nil {
		return err
	}
	return check(fn, C.kr_cublasGemmEx(h.h, C.int(transa), C.int(transb),
		C.int(m), C.int(n), C.int(k), alpha,
		C.uintptr_t(a), C.int(aType), C.int(lda),
		C.uintptr_t(b), C.int(bType), C.int(ldb),
		beta, C.uintptr_t(c), C.int(cType), C.int(ldc),
		C.int(compute), C.int(algo)))
}

// GemmStridedBatchedEx computes batchCount independent GEMMs
// (cublasGemmStridedBatchedEx): matrix i of A starts at
// a + i*strideA elements, and likewise for B and C. Strides are in
// elements, 64-bit. Other arguments are as for GemmEx.
func (h *Handle) GemmStridedBatchedEx(transa, transb Operation, m, n, k int,
	alpha unsafe.Pointer, a uintptr, aType DataType, lda int, strideA int64,
	b uintptr, bType DataType, ldb int, strideB int64,
	beta unsafe.Pointer, c uintptr, cType DataType, ldc int, strideC int64,
	batchCount int, compute ComputeType, algo GemmAlgo) error {
	const fn = "cublasGemmStridedBatchedEx"
	if err := h.ok(fn); err != nil {
		return err
	}
	if alpha == nil || beta == nil {
		return fmt.Errorf("%s: %w", fn, errScalar)
	}
	if err := intArgs(fn, "m, n, k, lda, ldb, ldc, batchCount", m, n, k, lda, ldb, ldc, batchCount); err != nil {
		return err
	}
	return check(fn, C.kr_cublasGemmStridedBatchedEx(h.h, C.int(transa), C.int(transb),
		C.int(m), C.int(n), C.int(k), alpha,
		C.uintptr_t(a), C.int(aType), C.int(lda), C.longlong(strideA),
		C.uintptr_t(b), C.int(bType), C.int(ldb), C.longlong(strideB),
		beta, C.uintptr_t(c), C.int(cType), C.int(ldc), C.longlong(strideC),
		C.int(batchCount), C.int(compute), C.int(algo)))
}
