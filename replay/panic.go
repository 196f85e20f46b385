package replay

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// PanicError is the error of a panic in a function Device.Do ran, or in a
// signature's replay under RunSet. The panic may have left the device's
// CUDA context mid-capture, with work in flight or with a resource half
// made, so RunSet treats it as a lost context (ContextLostError): nothing
// more is measured on the device, and a new process goes on.
type PanicError struct {
	// Value is what was passed to panic; Stack the panicking goroutine's
	// stack.
	Value any
	Stack []byte
}

// Error formats e as "panic: VALUE" followed by the stack.
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v\n%s", e.Value, e.Stack) }

// recovered returns the PanicError of r, a recover() value, or nil when r
// is nil. Call it in the deferred function that recovers.
func recovered(r any) error {
	if r == nil {
		return nil
	}
	return &PanicError{Value: r, Stack: debug.Stack()}
}

// isPanic reports whether err is, or wraps, a PanicError.
func isPanic(err error) bool {
	var pe *PanicError
	return errors.As(err, &pe)
}
