// Package nccl is a thin binding to NVIDIA NCCL that loads libnccl.so.2 at
// run time with dlopen, the way package cublas loads cuBLAS: building needs
// no NCCL or CUDA header and no GPU, and a process without NCCL only fails
// when it first calls into the library, with an error that wraps
// [ErrNotFound] and names every library it tried.
//
// The few declarations it needs are transcribed from nccl.h (NCCL 2.2x)
// into nccl_shim.h; the header probe test compares the enumerations and
// the size of ncclUniqueId with an installed nccl.h where there is one.
//
// Device buffers are plain uintptr values and CUDA streams are
// unsafe.Pointer values holding a cudaStream_t/CUstream; the package never
// allocates device memory itself. Errors name the NCCL call and carry
// NCCL's own text, e.g. "ncclAllReduce: unhandled cuda error (run with
// NCCL_DEBUG=INFO for details)", followed by ncclGetLastError's message
// where the library has it.
//
// # Threads
//
// NCCL uses the CUDA runtime, which works in the context current on the
// calling OS thread (the device's primary context). Call collectives from
// a goroutine locked to a thread where the communicator's device context
// is current. A collective may block until the other ranks arrive, so
// when one thread drives several ranks (communicators from
// [CommInitAll]), their calls must be bracketed by [GroupStart] and
// [GroupEnd]; with one thread per rank, each rank's call stands alone, and
// the threads must issue them concurrently.
//
// # NVLink multicast (NVLS)
//
// kreplay keeps NVLS off: on NVSwitch systems NVLS needs NVLink multicast
// objects, which the shared machines kreplay runs on must not use, and
// reserves a large share of device memory per communicator; the traced
// tensor-parallel all-reduce it replays ran without it (RING_LL).
// [Load] therefore sets NCCL_NVLS_ENABLE=0 in the process environment
// before it opens the library, unless the variable is already set (an
// explicit setting is respected). NCCL reads its environment when it
// initializes, so the setting must precede the first NCCL call; [Load] runs
// before every call of this package, and [DisableNVLS] can be called
// earlier still.
package nccl

/*
#include "nccl_shim.h"

// The function table (one definition; nccl_shim.h declares it).
void *kr_nccl_fn[KR_NCCL_COUNT];
*/
import "C"

import (
	"errors"
	"fmt"
	"os"

	"github.com/kreplay/kreplay/internal/dl"
)

// Candidates lists the library names Load tries, in order. Plain sonames
// are resolved by the dynamic loader (LD_LIBRARY_PATH, ld.so.cache).
var Candidates = []string{
	"libnccl.so.2",
	"libnccl.so",
}

// ErrNotFound is matched (errors.Is) by the error Load returns when no
// usable libnccl could be opened.
var ErrNotFound = errors.New("nccl: library not found")

// NVLSEnv is the NCCL environment variable that switches NVLink SHARP
// (multicast) collectives on or off.
const NVLSEnv = "NCCL_NVLS_ENABLE"

// DisableNVLS sets NCCL_NVLS_ENABLE=0 in the process environment (the C
// environment NCCL reads, since os.Setenv calls setenv in a cgo program)
// unless the variable is already set, and reports whether it set it. It
// must run before the first NCCL call to take effect; Load calls it.
func DisableNVLS() bool {
	if _, ok := os.LookupEnv(NVLSEnv); ok {
		return false
	}
	return os.Setenv(NVLSEnv, "0") == nil
}

// lib fills kr_nccl_fn; a library lacking a required symbol is skipped.
var lib = dl.Library{
	Env:      "KREPLAY_NCCL_LIB",
	NotFound: ErrNotFound,
	Table:    C.kr_nccl_fn[:],
	Symbols: []dl.Symbol{
		{Slot: C.KR_NCCL_ncclGetVersion, Name: "ncclGetVersion"},
		{Slot: C.KR_NCCL_ncclGetUniqueId, Name: "ncclGetUniqueId"},
		{Slot: C.KR_NCCL_ncclCommInitRank, Name: "ncclCommInitRank"},
		{Slot: C.KR_NCCL_ncclCommInitAll, Name: "ncclCommInitAll"},
		{Slot: C.KR_NCCL_ncclCommDestroy, Name: "ncclCommDestroy"},
		{Slot: C.KR_NCCL_ncclCommAbort, Name: "ncclCommAbort"},
		{Slot: C.KR_NCCL_ncclCommCount, Name: "ncclCommCount"},
		{Slot: C.KR_NCCL_ncclCommCuDevice, Name: "ncclCommCuDevice"},
		{Slot: C.KR_NCCL_ncclCommUserRank, Name: "ncclCommUserRank"},
		{Slot: C.KR_NCCL_ncclGroupStart, Name: "ncclGroupStart"},
		{Slot: C.KR_NCCL_ncclGroupEnd, Name: "ncclGroupEnd"},
		{Slot: C.KR_NCCL_ncclAllReduce, Name: "ncclAllReduce"},
		{Slot: C.KR_NCCL_ncclAllGather, Name: "ncclAllGather"},
		{Slot: C.KR_NCCL_ncclReduceScatter, Name: "ncclReduceScatter"},
		{Slot: C.KR_NCCL_ncclBroadcast, Name: "ncclBroadcast"},
		{Slot: C.KR_NCCL_ncclGetErrorString, Name: "ncclGetErrorString"},
		{Slot: C.KR_NCCL_ncclGetLastError, Name: "ncclGetLastError", Optional: true},
	},
}

// version is the loaded library's ncclGetVersion, written by the first
// successful Load under lib's lock and read after a Load.
var version int

// Load sets NCCL_NVLS_ENABLE=0 unless already set (see DisableNVLS), opens
// libnccl (trying Candidates in order) and resolves the functions this
// package uses. It is safe to call more than once and from several
// goroutines; after the first success it returns nil at once. Every other
// call of the package calls Load first.
func Load() error {
	return lib.Load(Candidates, func() { DisableNVLS() }, func() error {
		var v C.int
		if err := check("ncclGetVersion", C.kr_ncclGetVersion(&v), nil); err != nil {
			return err
		}
		version = int(v)
		return nil
	})
}

// Path reports the library Load opened, or "" when none is loaded.
func Path() string { return lib.Path() }

// Version returns the loaded library's NCCL_VERSION_CODE (ncclGetVersion),
// e.g. 22703 for NCCL 2.27.3, loading the library if needed.
func Version() (int, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	return version, nil
}

// VersionCode encodes a version the way nccl.h's NCCL_VERSION macro does:
// major*1000 + minor*100 + patch up to 2.8, major*10000 + minor*100 + patch
// from 2.9 on.
func VersionCode(major, minor, patch int) int {
	if major <= 2 && minor <= 8 {
		return major*1000 + minor*100 + patch
	}
	return major*10000 + minor*100 + patch
}

// VersionString formats a version code as "2.27.3".
func VersionString(code int) string {
	if code < 10000 {
		return fmt.Sprintf("%d.%d.%d", code/1000, code%1000/100, code%100)
	}
	return fmt.Sprintf("%d.%d.%d", code/10000, code%10000/100, code%100)
}
