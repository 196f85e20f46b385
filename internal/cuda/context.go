package cuda

// #include "kr_cuda.h"
import "C"

import (
	"sync"
	"unsafe"

	"github.com/kreplay/kreplay/internal/onstack"
)

// Context is a retained reference to a device's primary context, the
// context the CUDA runtime (and so PyTorch) also uses. Retaining it does
// not make it current: see [Context.Do] for the threading rule.
type Context struct {
	dev Device
	h   C.kr_CUcontext

	mu       sync.Mutex
	released bool
}

// RetainPrimaryContext retains d's primary context, creating it on first
// use. Each successful call must be paired with [Context.Release].
func (d Device) RetainPrimaryContext() (*Context, error) {
	if err := ready(); err != nil {
		return nil, err
	}
	var h C.kr_CUcontext
	if err := check("cuDevicePrimaryCtxRetain", C.kr_cuDevicePrimaryCtxRetain(&h, C.kr_CUdevice(d))); err != nil {
		return nil, err
	}
	retainMu.Lock()
	retains[d]++
	retainMu.Unlock()
	onstack.Fix() // handlers the driver installs with a context
	return &Context{dev: d, h: h}, nil
}

// Primary contexts are destroyed when their last reference goes, and a new
// one may get the same handle value; caches of modules and functions key
// on ContextKey, which tells the two apart.
var (
	retainMu sync.Mutex
	retains  = map[Device]int{}
	epochs   = map[Device]uint64{}
)

// ContextKey identifies one lifetime of a context: a context destroyed and
// created again (for example a primary context released by its last user
// and retained anew) gets a new key even if its handle is the same.
type ContextKey struct {
	h     unsafe.Pointer
	epoch uint64
}

// CurrentContextKey returns the key of the context current on the calling
// OS thread.
func CurrentContextKey() (ContextKey, error) {
	h, err := currentContext()
	if err != nil {
		return ContextKey{}, err
	}
	retainMu.Lock()
	defer retainMu.Unlock()
	var epoch uint64
	for _, e := range epochs {
		epoch += e // any primary context's end invalidates: cheap and safe
	}
	return ContextKey{h: h, epoch: epoch}, nil
}

// Release drops the reference taken by RetainPrimaryContext. The primary
// context is destroyed when its last reference goes; every handle created
// in it becomes invalid. A second Release is a no-op.
func (c *Context) Release() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return nil
	}
	if err := check("cuDevicePrimaryCtxRelease", C.kr_cuDevicePrimaryCtxRelease(C.kr_CUdevice(c.dev))); err != nil {
		return err
	}
	c.released = true
	retainMu.Lock()
	if retains[c.dev]--; retains[c.dev] <= 0 {
		delete(retains, c.dev)
		epochs[c.dev]++
	}
	retainMu.Unlock()
	return nil
}

// Device returns the device the context belongs to.
func (c *Context) Device() Device { return c.dev }

// Handle returns the CUcontext, for passing to other libraries.
func (c *Context) Handle() unsafe.Pointer {
	if c == nil {
		return nil
	}
	return unsafe.Pointer(c.h)
}

// Synchronize blocks until all work in the context has finished. Like
// every context call it must run where the context is current (inside
// [Context.Do]).
func (c *Context) Synchronize() error {
	if err := c.usable(); err != nil {
		return err
	}
	return check("cuCtxSynchronize", C.kr_cuCtxSynchronize())
}

// usable returns an error if the driver is not loaded or c was released.
func (c *Context) usable() error {
	if err := ready(); err != nil {
		return err
	}
	if c == nil {
		return ErrDestroyed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return ErrDestroyed
	}
	return nil
}
