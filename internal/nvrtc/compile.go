package nvrtc

// #include <stdlib.h>
// #include "kr_nvrtc.h"
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// Result is the output of a successful compilation.
type Result struct {
	// PTX is the PTX text, without a terminating NUL. It is nil when the
	// program was compiled for a real architecture (--gpu-architecture=sm_XX),
	// for which NVRTC generates only CUBIN.
	PTX []byte
	// CUBIN is the device binary, present when compiling for a real
	// architecture with NVRTC 11.1 or newer (nvrtcGetCUBIN).
	CUBIN []byte
	// Log holds the compiler's warnings; usually empty.
	Log string
}

// compileMu serializes compilations: NVRTC's documentation does not
// promise that concurrent compilations are safe, and they are rare here.
var compileMu sync.Mutex

// Compile compiles CUDA C++ source src, named name in diagnostics, with
// NVRTC options opts such as "--gpu-architecture=sm_90" (CUBIN) or
// "--gpu-architecture=compute_90" (PTX), "-default-device", "--std=c++17".
// Kernels to be looked up by name should be declared extern "C".
//
// On a compilation error the returned *Error has Code CodeCompilation and
// the compiler's log in Log, which its message includes.
func Compile(src, name string, opts []string) (*Result, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	if name == "" {
		name = "kreplay.cu"
	}
	compileMu.Lock()
	defer compileMu.Unlock()

	csrc := C.CString(src)
	defer C.free(unsafe.Pointer(csrc))
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))

	var prog C.kr_nvrtcProgram
	if err := check("nvrtcCreateProgram", C.kr_nvrtcCreateProgram(&prog, csrc, cname), ""); err != nil {
		return nil, err
	}
	defer C.kr_nvrtcDestroyProgram(&prog)

	var copts **C.char
	if len(opts) > 0 {
		copts = (**C.char)(C.calloc(C.size_t(len(opts)), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
		if copts == nil {
			return nil, errors.New("nvrtc: cannot allocate options")
		}
		arr := unsafe.Slice(copts, len(opts))
		for i, o := range opts {
			arr[i] = C.CString(o)
		}
		defer func() {
			for _, p := range arr {
				C.free(unsafe.Pointer(p))
			}
			C.free(unsafe.Pointer(copts))
		}()
	}

	r := C.kr_nvrtcCompileProgram(prog, C.int(len(opts)), copts)
	log := programLog(prog)
	if err := check("nvrtcCompileProgram", r, log); err != nil {
		return nil, fmt.Errorf("compile %s: %w", name, err)
	}

	res := &Result{Log: log}
	var ptxErr, cubinErr error
	res.PTX, ptxErr = output("nvrtcGetPTX",
		func(n *C.size_t) C.kr_nvrtcResult { return C.kr_nvrtcGetPTXSize(prog, n) },
		func(b *C.char) C.kr_nvrtcResult { return C.kr_nvrtcGetPTX(prog, b) })
	if has(int(C.KR_NV_nvrtcGetCUBINSize)) && has(int(C.KR_NV_nvrtcGetCUBIN)) {
		res.CUBIN, cubinErr = output("nvrtcGetCUBIN",
			func(n *C.size_t) C.kr_nvrtcResult { return C.kr_nvrtcGetCUBINSize(prog, n) },
			func(b *C.char) C.kr_nvrtcResult { return C.kr_nvrtcGetCUBIN(prog, b) })
	}
	if len(res.PTX) == 0 && len(res.CUBIN) == 0 {
		return nil, fmt.Errorf("nvrtc: compile %s produced neither PTX (%v) nor CUBIN (%v)", name, ptxErr, cubinErr)
	}
	if len(res.PTX) > 0 {
		// PTX is text: drop the terminating NUL NVRTC counts in its size.
		res.PTX = bytes.TrimRight(res.PTX, "\x00")
	}
	return res, nil
}

// output fetches one compilation output with its size and copy functions.
// An empty output is reported as (nil, nil).
func output(call string, size func(*C.size_t) C.kr_nvrtcResult, get func(*C.char) C.kr_nvrtcResult) ([]byte, error) {
	var n C.size_t
	if err := check(call+"Size", size(&n), ""); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	buf := (*C.char)(C.malloc(n))
	if buf == nil {
		return nil, fmt.Errorf("nvrtc: cannot allocate %d bytes", uint64(n))
	}
	defer C.free(unsafe.Pointer(buf))
	if err := check(call, get(buf), ""); err != nil {
		return nil, err
	}
	return C.GoBytes(unsafe.Pointer(buf), C.int(n)), nil
}

// programLog returns the compilation log without its terminating NUL.
func programLog(prog C.kr_nvrtcProgram) string {
	b, err := output("nvrtcGetProgramLog",
		func(n *C.size_t) C.kr_nvrtcResult { return C.kr_nvrtcGetProgramLogSize(prog, n) },
		func(b *C.char) C.kr_nvrtcResult { return C.kr_nvrtcGetProgramLog(prog, b) })
	if err != nil {
		return ""
	}
	return string(bytes.TrimRight(b, "\x00"))
}
