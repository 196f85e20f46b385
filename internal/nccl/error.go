package nccl

/*
#include "nccl_shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
)

// ErrNilComm is returned by Comm methods called on a nil or destroyed
// communicator.
var ErrNilComm = errors.New("nil or destroyed NCCL communicator")

// Error is a failed NCCL call: the C function, the ncclResult_t it
// returned, NCCL's description of it and, where the library has
// ncclGetLastError (NCCL 2.13+), the last error message. Its text reads
// e.g. "ncclAllReduce: unhandled cuda error (run with NCCL_DEBUG=INFO for
// details) [last error: Cuda failure 'invalid argument']".
type Error struct {
	Func   string
	Result Result
	// Text is ncclGetErrorString's description (or the package's own when
	// the library is not loaded).
	Text string
	// Last is ncclGetLastError's message at the time of the error, "" when
	// there is none.
	Last string
}

// Error implements the error interface.
func (e *Error) Error() string {
	text := e.Text
	if text == "" {
		text = e.Result.Description()
	}
	s := e.Func + ": " + text
	if e.Last != "" {
		s += " [last error: " + e.Last + "]"
	}
	return s
}

// Description returns NCCL's description of the result
// (ncclGetErrorString) when the library is loaded, else the package's own.
func (r Result) Description() string {
	if Path() != "" {
		if p := C.kr_ncclGetErrorString(C.kr_ncclResult_t(r)); p != nil {
			return C.GoString(p)
		}
	}
	if i, ok := resultInfo[r]; ok {
		return i.text
	}
	return fmt.Sprintf("unknown NCCL result %d", int32(r))
}

// ResultOf extracts the NCCL result from err, reporting whether err wraps
// an *Error.
func ResultOf(err error) (Result, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Result, true
	}
	return 0, false
}

// check turns an ncclResult_t into nil or an *Error naming fn, with the
// last error of comm (which may be nil).
func check(fn string, r C.kr_ncclResult_t, comm C.kr_ncclComm_t) error {
	if r == 0 {
		return nil
	}
	e := &Error{Func: fn, Result: Result(r)}
	if p := C.kr_ncclGetErrorString(r); p != nil {
		e.Text = C.GoString(p)
	}
	if p := C.kr_ncclGetLastError(comm); p != nil {
		e.Last = C.GoString(p)
	}
	return e
}
