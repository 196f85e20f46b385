// Package cupti records which GPU activities actually ran, through the
// CUPTI activity API of libcupti loaded at run time with dlopen (no CUDA
// toolkit or GPU is needed to build it).
//
// Enable turns on activity kinds (kernels, memcpys, memsets); CUPTI then
// fills 8 MiB buffers that C callbacks decode into a queue, copying
// kernel names, and Flush plus Drain hand the records to Go. CUPTI
// reports Itanium-mangled names while PyTorch traces show demangled ones:
// package kname compares them.
package cupti

/*
#include "cupti_shim.h"
*/
import "C"

import (
	"errors"
	"path/filepath"

	"github.com/kreplay/kreplay/internal/dl"
)

// Sonames lists the CUPTI library names tried, newest first.
var Sonames = []string{"libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8", "libcupti.so"}

// Dirs lists directories tried, after the plain soname, for each entry of
// Sonames: CUDA installs CUPTI outside the default loader path.
var Dirs = []string{
	"/usr/local/cuda/extras/CUPTI/lib64",
	"/usr/local/cuda/targets/x86_64-linux/lib",
	"/usr/local/cuda/targets/sbsa-linux/lib",
	"/usr/local/cuda/lib64",
}

// Candidates returns the paths Load tries, in order: each soname as is,
// then in each of Dirs.
func Candidates() []string {
	var c []string
	for _, s := range Sonames {
		c = append(c, s)
		for _, d := range Dirs {
			c = append(c, filepath.Join(d, s))
		}
	}
	return c
}

// ErrNotFound is matched (errors.Is) by the error Load returns when no
// usable libcupti could be opened.
var ErrNotFound = errors.New("cupti: library not found")

// lib fills kr_cupti_fn (defined in cupti.c); a library lacking a symbol
// is skipped.
var lib = dl.Library{
	NotFound: ErrNotFound,
	Table:    C.kr_cupti_fn[:],
	Symbols: []dl.Symbol{
		{Slot: C.KR_CUPTI_cuptiGetVersion, Name: "cuptiGetVersion"},
		{Slot: C.KR_CUPTI_cuptiGetResultString, Name: "cuptiGetResultString"},
		{Slot: C.KR_CUPTI_cuptiActivityEnable, Name: "cuptiActivityEnable"},
		{Slot: C.KR_CUPTI_cuptiActivityDisable, Name: "cuptiActivityDisable"},
		{Slot: C.KR_CUPTI_cuptiActivityFlushAll, Name: "cuptiActivityFlushAll"},
		{Slot: C.KR_CUPTI_cuptiActivityGetNextRecord, Name: "cuptiActivityGetNextRecord"},
		{Slot: C.KR_CUPTI_cuptiActivityGetNumDroppedRecords, Name: "cuptiActivityGetNumDroppedRecords"},
		{Slot: C.KR_CUPTI_cuptiActivityRegisterCallbacks, Name: "cuptiActivityRegisterCallbacks"},
	},
}

// Load opens libcupti and resolves the activity API. It is idempotent
// and safe for concurrent use; Enable calls it.
func Load() error { return lib.Load(Candidates(), nil, nil) }

// Path reports the library Load opened, or "" when none is loaded.
func Path() string { return lib.Path() }

// Version returns the CUPTI API version of the loaded library
// (cuptiGetVersion), e.g. 24 for CUDA 12.6 or 130001 for 13.0.
func Version() (uint32, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	var v C.uint32_t
	if err := check("cuptiGetVersion", C.kr_cuptiGetVersion(&v)); err != nil {
		return 0, err
	}
	return uint32(v), nil
}

func check(fn string, rc C.int) error {
	if rc == 0 {
		return nil
	}
	return &Error{Func: fn, Result: Result(rc)}
}

func libResultName(r Result) string {
	if Path() == "" {
		return ""
	}
	var s *C.char
	if C.kr_cuptiGetResultString(C.int(r), &s) != 0 || s == nil {
		return ""
	}
	return C.GoString(s)
}
