// Package cudnn is a thin binding to NVIDIA cuDNN that loads libcudnn at
// run time with dlopen, the way package cublas loads cuBLAS: building
// needs no cuDNN or CUDA header and no GPU, and a process without cuDNN
// only fails when it first calls into the library, with an error that
// wraps [ErrNotFound] and names every library it tried.
//
// The binding says which cuDNN a process loads, for the "cudnn"
// configuration line of benchmark output (replay.Device.Config; [Version]
// needs no GPU), and it builds and runs cuDNN's scaled dot-product
// attention through the backend (graph) API as cudnn-frontend builds it
// for PyTorch (sdpa.go): [Handle] (handle.go), backend descriptors
// (backend.go) and their enumerators (types.go). A captured cuDNN kernel
// replays from its binary instead (package captured).
//
// Like cuBLAS, cuDNN works in the CUDA context current on the calling OS
// thread: call it from a goroutine locked to the thread where that
// context is current.
package cudnn

/*
#include "cudnn_shim.h"

// The function table (one definition; cudnn_shim.h declares it).
void *kr_cudnn_fn[KR_CUDNN_COUNT];
*/
import "C"

import (
	"errors"
	"fmt"

	"github.com/kreplay/kreplay/internal/dl"
)

// Candidates lists the library names Load tries, newest first. Plain
// sonames are resolved by the dynamic loader (LD_LIBRARY_PATH, ld.so.cache).
var Candidates = []string{
	"libcudnn.so.9",
	"libcudnn.so.8",
	"libcudnn.so",
}

// ErrNotFound is matched (errors.Is) by the error Load returns when no
// usable libcudnn could be opened.
var ErrNotFound = errors.New("cudnn: library not found")

// Env names the environment variable that chooses the library: a path or
// soname, tried alone (a wrong one is an error, not a fallback).
const Env = "KREPLAY_CUDNN_LIB"

// lib fills kr_cudnn_fn; a library lacking a required symbol is skipped.
var lib = dl.Library{
	Env:      Env,
	NotFound: ErrNotFound,
	Table:    C.kr_cudnn_fn[:],
	Symbols: []dl.Symbol{
		{Slot: C.KR_CUDNN_cudnnGetVersion, Name: "cudnnGetVersion"},
		{Slot: C.KR_CUDNN_cudnnGetErrorString, Name: "cudnnGetErrorString"},
		{Slot: C.KR_CUDNN_cudnnGetLastErrorString, Name: "cudnnGetLastErrorString", Optional: true},
		{Slot: C.KR_CUDNN_cudnnCreate, Name: "cudnnCreate"},
		{Slot: C.KR_CUDNN_cudnnDestroy, Name: "cudnnDestroy"},
		{Slot: C.KR_CUDNN_cudnnSetStream, Name: "cudnnSetStream"},
		{Slot: C.KR_CUDNN_cudnnBackendCreateDescriptor, Name: "cudnnBackendCreateDescriptor"},
		{Slot: C.KR_CUDNN_cudnnBackendDestroyDescriptor, Name: "cudnnBackendDestroyDescriptor"},
		{Slot: C.KR_CUDNN_cudnnBackendFinalize, Name: "cudnnBackendFinalize"},
		{Slot: C.KR_CUDNN_cudnnBackendSetAttribute, Name: "cudnnBackendSetAttribute"},
		{Slot: C.KR_CUDNN_cudnnBackendGetAttribute, Name: "cudnnBackendGetAttribute"},
		{Slot: C.KR_CUDNN_cudnnBackendExecute, Name: "cudnnBackendExecute"},
	},
}

// Load opens libcudnn (trying Candidates in order, or what Env names) and
// resolves the functions this package uses. It is safe to call more than
// once and from several goroutines; after the first success it returns
// nil at once.
func Load() error { return lib.Load(Candidates, nil, nil) }

// Path reports the library Load opened, or "" when none is loaded.
func Path() string { return lib.Path() }

// Version loads the library if needed and returns cudnnGetVersion, the
// loaded library's CUDNN_VERSION: major*10000 + minor*100 + patch from
// cuDNN 9 on (91002 for 9.10.2), major*1000 + minor*100 + patch before
// (8906 for 8.9.6).
func Version() (int, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	return int(C.kr_cudnnGetVersion()), nil
}

// VersionString formats a CUDNN_VERSION code as "9.10.2" (see Version for
// the two encodings).
func VersionString(code int) string {
	if code >= 90000 {
		return fmt.Sprintf("%d.%d.%d", code/10000, code%10000/100, code%100)
	}
	return fmt.Sprintf("%d.%d.%d", code/1000, code%1000/100, code%100)
}
