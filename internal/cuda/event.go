package cuda

// #include "kr_cuda.h"
import "C"

import (
	"errors"
	"time"
	"unsafe"
)

// Event flag values (CUevent_flags).
const (
	eventDefault       = 0 // CU_EVENT_DEFAULT
	eventBlockingSync  = 1 // CU_EVENT_BLOCKING_SYNC
	eventDisableTiming = 2 // CU_EVENT_DISABLE_TIMING
)

// Event is a CUDA event. Methods must be called inside [Context.Do].
type Event struct {
	h         C.kr_CUevent
	timing    bool
	destroyed bool
}

// NewEvent creates an event in the current context. With timing false the
// event is created with CU_EVENT_DISABLE_TIMING, which makes it cheaper to
// record and wait for but unusable with [Elapsed].
func NewEvent(timing bool) (*Event, error) {
	if err := ready(); err != nil {
		return nil, err
	}
	flags := C.uint(eventDefault)
	if !timing {
		flags = eventDisableTiming
	}
	var h C.kr_CUevent
	if err := check("cuEventCreate", C.kr_cuEventCreate(&h, flags)); err != nil {
		return nil, err
	}
	return &Event{h: h, timing: timing}, nil
}

func (e *Event) handle() (C.kr_CUevent, error) {
	if e == nil || e.destroyed {
		return nil, ErrDestroyed
	}
	return e.h, nil
}

// Handle returns the CUevent as an unsafe.Pointer, for other libraries.
func (e *Event) Handle() unsafe.Pointer {
	if e == nil {
		return nil
	}
	return unsafe.Pointer(e.h)
}

// Record records the event on stream s (nil: the legacy default stream).
func (e *Event) Record(s *Stream) error {
	if err := ready(); err != nil {
		return err
	}
	h, err := e.handle()
	if err != nil {
		return err
	}
	sh, err := s.handle()
	if err != nil {
		return err
	}
	return check("cuEventRecord", C.kr_cuEventRecord(h, sh))
}

// Synchronize blocks until the work captured by the last Record finished.
func (e *Event) Synchronize() error {
	if err := ready(); err != nil {
		return err
	}
	h, err := e.handle()
	if err != nil {
		return err
	}
	return check("cuEventSynchronize", C.kr_cuEventSynchronize(h))
}

// Query reports, without blocking, whether the work captured by the last
// Record has finished.
func (e *Event) Query() (bool, error) {
	if err := ready(); err != nil {
		return false, err
	}
	h, err := e.handle()
	if err != nil {
		return false, err
	}
	return queryResult("cuEventQuery", C.kr_cuEventQuery(h))
}

// Destroy destroys the event; a second Destroy is a no-op.
func (e *Event) Destroy() error {
	return destroyOnce("cuEventDestroy", e == nil || e.destroyed,
		func() C.kr_CUresult { return C.kr_cuEventDestroy(e.h) },
		func() {
			e.destroyed = true
			e.h = nil
		})
}

// ElapsedMillis returns the time in milliseconds between two recorded and
// completed timing events (resolution about 0.5 µs).
func ElapsedMillis(start, end *Event) (float32, error) {
	if err := ready(); err != nil {
		return 0, err
	}
	a, err := start.handle()
	if err != nil {
		return 0, err
	}
	b, err := end.handle()
	if err != nil {
		return 0, err
	}
	if !start.timing || !end.timing {
		return 0, errors.New("cuda: Elapsed needs events created with timing")
	}
	var ms C.float
	if err := check("cuEventElapsedTime", C.kr_cuEventElapsedTime(&ms, a, b)); err != nil {
		return 0, err
	}
	return float32(ms), nil
}

// Elapsed is ElapsedMillis as a time.Duration.
func Elapsed(start, end *Event) (time.Duration, error) {
	ms, err := ElapsedMillis(start, end)
	if err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}
