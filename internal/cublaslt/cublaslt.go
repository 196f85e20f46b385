// Package cublaslt is a thin binding to NVIDIA cuBLASLt (the
// "lightweight" matmul API: descriptors, layouts, heuristics and
// cublasLtMatmul) that loads libcublasLt at run time with dlopen, so
// building needs no CUDA toolkit and no GPU.
//
// Data types, compute types, operations and statuses are package
// cublas's types: cuBLASLt shares them with cuBLAS, and failed calls
// return a *cublas.Error such as "cublasLtMatmul: CUBLAS_STATUS_NOT_SUPPORTED".
// Device pointers are uintptr, streams are unsafe.Pointer (CUstream).
//
// Like cuBLAS, cuBLASLt works in the CUDA context current on the calling
// OS thread: call it from a goroutine locked to the thread where that
// context is current.
package cublaslt

/*
#include "cublaslt_shim.h"

// The function table (one definition; cublaslt_shim.h declares it).
void *kr_lt_fn[KR_LT_COUNT];
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/kreplay/kreplay/internal/cublas"
	"github.com/kreplay/kreplay/internal/dl"
)

// Candidates lists the library names Load tries, newest first.
var Candidates = []string{
	"libcublasLt.so.13",
	"libcublasLt.so.12",
	"libcublasLt.so.11",
	"libcublasLt.so",
}

// ErrNotFound is matched (errors.Is) by the error Load returns when no
// usable libcublasLt could be opened.
var ErrNotFound = errors.New("cublaslt: library not found")

// ErrNil is returned by methods called on a nil or destroyed handle,
// descriptor, layout or preference.
var ErrNil = errors.New("nil or destroyed cuBLASLt object")

// lib fills kr_lt_fn; a library lacking a symbol is skipped.
var lib = dl.Library{
	Env:      "KREPLAY_CUBLASLT_LIB",
	NotFound: ErrNotFound,
	Table:    C.kr_lt_fn[:],
	Symbols: []dl.Symbol{
		{Slot: C.KR_LT_ltGetVersion, Name: "cublasLtGetVersion"},
		{Slot: C.KR_LT_ltCreate, Name: "cublasLtCreate"},
		{Slot: C.KR_LT_ltDestroy, Name: "cublasLtDestroy"},
		{Slot: C.KR_LT_ltMatmulDescCreate, Name: "cublasLtMatmulDescCreate"},
		{Slot: C.KR_LT_ltMatmulDescDestroy, Name: "cublasLtMatmulDescDestroy"},
		{Slot: C.KR_LT_ltMatmulDescSetAttribute, Name: "cublasLtMatmulDescSetAttribute"},
		{Slot: C.KR_LT_ltMatmulDescGetAttribute, Name: "cublasLtMatmulDescGetAttribute"},
		{Slot: C.KR_LT_ltMatrixLayoutCreate, Name: "cublasLtMatrixLayoutCreate"},
		{Slot: C.KR_LT_ltMatrixLayoutDestroy, Name: "cublasLtMatrixLayoutDestroy"},
		{Slot: C.KR_LT_ltMatrixLayoutSetAttribute, Name: "cublasLtMatrixLayoutSetAttribute"},
		{Slot: C.KR_LT_ltMatrixLayoutGetAttribute, Name: "cublasLtMatrixLayoutGetAttribute"},
		{Slot: C.KR_LT_ltMatmulPreferenceCreate, Name: "cublasLtMatmulPreferenceCreate"},
		{Slot: C.KR_LT_ltMatmulPreferenceDestroy, Name: "cublasLtMatmulPreferenceDestroy"},
		{Slot: C.KR_LT_ltMatmulPreferenceSetAttribute, Name: "cublasLtMatmulPreferenceSetAttribute"},
		{Slot: C.KR_LT_ltMatmulPreferenceGetAttribute, Name: "cublasLtMatmulPreferenceGetAttribute"},
		{Slot: C.KR_LT_ltMatmulAlgoGetHeuristic, Name: "cublasLtMatmulAlgoGetHeuristic"},
		{Slot: C.KR_LT_ltMatmul, Name: "cublasLtMatmul"},
	},
}

// Load opens libcublasLt (trying Candidates in order) and resolves the
// functions this package uses. It is idempotent and safe for concurrent
// use; every constructor calls it.
func Load() error { return lib.Load(Candidates, nil, nil) }

// Path reports the library Load opened, or "" when none is loaded.
func Path() string { return lib.Path() }

// GetVersion loads the library if needed and returns cublasLtGetVersion:
// major*10000 + minor*100 + patch.
func GetVersion() (uint64, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	return uint64(C.kr_ltGetVersion()), nil
}

func check(fn string, st C.kr_ltStatus_t) error {
	if st == 0 {
		return nil
	}
	return &cublas.Error{Func: fn, Status: cublas.Status(st)}
}

// nilErr is the error of a method fn called on a nil or destroyed object.
func nilErr(fn string) error { return fmt.Errorf("%s: %w", fn, ErrNil) }

// destroy is the shared body of the Destroy methods: a no-op when dead
// (the object is nil or already destroyed), else release's status checked
// as fn; clear, which marks the object destroyed, runs whatever the
// status.
func destroy(fn string, dead bool, release func() C.kr_ltStatus_t, clear func()) error {
	if dead {
		return nil
	}
	err := check(fn, release())
	clear()
	return err
}

// setAttribute is the shared body of the SetAttribute methods: nilErr(fn)
// when dead, else set called with attr and value's bytes, its status
// checked as fn and a failure annotated with attr.
func setAttribute(fn string, dead bool, attr int32, value []byte,
	set func(attr C.int, p unsafe.Pointer, n C.size_t) C.kr_ltStatus_t) error {
	if dead {
		return nilErr(fn)
	}
	if err := check(fn, set(C.int(attr), bytesPtr(value), C.size_t(len(value)))); err != nil {
		return fmt.Errorf("%w (attribute %d)", err, attr)
	}
	return nil
}

// getAttribute is the shared body of the GetAttribute methods: nilErr(fn)
// when dead, else get called with attr and buf, returning the size it
// wrote and its status checked as fn.
func getAttribute(fn string, dead bool, attr int32, buf []byte,
	get func(attr C.int, p unsafe.Pointer, n C.size_t, written *C.size_t) C.kr_ltStatus_t) (int, error) {
	if dead {
		return 0, nilErr(fn)
	}
	var written C.size_t
	err := check(fn, get(C.int(attr), bytesPtr(buf), C.size_t(len(buf)), &written))
	return int(written), err
}

// Handle is a cublasLtHandle_t. It must not be used by several
// goroutines at once.
type Handle struct {
	h C.kr_ltHandle_t
}

// Create loads the library if needed and creates a handle (cublasLtCreate).
func Create() (*Handle, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	var h C.kr_ltHandle_t
	if err := check("cublasLtCreate", C.kr_ltCreate(&h)); err != nil {
		return nil, err
	}
	return &Handle{h: h}, nil
}

// Destroy releases the handle (cublasLtDestroy); a nil or destroyed
// handle is a no-op.
func (h *Handle) Destroy() error {
	return destroy("cublasLtDestroy", h == nil || h.h == nil,
		func() C.kr_ltStatus_t { return C.kr_ltDestroy(h.h) },
		func() { h.h = nil })
}

// Ptr returns the raw cublasLtHandle_t.
func (h *Handle) Ptr() unsafe.Pointer {
	if h == nil {
		return nil
	}
	return unsafe.Pointer(h.h)
}

// structLayout reports sizes and offsets of the package's C declarations
// of cublasLtMatmulAlgo_t and cublasLtMatmulHeuristicResult_t, keyed like
// the header probe test's output.
func structLayout() map[string]int64 {
	return map[string]int64{
		"sizeof_algo":         int64(C.kr_lt_sizeof_algo()),
		"sizeof_result":       int64(C.kr_lt_sizeof_result()),
		"offsetof_workspace":  int64(C.kr_lt_off_workspace()),
		"offsetof_state":      int64(C.kr_lt_off_state()),
		"offsetof_wavesCount": int64(C.kr_lt_off_waves()),
		"offsetof_reserved":   int64(C.kr_lt_off_reserved()),
	}
}
