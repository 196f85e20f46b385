package cuda

// #include "kr_cuda.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// The driver keeps the current context per OS thread, and the Go scheduler
// moves goroutines between threads at will. Every call that needs a
// context therefore has to run on a goroutine that is locked to its thread
// (runtime.LockOSThread) and has made the context current on that thread.
// Do and Lock/Unlock below are the two ways to get there.

// Do runs fn on the calling goroutine, locked to its OS thread, with c
// current on that thread. It restores the thread's previous context (often
// none) and unlocks the thread afterwards. Do calls may nest, also with
// different contexts. fn must not start goroutines that call CUDA without
// their own Do.
func (c *Context) Do(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := c.usable(); err != nil {
		return err
	}
	var prev C.kr_CUcontext
	if err := check("cuCtxGetCurrent", C.kr_cuCtxGetCurrent(&prev)); err != nil {
		return err
	}
	if prev != c.h {
		if err := check("cuCtxSetCurrent", C.kr_cuCtxSetCurrent(c.h)); err != nil {
			return err
		}
		defer C.kr_cuCtxSetCurrent(prev)
	}
	return fn()
}

// Lock locks the calling goroutine to its OS thread and makes c current
// on it, for code that cannot be wrapped in a closure. It must be paired
// with Unlock on the same goroutine when it returns nil; on error the
// thread is already unlocked. Unlike Do, Lock does not restore the
// previous context.
func (c *Context) Lock() error {
	runtime.LockOSThread()
	if err := c.SetCurrent(); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	return nil
}

// Unlock undoes Lock: it unlocks the goroutine from its thread. The
// context stays current on that thread, which is harmless (the next Lock
// or Do on the thread sets its own).
func (c *Context) Unlock() { runtime.UnlockOSThread() }

// SetCurrent makes c current on the calling OS thread. It is only
// meaningful when the goroutine is already locked to its thread.
func (c *Context) SetCurrent() error {
	if err := c.usable(); err != nil {
		return err
	}
	return check("cuCtxSetCurrent", C.kr_cuCtxSetCurrent(c.h))
}

// currentContext returns the CUcontext current on the calling OS thread
// (nil if none).
func currentContext() (unsafe.Pointer, error) {
	if err := ready(); err != nil {
		return nil, err
	}
	var h C.kr_CUcontext
	if err := check("cuCtxGetCurrent", C.kr_cuCtxGetCurrent(&h)); err != nil {
		return nil, err
	}
	return unsafe.Pointer(h), nil
}
