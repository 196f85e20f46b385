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
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "cublas_shim.h"
*/
import "C"

import (
	"errors"
	"sync"
	"unsafe"

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

var (
	loadMu     sync.Mutex
	loadedPath string
)

// Load opens libcublas (trying Candidates in order) and resolves the
// functions this package uses. It is safe to call more than once and
// from several goroutines; after the first success it returns nil at
// once. Create calls Load, so calling it first is optional.
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
	libStatus.Store(&statusFuncs{name: cStatusName, text: cStatusString})
	return nil
}

// Path reports the library Load opened, or "" when none is loaded.
func Path() string {
	loadMu.Lock()
	defer loadMu.Unlock()
	return loadedPath
}

// openFirst tries each candidate and returns the first that opens with
// every required symbol. On failure the error wraps ErrNotFound and names
// every candidate with the loader's reason.
func openFirst(candidates []string) (string, error) {
	buf := (*C.char)(C.malloc(1024))
	defer C.free(unsafe.Pointer(buf))
	return dl.OpenFirst(ErrNotFound, candidates, func(name string) (string, bool) {
		cname := C.CString(name)
		defer C.free(unsafe.Pointer(cname))
		if C.kr_cublas_open(cname, buf, 1024) == 0 {
			return "", true
		}
		return C.GoString(buf), false
	})
}

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
