// Package cublas is a thin binding to NVIDIA cuBLAS that loads
// libcublas at run time with dlopen, the way github.com/NVIDIA/go-nvml
// loads NVML: building needs no CUDA toolkit and no GPU, and a process
// without cuBLAS only fails when it first calls into the library.
//
// Device pointers are plain uintptr values and CUDA streams are
// unsafe.Pointer values holding a CUstream/cudaStream_t; the package
// never allocates device memory itself.
//
// cuBLAS uses the CUDA context current on the calling OS thread (or the
// primary context of the current device when none is). Callers that
// manage contexts with the driver API must call into this package from a
// goroutine locked to the thread where their context is current
// (runtime.LockOSThread).
package cublas

/*
#include "cublas_shim.h"

// The function table (one definition; cublas_shim.h declares it).
void *kr_cublas_fn[KR_CUBLAS_COUNT];
*/
import "C"

import (
	"errors"

	"github.com/kreplay/kreplay/internal/dl"
)

// Candidates lists the library names Load tries, newest first. Plain
// sonames are resolved by the dynamic loader (LD_LIBRARY_PATH, ld.so.cache).
var Candidates = []string{
	"libcublas.so.13",
	"libcublas.so.12",
	"libcublas.so.11",
	"libcublas.so",
}

// ErrNotFound is matched (errors.Is) by the error Load returns when no
// usable libcublas could be opened.
var ErrNotFound = errors.New("cublas: library not found")

// ErrNilHandle is returned by Handle methods called on a nil or destroyed
// handle.
var ErrNilHandle = errors.New("nil or destroyed cuBLAS handle")

// lib fills kr_cublas_fn; a library lacking a required symbol is skipped.
var lib = dl.Library{
	Env:      "KREPLAY_CUBLAS_LIB",
	NotFound: ErrNotFound,
	Table:    C.kr_cublas_fn[:],
	Symbols: []dl.Symbol{
		{Slot: C.KR_CUBLAS_cublasCreate, Name: "cublasCreate_v2"},
		{Slot: C.KR_CUBLAS_cublasDestroy, Name: "cublasDestroy_v2"},
		{Slot: C.KR_CUBLAS_cublasGetVersion, Name: "cublasGetVersion_v2"},
		{Slot: C.KR_CUBLAS_cublasSetStream, Name: "cublasSetStream_v2"},
		{Slot: C.KR_CUBLAS_cublasSetWorkspace, Name: "cublasSetWorkspace_v2"},
		{Slot: C.KR_CUBLAS_cublasSetMathMode, Name: "cublasSetMathMode"},
		{Slot: C.KR_CUBLAS_cublasGetMathMode, Name: "cublasGetMathMode"},
		{Slot: C.KR_CUBLAS_cublasGemmEx, Name: "cublasGemmEx"},
		{Slot: C.KR_CUBLAS_cublasGemmStridedBatchedEx, Name: "cublasGemmStridedBatchedEx"},
		{Slot: C.KR_CUBLAS_cublasGetStatusName, Name: "cublasGetStatusName", Optional: true},
		{Slot: C.KR_CUBLAS_cublasGetStatusString, Name: "cublasGetStatusString", Optional: true},
	},
}

// Load opens libcublas (trying Candidates in order) and resolves the
// functions this package uses. It is safe to call more than once and
// from several goroutines; after the first success it returns nil at
// once. Create calls Load, so calling it first is optional.
func Load() error {
	return lib.Load(Candidates, nil, func() error {
		libStatus.Store(&statusFuncs{name: cStatusName, text: cStatusString})
		return nil
	})
}

// Path reports the library Load opened, or "" when none is loaded.
func Path() string { return lib.Path() }

func cStatusName(s Status) string {
	if p := C.kr_cublasGetStatusName(C.kr_cublasStatus_t(s)); p != nil {
		return C.GoString(p)
	}
	return ""
}

func cStatusString(s Status) string {
	if p := C.kr_cublasGetStatusString(C.kr_cublasStatus_t(s)); p != nil {
		return C.GoString(p)
	}
	return ""
}

// check turns a cuBLAS status into nil or an *Error naming fn.
func check(fn string, st C.kr_cublasStatus_t) error {
	if st == 0 {
		return nil
	}
	return &Error{Func: fn, Status: Status(st)}
}
