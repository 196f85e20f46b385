package cublas

/*
#include "cublas_shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Handle is a cublasHandle_t. A Handle must not be used by several
// goroutines at once.
type Handle struct {
	h C.kr_cublasHandle_t
}

// Create loads libcublas if needed and creates a handle
// (cublasCreate_v2). This initialises the CUDA runtime on the calling
// thread's current context.
func Create() (*Handle, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	var h C.kr_cublasHandle_t
	if err := check("cublasCreate_v2", C.kr_cublasCreate(&h)); err != nil {
		return nil, err
	}
	return &Handle{h: h}, nil
}

func (h *Handle) ok(fn string) error {
	if h == nil || h.h == nil {
		return fmt.Errorf("%s: %w", fn, ErrNilHandle)
	}
	return nil
}

// Destroy releases the handle (cublasDestroy_v2). Destroying a nil or
// already destroyed handle is a no-op.
func (h *Handle) Destroy() error {
	if h == nil || h.h == nil {
		return nil
	}
	err := check("cublasDestroy_v2", C.kr_cublasDestroy(h.h))
	h.h = nil
	return err
}

// Ptr returns the raw cublasHandle_t, for code that passes it on to C.
func (h *Handle) Ptr() unsafe.Pointer {
	if h == nil {
		return nil
	}
	return unsafe.Pointer(h.h)
}

// SetStream makes later calls on the handle run on stream, a
// CUstream/cudaStream_t; nil selects the legacy default stream
// (cublasSetStream_v2).
func (h *Handle) SetStream(stream unsafe.Pointer) error {
	if err := h.ok("cublasSetStream_v2"); err != nil {
		return err
	}
	return check("cublasSetStream_v2", C.kr_cublasSetStream(h.h, stream))
}

// SetWorkspace gives cuBLAS a device buffer of the given size to use as
// workspace instead of its own pool (cublasSetWorkspace_v2). ptr must
// stay allocated while the handle may use it; 0 with 0 bytes resets to
// no user workspace.
func (h *Handle) SetWorkspace(ptr uintptr, bytes uint64) error {
	if err := h.ok("cublasSetWorkspace_v2"); err != nil {
		return err
	}
	return check("cublasSetWorkspace_v2", C.kr_cublasSetWorkspace(h.h, C.uintptr_t(ptr), C.size_t(bytes)))
}

// SetMathMode sets the handle's math mode (cublasSetMathMode).
func (h *Handle) SetMathMode(mode Math) error {
	if err := h.ok("cublasSetMathMode"); err != nil {
		return err
	}
	return check("cublasSetMathMode", C.kr_cublasSetMathMode(h.h, C.int(mode)))
}

// GetMathMode returns the handle's math mode (cublasGetMathMode).
func (h *Handle) GetMathMode() (Math, error) {
	if err := h.ok("cublasGetMathMode"); err != nil {
		return 0, err
	}
	var m C.int
	if err := check("cublasGetMathMode", C.kr_cublasGetMathMode(h.h, &m)); err != nil {
		return 0, err
	}
	return Math(m), nil
}

// GetVersion returns the library version as major*10000 + minor*100 +
// patch, e.g. 130001 for cuBLAS 13.0.1 (cublasGetVersion_v2). Versions
// before 10.2 used major*1000 + minor*100 + patch.
func (h *Handle) GetVersion() (int, error) {
	if err := h.ok("cublasGetVersion_v2"); err != nil {
		return 0, err
	}
	var v C.int
	if err := check("cublasGetVersion_v2", C.kr_cublasGetVersion(h.h, &v)); err != nil {
		return 0, err
	}
	return int(v), nil
}
