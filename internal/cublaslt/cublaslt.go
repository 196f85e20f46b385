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
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "cublaslt_shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
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

var (
	loadMu     sync.Mutex
	loadedPath string
)

// Load opens libcublasLt (trying Candidates in order) and resolves the
// functions this package uses. It is idempotent and safe for concurrent
// use; every constructor calls it.
func Load() error {
	loadMu.Lock()
	defer loadMu.Unlock()
	if loadedPath != "" {
		return nil
	}
	path, err := openFirst(Candidates)
	if err != nil {
		return err
	}
	loadedPath = path
	return nil
}

// Path reports the library Load opened, or "" when none is loaded.
func Path() string {
	loadMu.Lock()
	defer loadMu.Unlock()
	return loadedPath
}

func openFirst(candidates []string) (string, error) {
	buf := (*C.char)(C.malloc(1024))
	defer C.free(unsafe.Pointer(buf))
	return dl.OpenFirst(ErrNotFound, candidates, func(name string) (string, bool) {
		cname := C.CString(name)
		defer C.free(unsafe.Pointer(cname))
		if C.kr_lt_open(cname, buf, 1024) == 0 {
			return "", true
		}
		return C.GoString(buf), false
	})
}

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

func nilErr(fn string) error { return fmt.Errorf("%s: %w", fn, ErrNil) }

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
	if h == nil || h.h == nil {
		return nil
	}
	err := check("cublasLtDestroy", C.kr_ltDestroy(h.h))
	h.h = nil
	return err
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
