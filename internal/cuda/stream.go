package cuda

// #include "kr_cuda.h"
import "C"

import "unsafe"

// Stream flag values (CUstream_flags).
const (
	streamDefault     = 0 // CU_STREAM_DEFAULT
	streamNonBlocking = 1 // CU_STREAM_NON_BLOCKING
)

// Stream is a CUDA stream. A nil *Stream stands for the legacy default
// (NULL) stream, which synchronizes with every blocking stream of the
// context. Methods must be called inside [Context.Do] (or Lock/Unlock).
type Stream struct {
	h         C.kr_CUstream
	destroyed bool
}

// NewStream creates a stream that does not synchronize with the legacy
// default stream (CU_STREAM_NON_BLOCKING), in the current context.
func NewStream() (*Stream, error) {
	if err := ready(); err != nil {
		return nil, err
	}
	var h C.kr_CUstream
	if err := check("cuStreamCreate", C.kr_cuStreamCreate(&h, streamNonBlocking)); err != nil {
		return nil, err
	}
	return &Stream{h: h}, nil
}

// handle returns the CUstream to pass to the driver (NULL for a nil s).
func (s *Stream) handle() (C.kr_CUstream, error) {
	if s == nil {
		return nil, nil
	}
	if s.destroyed {
		return nil, ErrDestroyed
	}
	return s.h, nil
}

// Handle returns the CUstream as an unsafe.Pointer, for other libraries
// (nil for the legacy default stream).
func (s *Stream) Handle() unsafe.Pointer {
	if s == nil {
		return nil
	}
	return unsafe.Pointer(s.h)
}

// Synchronize blocks until all work queued on s has finished.
func (s *Stream) Synchronize() error {
	if err := ready(); err != nil {
		return err
	}
	h, err := s.handle()
	if err != nil {
		return err
	}
	return check("cuStreamSynchronize", C.kr_cuStreamSynchronize(h))
}

// Query reports whether all work queued on s has finished, without
// blocking.
func (s *Stream) Query() (bool, error) {
	if err := ready(); err != nil {
		return false, err
	}
	h, err := s.handle()
	if err != nil {
		return false, err
	}
	return queryResult("cuStreamQuery", C.kr_cuStreamQuery(h))
}

// Destroy destroys the stream. Work already queued still runs. Destroying
// a nil or already destroyed stream is a no-op.
func (s *Stream) Destroy() error {
	return destroyOnce("cuStreamDestroy", s == nil || s.destroyed,
		func() C.kr_CUresult { return C.kr_cuStreamDestroy(s.h) },
		func() {
			s.destroyed = true
			s.h = nil
		})
}

// queryResult turns the result r of a query call (cuStreamQuery,
// cuEventQuery) into whether the work finished: true for success, false
// for CUDA_ERROR_NOT_READY, else an error for call.
func queryResult(call string, r C.kr_CUresult) (bool, error) {
	switch r {
	case C.KR_CUDA_SUCCESS:
		return true, nil
	case CodeNotReady:
		return false, nil
	default:
		return false, check(call, r)
	}
}
