package cublas

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// Status is a cublasStatus_t value.
type Status int32

// cublasStatus_t values, from cublas_api.h (identical in CUDA 12.6 and
// 13.0; verified against the header text).
const (
	StatusSuccess         Status = 0
	StatusNotInitialized  Status = 1
	StatusAllocFailed     Status = 3
	StatusInvalidValue    Status = 7
	StatusArchMismatch    Status = 8
	StatusMappingError    Status = 11
	StatusExecutionFailed Status = 13
	StatusInternalError   Status = 14
	StatusNotSupported    Status = 15
	StatusLicenseError    Status = 16
)

var statusNames = map[Status]string{
	StatusSuccess:         "CUBLAS_STATUS_SUCCESS",
	StatusNotInitialized:  "CUBLAS_STATUS_NOT_INITIALIZED",
	StatusAllocFailed:     "CUBLAS_STATUS_ALLOC_FAILED",
	StatusInvalidValue:    "CUBLAS_STATUS_INVALID_VALUE",
	StatusArchMismatch:    "CUBLAS_STATUS_ARCH_MISMATCH",
	StatusMappingError:    "CUBLAS_STATUS_MAPPING_ERROR",
	StatusExecutionFailed: "CUBLAS_STATUS_EXECUTION_FAILED",
	StatusInternalError:   "CUBLAS_STATUS_INTERNAL_ERROR",
	StatusNotSupported:    "CUBLAS_STATUS_NOT_SUPPORTED",
	StatusLicenseError:    "CUBLAS_STATUS_LICENSE_ERROR",
}

var statusTexts = map[Status]string{
	StatusSuccess:         "the operation completed successfully",
	StatusNotInitialized:  "the library was not initialized",
	StatusAllocFailed:     "the resource allocation failed",
	StatusInvalidValue:    "an invalid value was used as an argument",
	StatusArchMismatch:    "the device lacks a required architectural feature",
	StatusMappingError:    "an access to GPU memory space failed",
	StatusExecutionFailed: "the GPU program failed to execute",
	StatusInternalError:   "an internal cuBLAS operation failed",
	StatusNotSupported:    "the requested functionality is not supported",
	StatusLicenseError:    "the requested functionality requires a license",
}

// statusFuncs are the loaded library's cublasGetStatusName/String
// (cuBLAS 11.4+); they return "" when the library lacks them.
type statusFuncs struct {
	name, text func(Status) string
}

// libStatus is set by Load.
var libStatus atomic.Pointer[statusFuncs]

// String returns the enumerator name, e.g. "CUBLAS_STATUS_NOT_SUPPORTED".
// Known codes use the package's own table; codes it does not know are
// named by the loaded library's cublasGetStatusName when available, and
// otherwise as "CUBLAS_STATUS_<n>".
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	if f := libStatus.Load(); f != nil {
		if n := f.name(s); n != "" && n != "<unknown>" {
			return n
		}
	}
	return fmt.Sprintf("CUBLAS_STATUS_%d", int32(s))
}

// Description returns a human-readable explanation of the status, from
// cublasGetStatusString when the library provides it.
func (s Status) Description() string {
	if f := libStatus.Load(); f != nil {
		if t := f.text(s); t != "" && t != "<unknown>" {
			return t
		}
	}
	if t, ok := statusTexts[s]; ok {
		return t
	}
	return "unknown cuBLAS status"
}

// Error is a failed cuBLAS call: the C function name and the status it
// returned. Its text reads e.g. "cublasGemmEx: CUBLAS_STATUS_NOT_SUPPORTED".
type Error struct {
	Func   string
	Status Status
}

// Error implements the error interface.
func (e *Error) Error() string { return e.Func + ": " + e.Status.String() }

// StatusOf extracts the cuBLAS status from err, reporting whether err
// wraps an *Error.
func StatusOf(err error) (Status, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Status, true
	}
	return 0, false
}
