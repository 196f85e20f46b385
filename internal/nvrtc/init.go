package nvrtc

/*
#include <stdlib.h>
#include "kr_nvrtc.h"

// The function table (one definition; kr_nvrtc.h declares it).
void *kr_nv_fn[KR_NV_COUNT];
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/kreplay/kreplay/internal/dl"
)

// LibraryEnv names an environment variable holding the path (or soname) of
// the NVRTC library to load; it is tried before the default names.
const LibraryEnv = "KREPLAY_NVRTC_LIB"

// libraryNames are the sonames tried, newest first. NVRTC 11.x used
// per-minor sonames until 11.2, after which the soname kept 11.2.
var libraryNames = []string{
	"libnvrtc.so.13",
	"libnvrtc.so.12",
	"libnvrtc.so.11.2",
	"libnvrtc.so.11.1",
	"libnvrtc.so.11.0",
	"libnvrtc.so",
}

// toolkitRoots are searched (under lib64/) after the dynamic loader's path,
// for toolkits whose lib64 is not on the loader's path.
func toolkitRoots() []string {
	var roots []string
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if v := os.Getenv(env); v != "" {
			roots = append(roots, v)
		}
	}
	return append(roots, "/usr/local/cuda")
}

// candidates returns every library path Init tries, in order.
func candidates() []string {
	var c []string
	if v := os.Getenv(LibraryEnv); v != "" {
		c = append(c, v)
	}
	c = append(c, libraryNames...)
	for _, root := range toolkitRoots() {
		for _, n := range libraryNames {
			c = append(c, filepath.Join(root, "lib64", n))
		}
	}
	return c
}

// Sentinel errors; test with errors.Is.
var (
	// ErrNoLibrary means no NVRTC library could be loaded.
	ErrNoLibrary = errors.New("nvrtc: library not available")
	// ErrMissingSymbol means the loaded library lacks a required entry point.
	ErrMissingSymbol = errors.New("nvrtc: required entry point missing")
	// ErrUnsupported means an optional entry point is absent from this
	// NVRTC version.
	ErrUnsupported = errors.New("nvrtc: not supported by this NVRTC")
)

// symbols has one entry per slot of the C table (nvrtc_test.go checks).
// nvrtcGetCUBIN* appeared in CUDA 11.1, nvrtcGetSupportedArchs in 11.2.
var symbols = []dl.Symbol{
	{Slot: C.KR_NV_nvrtcGetErrorString, Name: "nvrtcGetErrorString"},
	{Slot: C.KR_NV_nvrtcVersion, Name: "nvrtcVersion"},
	{Slot: C.KR_NV_nvrtcGetNumSupportedArchs, Name: "nvrtcGetNumSupportedArchs", Optional: true},
	{Slot: C.KR_NV_nvrtcGetSupportedArchs, Name: "nvrtcGetSupportedArchs", Optional: true},
	{Slot: C.KR_NV_nvrtcCreateProgram, Name: "nvrtcCreateProgram"},
	{Slot: C.KR_NV_nvrtcDestroyProgram, Name: "nvrtcDestroyProgram"},
	{Slot: C.KR_NV_nvrtcCompileProgram, Name: "nvrtcCompileProgram"},
	{Slot: C.KR_NV_nvrtcGetPTXSize, Name: "nvrtcGetPTXSize"},
	{Slot: C.KR_NV_nvrtcGetPTX, Name: "nvrtcGetPTX"},
	{Slot: C.KR_NV_nvrtcGetCUBINSize, Name: "nvrtcGetCUBINSize", Optional: true},
	{Slot: C.KR_NV_nvrtcGetCUBIN, Name: "nvrtcGetCUBIN", Optional: true},
	{Slot: C.KR_NV_nvrtcGetProgramLogSize, Name: "nvrtcGetProgramLogSize"},
	{Slot: C.KR_NV_nvrtcGetProgramLog, Name: "nvrtcGetProgramLog"},
}

// fnTable is kr_nv_fn, which the kr_nvrtcX wrappers call through.
var fnTable = C.kr_nv_fn[:]

var (
	initOnce sync.Once
	initErr  error
	libPath  string // the candidate that loaded
)

// Init loads NVRTC, trying $KREPLAY_NVRTC_LIB, then libnvrtc.so.13, .12,
// .11.x and the unversioned name through the dynamic loader, then the same
// names under $CUDA_HOME/lib64, $CUDA_PATH/lib64 and /usr/local/cuda/lib64.
// It is idempotent and safe for concurrent use. When nothing loads, the
// error wraps ErrNoLibrary and carries each dlopen message.
func Init() error {
	initOnce.Do(func() { initErr = load() })
	return initErr
}

// Library returns the name or path of the NVRTC library Init loaded.
func Library() (string, error) {
	if err := Init(); err != nil {
		return "", err
	}
	return libPath, nil
}

func load() error {
	var tried []string
	var detail error
	for _, name := range candidates() {
		h, err := dl.Open(name)
		if err != nil {
			tried = append(tried, name)
			// Keep the first error, or one that is more than "not found"
			// (a library that exists but cannot be loaded).
			if detail == nil || (!strings.Contains(err.Error(), "No such file") && strings.Contains(detail.Error(), "No such file")) {
				detail = err
			}
			continue
		}
		if err := resolve(h, name); err != nil {
			return err
		}
		libPath = name
		return nil
	}
	return fmt.Errorf("%w: tried %s: %w", ErrNoLibrary, strings.Join(tried, ", "), detail)
}

// resolve fills the C table from h, or reports the missing symbols.
func resolve(h dl.Handle, lib string) error {
	table, missing := h.Resolve(symbols, len(fnTable))
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s not found in %s", ErrMissingSymbol, strings.Join(missing, ", "), lib)
	}
	copy(fnTable, table)
	return nil
}

func has(slot int) bool { return slot >= 0 && slot < len(fnTable) && fnTable[slot] != nil }

// Version returns NVRTC's CUDA version, e.g. (13, 0).
func Version() (major, minor int, err error) {
	if err := Init(); err != nil {
		return 0, 0, err
	}
	var ma, mi C.int
	if err := check("nvrtcVersion", C.kr_nvrtcVersion(&ma, &mi), ""); err != nil {
		return 0, 0, err
	}
	return int(ma), int(mi), nil
}

// SupportedArchs returns the SM architectures NVRTC can compile for, as
// numbers such as 75, 80, 90 (nvrtcGetSupportedArchs, NVRTC 11.2+).
func SupportedArchs() ([]int, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	if !has(int(C.KR_NV_nvrtcGetNumSupportedArchs)) || !has(int(C.KR_NV_nvrtcGetSupportedArchs)) {
		return nil, fmt.Errorf("nvrtcGetSupportedArchs: %w", ErrUnsupported)
	}
	var n C.int
	if err := check("nvrtcGetNumSupportedArchs", C.kr_nvrtcGetNumSupportedArchs(&n), ""); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, nil
	}
	buf := (*C.int)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.int(0)))))
	defer C.free(unsafe.Pointer(buf))
	if err := check("nvrtcGetSupportedArchs", C.kr_nvrtcGetSupportedArchs(buf), ""); err != nil {
		return nil, err
	}
	archs := make([]int, n)
	for i, v := range unsafe.Slice(buf, int(n)) {
		archs[i] = int(v)
	}
	return archs, nil
}
