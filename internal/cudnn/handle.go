package cudnn

/*
#include <stdlib.h>
#include "cudnn_shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// ErrNil is returned by methods called on a nil or destroyed handle,
// descriptor or plan.
var ErrNil = errors.New("nil or destroyed cuDNN object")

// Error is a failed cuDNN call: the function, its status and the name
// cudnnGetErrorString gives it, and what cudnnGetLastErrorString said
// (cuDNN 9; often the reason a descriptor did not finalize).
type Error struct {
	Func   string
	Status int
	Name   string
	Detail string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s (%d)", e.Func, e.Name, e.Status)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// check turns a status into an *Error naming fn, or nil on success.
func check(fn string, st C.kr_cudnnStatus_t) error {
	if st == 0 {
		return nil
	}
	e := &Error{Func: fn, Status: int(st), Name: C.GoString(C.kr_cudnnGetErrorString(st))}
	buf := (*C.char)(C.malloc(1024))
	defer C.free(unsafe.Pointer(buf))
	C.kr_cudnnGetLastErrorString(buf, 1024)
	e.Detail = C.GoString(buf)
	return e
}

// Handle is a cudnnHandle_t. It must not be used by several goroutines at
// once.
type Handle struct {
	h C.kr_cudnnHandle_t
}

// Create loads the library if needed and creates a handle (cudnnCreate)
// in the calling thread's current CUDA context.
func Create() (*Handle, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	var h C.kr_cudnnHandle_t
	if err := check("cudnnCreate", C.kr_cudnnCreate(&h)); err != nil {
		return nil, err
	}
	return &Handle{h: h}, nil
}

// SetStream makes the handle's work run on stream (a CUstream; nil is the
// default stream).
func (h *Handle) SetStream(stream unsafe.Pointer) error {
	if h == nil || h.h == nil {
		return fmt.Errorf("cudnnSetStream: %w", ErrNil)
	}
	return check("cudnnSetStream", C.kr_cudnnSetStream(h.h, stream))
}

// Destroy releases the handle (cudnnDestroy); a nil or destroyed handle
// is a no-op.
func (h *Handle) Destroy() error {
	if h == nil || h.h == nil {
		return nil
	}
	err := check("cudnnDestroy", C.kr_cudnnDestroy(h.h))
	h.h = nil
	return err
}
