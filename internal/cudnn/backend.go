package cudnn

/*
#include <stdbool.h>
#include <stdlib.h>
#include "cudnn_shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Descriptor is a cudnnBackendDescriptor_t of the backend (graph) API:
// created, given its attributes, finalized, then read or used.
type Descriptor struct {
	d   C.kr_cudnnBackendDescriptor_t
	typ DescriptorType
}

// NewDescriptor loads the library if needed and creates a descriptor of
// type t (cudnnBackendCreateDescriptor).
func NewDescriptor(t DescriptorType) (*Descriptor, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	var d C.kr_cudnnBackendDescriptor_t
	if err := check(fmt.Sprintf("cudnnBackendCreateDescriptor(%d)", t), C.kr_cudnnBackendCreateDescriptor(C.int(t), &d)); err != nil {
		return nil, err
	}
	return &Descriptor{d: d, typ: t}, nil
}

// Destroy releases the descriptor; a nil or destroyed one is a no-op.
func (d *Descriptor) Destroy() error {
	if d == nil || d.d == nil {
		return nil
	}
	err := check("cudnnBackendDestroyDescriptor", C.kr_cudnnBackendDestroyDescriptor(d.d))
	d.d = nil
	return err
}

func (d *Descriptor) dead() bool { return d == nil || d.d == nil }

// set is the body of the Set methods: n elements of type t at p.
func (d *Descriptor) set(a Attribute, t AttrType, n int, p unsafe.Pointer) error {
	if d.dead() {
		return fmt.Errorf("cudnnBackendSetAttribute: %w", ErrNil)
	}
	if err := check("cudnnBackendSetAttribute", C.kr_cudnnBackendSetAttribute(d.d, C.int(a), C.int(t), C.int64_t(n), p)); err != nil {
		return fmt.Errorf("%w (descriptor type %d, attribute %d)", err, d.typ, a)
	}
	return nil
}

// SetInt64s sets an attribute of INT64 elements.
func (d *Descriptor) SetInt64s(a Attribute, v ...int64) error {
	if len(v) == 0 {
		return fmt.Errorf("attribute %d: no value", a)
	}
	cv := make([]C.int64_t, len(v))
	for i, x := range v {
		cv[i] = C.int64_t(x)
	}
	return d.set(a, TypeInt64, len(v), unsafe.Pointer(&cv[0]))
}

// SetEnum sets an attribute of one enumerator of type t (a data type, a
// pointwise mode, a heuristics mode, a reduction operator).
func (d *Descriptor) SetEnum(a Attribute, t AttrType, v int32) error {
	cv := C.int(v)
	return d.set(a, t, 1, unsafe.Pointer(&cv))
}

// SetBool sets a BOOLEAN attribute.
func (d *Descriptor) SetBool(a Attribute, v bool) error {
	cv := C.bool(v)
	return d.set(a, TypeBoolean, 1, unsafe.Pointer(&cv))
}

// SetDescriptors sets an attribute of BACKEND_DESCRIPTOR elements.
func (d *Descriptor) SetDescriptors(a Attribute, ds ...*Descriptor) error {
	if len(ds) == 0 {
		return fmt.Errorf("attribute %d: no descriptor", a)
	}
	// C memory: the array holds C pointers and is read during the call only.
	arr := (*[1 << 20]C.kr_cudnnBackendDescriptor_t)(C.malloc(C.size_t(len(ds)) * C.size_t(unsafe.Sizeof(C.kr_cudnnBackendDescriptor_t(nil)))))[:len(ds):len(ds)]
	defer C.free(unsafe.Pointer(&arr[0]))
	for i, x := range ds {
		if x.dead() {
			return fmt.Errorf("attribute %d: descriptor %d: %w", a, i, ErrNil)
		}
		arr[i] = x.d
	}
	return d.set(a, TypeBackendDescriptor, len(ds), unsafe.Pointer(&arr[0]))
}

// SetHandle sets a HANDLE attribute.
func (d *Descriptor) SetHandle(a Attribute, h *Handle) error {
	if h == nil || h.h == nil {
		return fmt.Errorf("attribute %d: handle: %w", a, ErrNil)
	}
	hv := h.h
	return d.set(a, TypeHandle, 1, unsafe.Pointer(&hv))
}

// Finalize finalizes the descriptor (cudnnBackendFinalize): its
// attributes are checked and it becomes usable.
func (d *Descriptor) Finalize() error {
	if d.dead() {
		return fmt.Errorf("cudnnBackendFinalize: %w", ErrNil)
	}
	if err := check("cudnnBackendFinalize", C.kr_cudnnBackendFinalize(d.d)); err != nil {
		return fmt.Errorf("%w (descriptor type %d)", err, d.typ)
	}
	return nil
}

// Int64 reads an attribute of one INT64 element.
func (d *Descriptor) Int64(a Attribute) (int64, error) {
	if d.dead() {
		return 0, fmt.Errorf("cudnnBackendGetAttribute: %w", ErrNil)
	}
	var v, n C.int64_t
	if err := check("cudnnBackendGetAttribute", C.kr_cudnnBackendGetAttribute(d.d, C.int(a), C.int(TypeInt64), 1, &n, unsafe.Pointer(&v))); err != nil {
		return 0, fmt.Errorf("%w (descriptor type %d, attribute %d)", err, d.typ, a)
	}
	return int64(v), nil
}

// Count reads how many elements an attribute of descriptors holds.
func (d *Descriptor) Count(a Attribute) (int, error) {
	if d.dead() {
		return 0, fmt.Errorf("cudnnBackendGetAttribute: %w", ErrNil)
	}
	var n C.int64_t
	if err := check("cudnnBackendGetAttribute", C.kr_cudnnBackendGetAttribute(d.d, C.int(a), C.int(TypeBackendDescriptor), 0, &n, nil)); err != nil {
		return 0, fmt.Errorf("%w (descriptor type %d, attribute %d)", err, d.typ, a)
	}
	return int(n), nil
}

// Descriptors reads up to n elements of a descriptor attribute into new
// descriptors of type t (the engine configs of heuristics). The caller
// destroys them.
func (d *Descriptor) Descriptors(a Attribute, t DescriptorType, n int) ([]*Descriptor, error) {
	if d.dead() {
		return nil, fmt.Errorf("cudnnBackendGetAttribute: %w", ErrNil)
	}
	if n <= 0 {
		return nil, nil
	}
	arr := (*[1 << 20]C.kr_cudnnBackendDescriptor_t)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(C.kr_cudnnBackendDescriptor_t(nil)))))[:n:n]
	defer C.free(unsafe.Pointer(&arr[0]))
	var got C.int64_t
	st := C.kr_cudnnGetDescriptors(d.d, C.int(a), C.int(TypeBackendDescriptor), C.int(t), C.int64_t(n), &got, &arr[0])
	var out []*Descriptor
	for i := range arr {
		if arr[i] != nil {
			out = append(out, &Descriptor{d: arr[i], typ: t})
		}
	}
	if err := check("cudnnBackendGetAttribute", st); err != nil {
		for _, x := range out {
			x.Destroy()
		}
		return nil, fmt.Errorf("%w (descriptor type %d, attribute %d)", err, d.typ, a)
	}
	for _, x := range out[min(int(got), len(out)):] {
		x.Destroy()
	}
	return out[:min(int(got), len(out))], nil
}

// execute runs plan with pack on h's stream (cudnnBackendExecute).
func execute(h *Handle, plan, pack *Descriptor) error {
	if h == nil || h.h == nil || plan.dead() || pack.dead() {
		return fmt.Errorf("cudnnBackendExecute: %w", ErrNil)
	}
	return check("cudnnBackendExecute", C.kr_cudnnBackendExecute(h.h, plan.d, pack.d))
}
