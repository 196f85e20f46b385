package cuda

// #include <stdlib.h>
// #include "kr_cuda.h"
import "C"

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/kreplay/kreplay/internal/dl"
	"github.com/kreplay/kreplay/internal/onstack"
)

// LibraryName is the shared object Init opens: the driver's runtime name,
// never the unversioned libcuda.so, which may be the toolkit's link stub.
const LibraryName = "libcuda.so.1"

// ResolveEnv is the environment variable that, set to "dlsym", makes Init
// resolve every entry point with dlsym instead of cuGetProcAddress_v2.
const ResolveEnv = "KREPLAY_CUDA_RESOLVE"

// resolution records how one entry point was found.
type resolution struct {
	slot int
	base string         // API name, e.g. "cuMemAlloc"
	via  string         // e.g. "cuGetProcAddress_v2(cuMemAlloc, 3020)" or "dlsym(cuMemAlloc_v2)"
	ptr  unsafe.Pointer // the entry point, nil if not found
}

var (
	initOnce sync.Once
	initErr  error

	// Written once inside initOnce, read after Init returned.
	driverHandle  dl.Handle
	driverVersion int
	resolved      []resolution

	// isLoaded is set once the function table is complete, so that
	// ErrorName may call the driver even while Init's cuInit failed.
	isLoaded atomic.Bool
)

// Init loads the driver library, resolves its entry points and calls
// cuInit(0). It is idempotent and safe for concurrent use: the first call
// does the work and every call returns the first call's result. Other
// functions of this package call Init themselves, so calling it first is
// only needed to learn early whether CUDA is usable.
//
// Errors: ErrNoDriver (wrapped, with the dlopen message) when libcuda.so.1
// cannot be opened or is a stub; ErrMissingSymbol naming each required
// entry point the library lacks; ErrNoDevice together with the *Error from
// cuInit when the driver sees no device; otherwise cuInit's *Error.
func Init() error {
	initOnce.Do(func() { initErr = load() })
	return initErr
}

// ready returns nil when the driver is usable, else Init's error.
func ready() error { return Init() }

// loaded reports whether the function table has been filled.
func loaded() bool { return isLoaded.Load() }

// DriverVersion returns the CUDA version the driver supports, as
// 1000*major + 10*minor (13000 for CUDA 13.0).
func DriverVersion() (int, error) {
	if err := ready(); err != nil {
		return 0, err
	}
	return driverVersion, nil
}

func load() error {
	h, err := dl.Open(LibraryName)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoDriver, err)
	}
	driverHandle = h
	useGetProc := !strings.EqualFold(os.Getenv(ResolveEnv), "dlsym")
	res, missing := resolveAll(h, useGetProc)
	resolved = res
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s not found in %s", ErrMissingSymbol, strings.Join(missing, ", "), LibraryName)
	}
	install(res)
	isLoaded.Store(true)

	if r := C.kr_cuInit(0); r != C.KR_CUDA_SUCCESS {
		e := newError("cuInit", int(r))
		switch e.Code {
		case CodeStubLibrary:
			return fmt.Errorf("%w: %s is the toolkit stub: %w", ErrNoDriver, LibraryName, e)
		case CodeNoDevice:
			return fmt.Errorf("%w: %w", ErrNoDevice, e)
		}
		return e
	}
	onstack.Fix() // the driver's signal handlers, on Go's signal stack
	var v C.int
	if err := check("cuDriverGetVersion", C.kr_cuDriverGetVersion(&v)); err != nil {
		return err
	}
	driverVersion = int(v)
	return nil
}

// resolveAll looks up every driver symbol in the library handle h without
// touching the C function table. It returns one resolution per entry of
// driverSymbols (same order) and a description of each required symbol
// that was not found. With useGetProc, symbols are asked of
// cuGetProcAddress_v2 first (when h exports it), then looked up with dlsym.
func resolveAll(h dl.Handle, useGetProc bool) ([]resolution, []string) {
	var getproc unsafe.Pointer
	if useGetProc {
		for _, s := range driverSymbols {
			if s.slot == slotGetProcAddress {
				getproc, _ = dlsymFirst(h, s.names)
			}
		}
	}
	res := make([]resolution, len(driverSymbols))
	var missing []string
	for i, s := range driverSymbols {
		r := resolution{slot: s.slot, base: s.base}
		switch {
		case s.slot == slotGetProcAddress:
			if getproc != nil {
				r.ptr, r.via = getproc, "dlsym("+s.names[0].name+")"
			}
		default:
			if getproc != nil {
				r.ptr, r.via = getProc(getproc, s.base, s.abi())
			}
			if r.ptr == nil {
				r.ptr, r.via = dlsymFirst(h, s.names)
			}
		}
		res[i] = r
		if r.ptr == nil && !s.optional {
			names := make([]string, len(s.names))
			for i, n := range s.names {
				names[i] = n.name
			}
			tried := "dlsym of " + strings.Join(names, ", ")
			if getproc != nil {
				tried = fmt.Sprintf("cuGetProcAddress_v2(%s, %d) and %s", s.base, s.abi(), tried)
			}
			missing = append(missing, fmt.Sprintf("%s (tried %s)", s.base, tried))
		}
	}
	return res, missing
}

// install copies resolved entry points into the C function table.
func install(res []resolution) {
	for _, r := range res {
		fnTable[r.slot] = r.ptr
	}
}

// getProc asks the cuGetProcAddress_v2 entry point getproc for base at ABI
// version abi.
func getProc(getproc unsafe.Pointer, base string, abi int) (unsafe.Pointer, string) {
	cs := C.CString(base)
	defer C.free(unsafe.Pointer(cs))
	var result, status C.int
	p := C.kr_cu_getproc(getproc, cs, C.int(abi), &result, &status)
	if result != C.KR_CUDA_SUCCESS || status != 0 || p == nil {
		return nil, ""
	}
	return p, fmt.Sprintf("cuGetProcAddress_v2(%s, %d)", base, abi)
}

// dlsymFirst returns the first of names that h exports.
func dlsymFirst(h dl.Handle, names []symName) (unsafe.Pointer, string) {
	for _, n := range names {
		if p := h.Sym(n.name); p != nil {
			return p, "dlsym(" + n.name + ")"
		}
	}
	return nil, ""
}

// destroyOnce is the shared body of the Destroy and Unload methods: it
// returns nil at once when dead (the object is nil or already released),
// else checks that the driver is ready and checks release's result as
// call; done, which marks the object released, runs only on success.
func destroyOnce(call string, dead bool, release func() C.kr_CUresult, done func()) error {
	if dead {
		return nil
	}
	if err := ready(); err != nil {
		return err
	}
	if err := check(call, release()); err != nil {
		return err
	}
	done()
	return nil
}
