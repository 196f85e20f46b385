package cuda

// #include <stdlib.h>
// #include "kr_cuda.h"
import "C"

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by this package wrap them where they
// apply, so test with errors.Is.
var (
	// ErrNoDriver means the CUDA driver library could not be loaded (no
	// libcuda.so.1 on the library path, or only the toolkit's stub).
	ErrNoDriver = errors.New("cuda: driver library not available")
	// ErrNoDevice means the driver loaded but reports no usable device.
	ErrNoDevice = errors.New("cuda: no CUDA device")
	// ErrMissingSymbol means the driver library lacks a required entry
	// point (it is too old for this package).
	ErrMissingSymbol = errors.New("cuda: required driver entry point missing")
	// ErrUnsupported means an optional entry point is absent from this
	// driver, so the call cannot be made.
	ErrUnsupported = errors.New("cuda: not supported by this driver")
	// ErrDestroyed means a handle was used after Destroy, Free, Unload or
	// Release.
	ErrDestroyed = errors.New("cuda: handle already destroyed")
)

// Error is a driver call that returned something other than CUDA_SUCCESS.
type Error struct {
	Call string // driver function, e.g. "cuMemAlloc"
	Code int    // the CUresult value, e.g. CodeOutOfMemory
	Name string // the enum name, e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Msg  string // the driver's description, e.g. "out of memory"; may be empty
}

// Error formats e as "call: NAME (description)", for example
// "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
func (e *Error) Error() string {
	name := e.Name
	if name == "" {
		name = fmt.Sprintf("CUresult(%d)", e.Code)
	}
	s := name
	if e.Msg != "" {
		s += " (" + e.Msg + ")"
	}
	if e.Call != "" {
		s = e.Call + ": " + s
	}
	return s
}

// IsCode reports whether err is, or wraps, an [*Error] with the given code.
func IsCode(err error, code int) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// IsSticky reports whether err is, or wraps, an [*Error] whose code leaves
// the CUDA context unusable: a kernel faulted on the device (an illegal or
// misaligned address, an illegal instruction, a device-side assert, a
// hardware stack error, an invalid address space or PC, a launch failure,
// a timeout, tensor memory left allocated, an error the GPU contained) or
// an uncorrectable ECC error. cuda.h documents these as leaving the
// process in an inconsistent state: every later call in the context
// returns the same error, and only a new process can use the GPU again.
func IsSticky(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code {
	case CodeECCUncorrectable, CodeContained, CodeIllegalAddress, CodeLaunchTimeout, CodeAssert,
		CodeHardwareStackError, CodeIllegalInstruction, CodeMisalignedAddress, CodeInvalidAddressSpace,
		CodeInvalidPC, CodeLaunchFailed, CodeTensorMemoryLeak:
		return true
	}
	return false
}

// CUresult values that callers may want to test for. The values are fixed
// by the driver ABI; header_test.go checks them against cuda.h.
const (
	CodeSuccess                  = 0
	CodeInvalidValue             = 1
	CodeOutOfMemory              = 2
	CodeNotInitialized           = 3
	CodeDeinitialized            = 4
	CodeStubLibrary              = 34
	CodeNoDevice                 = 100
	CodeInvalidDevice            = 101
	CodeInvalidImage             = 200
	CodeInvalidContext           = 201
	CodeNoBinaryForGPU           = 209
	CodeECCUncorrectable         = 214
	CodeInvalidPTX               = 218
	CodeUnsupportedPTXVersion    = 222
	CodeContained                = 226
	CodeInvalidHandle            = 400
	CodeNotFound                 = 500
	CodeNotReady                 = 600
	CodeIllegalAddress           = 700
	CodeLaunchOutOfResources     = 701
	CodeLaunchTimeout            = 702
	CodeAssert                   = 710
	CodeHardwareStackError       = 714
	CodeIllegalInstruction       = 715
	CodeMisalignedAddress        = 716
	CodeInvalidAddressSpace      = 717
	CodeInvalidPC                = 718
	CodeLaunchFailed             = 719
	CodeTensorMemoryLeak         = 721
	CodeNotPermitted             = 800
	CodeNotSupported             = 801
	CodeStreamCaptureUnsupported = 900
	CodeStreamCaptureInvalidated = 901
	CodeStreamCaptureWrongThread = 908
	CodeUnknown                  = 999
)

// errorNames names every CUresult of CUDA 13.0, for formatting errors when
// the driver cannot be asked (cuGetErrorName is preferred when loaded).
var errorNames = map[int]string{
	0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
	3: "CUDA_ERROR_NOT_INITIALIZED", 4: "CUDA_ERROR_DEINITIALIZED",
	5: "CUDA_ERROR_PROFILER_DISABLED", 6: "CUDA_ERROR_PROFILER_NOT_INITIALIZED",
	7: "CUDA_ERROR_PROFILER_ALREADY_STARTED", 8: "CUDA_ERROR_PROFILER_ALREADY_STOPPED",
	34: "CUDA_ERROR_STUB_LIBRARY", 36: "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
	46: "CUDA_ERROR_DEVICE_UNAVAILABLE", 100: "CUDA_ERROR_NO_DEVICE",
	101: "CUDA_ERROR_INVALID_DEVICE", 102: "CUDA_ERROR_DEVICE_NOT_LICENSED",
	200: "CUDA_ERROR_INVALID_IMAGE", 201: "CUDA_ERROR_INVALID_CONTEXT",
	202: "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", 205: "CUDA_ERROR_MAP_FAILED",
	206: "CUDA_ERROR_UNMAP_FAILED", 207: "CUDA_ERROR_ARRAY_IS_MAPPED",
	208: "CUDA_ERROR_ALREADY_MAPPED", 209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
	210: "CUDA_ERROR_ALREADY_ACQUIRED", 211: "CUDA_ERROR_NOT_MAPPED",
	212: "CUDA_ERROR_NOT_MAPPED_AS_ARRAY", 213: "CUDA_ERROR_NOT_MAPPED_AS_POINTER",
	214: "CUDA_ERROR_ECC_UNCORRECTABLE", 215: "CUDA_ERROR_UNSUPPORTED_LIMIT",
	216: "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", 217: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
	218: "CUDA_ERROR_INVALID_PTX", 219: "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT",
	220: "CUDA_ERROR_NVLINK_UNCORRECTABLE", 221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
	222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 223: "CUDA_ERROR_JIT_COMPILATION_DISABLED",
	224: "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", 225: "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC",
	226: "CUDA_ERROR_CONTAINED",
	300: "CUDA_ERROR_INVALID_SOURCE", 301: "CUDA_ERROR_FILE_NOT_FOUND",
	302: "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", 303: "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
	304: "CUDA_ERROR_OPERATING_SYSTEM",
	400: "CUDA_ERROR_INVALID_HANDLE", 401: "CUDA_ERROR_ILLEGAL_STATE", 402: "CUDA_ERROR_LOSSY_QUERY",
	500: "CUDA_ERROR_NOT_FOUND", 600: "CUDA_ERROR_NOT_READY",
	700: "CUDA_ERROR_ILLEGAL_ADDRESS", 701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	702: "CUDA_ERROR_LAUNCH_TIMEOUT", 703: "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING",
	704: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", 705: "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
	708: "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", 709: "CUDA_ERROR_CONTEXT_IS_DESTROYED",
	710: "CUDA_ERROR_ASSERT", 711: "CUDA_ERROR_TOO_MANY_PEERS",
	712: "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", 713: "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
	714: "CUDA_ERROR_HARDWARE_STACK_ERROR", 715: "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	716: "CUDA_ERROR_MISALIGNED_ADDRESS", 717: "CUDA_ERROR_INVALID_ADDRESS_SPACE",
	718: "CUDA_ERROR_INVALID_PC", 719: "CUDA_ERROR_LAUNCH_FAILED",
	720: "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", 721: "CUDA_ERROR_TENSOR_MEMORY_LEAK",
	800: "CUDA_ERROR_NOT_PERMITTED", 801: "CUDA_ERROR_NOT_SUPPORTED",
	802: "CUDA_ERROR_SYSTEM_NOT_READY", 803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", 805: "CUDA_ERROR_MPS_CONNECTION_FAILED",
	806: "CUDA_ERROR_MPS_RPC_FAILURE", 807: "CUDA_ERROR_MPS_SERVER_NOT_READY",
	808: "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", 809: "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED",
	810: "CUDA_ERROR_MPS_CLIENT_TERMINATED", 811: "CUDA_ERROR_CDP_NOT_SUPPORTED",
	812: "CUDA_ERROR_CDP_VERSION_MISMATCH",
	900: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", 901: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
	902: "CUDA_ERROR_STREAM_CAPTURE_MERGE", 903: "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
	904: "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", 905: "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
	906: "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", 907: "CUDA_ERROR_CAPTURED_EVENT",
	908: "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", 909: "CUDA_ERROR_TIMEOUT",
	910: "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", 911: "CUDA_ERROR_EXTERNAL_DEVICE",
	912: "CUDA_ERROR_INVALID_CLUSTER_SIZE", 913: "CUDA_ERROR_FUNCTION_NOT_LOADED",
	914: "CUDA_ERROR_INVALID_RESOURCE_TYPE", 915: "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION",
	916: "CUDA_ERROR_KEY_ROTATION",
	999: "CUDA_ERROR_UNKNOWN",
}

// ErrorName returns the CUDA_ERROR_* name of code: the driver's answer when
// it is loaded and knows the code, else this package's table, else "".
func ErrorName(code int) string {
	if s, ok := driverText(func(s **C.char) C.kr_CUresult { return C.kr_cuGetErrorName(C.kr_CUresult(code), s) }); ok {
		return s
	}
	return errorNames[code]
}

// errorString returns the driver's description of code, or "".
func errorString(code int) string {
	s, _ := driverText(func(s **C.char) C.kr_CUresult { return C.kr_cuGetErrorString(C.kr_CUresult(code), s) })
	return s
}

// driverText returns the string that get, a cuGetError* call, stores, and
// true, when the driver is loaded and get succeeds with a non-NULL string;
// else "" and false.
func driverText(get func(s **C.char) C.kr_CUresult) (string, bool) {
	if loaded() {
		var s *C.char
		if get(&s) == C.KR_CUDA_SUCCESS && s != nil {
			return C.GoString(s), true
		}
	}
	return "", false
}

// check turns a CUresult into nil or an *Error for call.
func check(call string, r C.kr_CUresult) error {
	if r == C.KR_CUDA_SUCCESS {
		return nil
	}
	return newError(call, int(r))
}

// newError builds the *Error for a failed call.
func newError(call string, code int) *Error {
	return &Error{Call: call, Code: code, Name: ErrorName(code), Msg: errorString(code)}
}
