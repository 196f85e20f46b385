package cuda

// #include <stdlib.h>
// #include "kr_cuda.h"
import "C"

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// RawArg is a kernel argument passed by value as raw bytes, for parameters
// that are not scalars (a struct, a fixed-size array). Data must hold
// exactly the parameter's bytes in device (little-endian) layout. Align is
// the parameter's alignment in bytes, a power of two up to 16; 0 means 8.
type RawArg struct {
	Data  []byte
	Align int
}

// packedParams is a kernel argument list laid out in one byte slice.
type packedParams struct {
	blob    []byte // all argument values, each at its offset
	offsets []int  // where argument i starts in blob
	sizes   []int  // how many bytes argument i has
}

// packParams lays out args for cuLaunchKernel. Supported argument types:
// DevicePtr and uintptr (8 bytes), int8, uint8, bool (1), int16, uint16
// (2), int32, uint32, float32 (4), int64, uint64, float64 (8) and RawArg.
// int and uint are refused because their width says nothing about the
// kernel's parameter type; convert to int32 or int64. Each value is
// aligned to its natural alignment.
func packParams(args []any) (*packedParams, error) {
	p := &packedParams{offsets: make([]int, len(args)), sizes: make([]int, len(args))}
	for i, a := range args {
		var b []byte
		align := 0
		ne := binary.NativeEndian
		switch v := a.(type) {
		case DevicePtr:
			b = ne.AppendUint64(nil, uint64(v))
		case uintptr:
			b = ne.AppendUint64(nil, uint64(v))
		case int8:
			b = []byte{byte(v)}
		case uint8:
			b = []byte{v}
		case bool:
			b = []byte{0}
			if v {
				b[0] = 1
			}
		case int16:
			b = ne.AppendUint16(nil, uint16(v))
		case uint16:
			b = ne.AppendUint16(nil, v)
		case int32:
			b = ne.AppendUint32(nil, uint32(v))
		case uint32:
			b = ne.AppendUint32(nil, v)
		case float32:
			b = ne.AppendUint32(nil, math.Float32bits(v))
		case int64:
			b = ne.AppendUint64(nil, uint64(v))
		case uint64:
			b = ne.AppendUint64(nil, v)
		case float64:
			b = ne.AppendUint64(nil, math.Float64bits(v))
		case RawArg:
			if len(v.Data) == 0 {
				return nil, fmt.Errorf("cuda: kernel argument %d: empty RawArg", i)
			}
			align = v.Align
			if align == 0 {
				align = 8
			}
			if align < 0 || align > 16 || align&(align-1) != 0 {
				return nil, fmt.Errorf("cuda: kernel argument %d: RawArg alignment %d is not a power of two <= 16", i, v.Align)
			}
			b = v.Data
		case int, uint:
			return nil, fmt.Errorf("cuda: kernel argument %d: %T has no fixed width; use int32/int64 or uint32/uint64", i, a)
		case nil:
			return nil, fmt.Errorf("cuda: kernel argument %d is nil", i)
		default:
			return nil, fmt.Errorf("cuda: kernel argument %d: unsupported type %T", i, a)
		}
		if align == 0 {
			align = len(b) // scalars: natural alignment
		}
		off := (len(p.blob) + align - 1) &^ (align - 1)
		for len(p.blob) < off {
			p.blob = append(p.blob, 0)
		}
		p.offsets[i] = off
		p.sizes[i] = len(b)
		p.blob = append(p.blob, b...)
	}
	return p, nil
}

// paramBlock is a kernelParams array in C memory: cuLaunchKernel reads
// argument i through pointer i. Building it in C keeps Go pointers out of
// memory the driver reads, as cgo's pointer rules require.
type paramBlock struct {
	p *unsafe.Pointer // C void**; nil when there are no arguments
	n int
}

// newParamBlock copies p into C memory. The caller must call free.
func newParamBlock(p *packedParams) (*paramBlock, error) {
	n := len(p.offsets)
	if n == 0 {
		return &paramBlock{}, nil
	}
	offs := make([]C.size_t, n)
	for i, o := range p.offsets {
		offs[i] = C.size_t(o)
	}
	var blob unsafe.Pointer
	if len(p.blob) > 0 {
		blob = unsafe.Pointer(&p.blob[0])
	}
	ptrs := C.kr_params_new(blob, C.size_t(len(p.blob)), &offs[0], C.int(n))
	if ptrs == nil {
		return nil, fmt.Errorf("cuda: cannot allocate %d bytes for kernel arguments", len(p.blob))
	}
	return &paramBlock{p: ptrs, n: n}, nil
}

// params returns the array to hand to cuLaunchKernel.
func (b *paramBlock) params() *unsafe.Pointer { return b.p }

// arg returns a copy of the bytes argument i points to (for tests).
func (b *paramBlock) arg(i, size int) []byte {
	ptrs := unsafe.Slice(b.p, b.n)
	return C.GoBytes(ptrs[i], C.int(size))
}

func (b *paramBlock) free() {
	if b.p != nil {
		C.kr_params_free(b.p)
		b.p = nil
	}
}
