package cublaslt

/*
#include "cublaslt_shim.h"
*/
import "C"

import (
	"encoding/binary"
	"unsafe"

	"github.com/kreplay/kreplay/internal/cublas"
)

// Value encoders for attribute setters (native byte order, C sizes).
func i32(v int32) []byte   { return binary.NativeEndian.AppendUint32(nil, uint32(v)) }
func u32(v uint32) []byte  { return binary.NativeEndian.AppendUint32(nil, v) }
func i64(v int64) []byte   { return binary.NativeEndian.AppendUint64(nil, uint64(v)) }
func u64(v uint64) []byte  { return binary.NativeEndian.AppendUint64(nil, v) }
func ptr(p uintptr) []byte { return binary.NativeEndian.AppendUint64(nil, uint64(p)) }
func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// MatmulDesc is a cublasLtMatmulDesc_t, the description of one matmul
// operation (compute and scale types, transposes, epilogue, ...).
type MatmulDesc struct {
	d C.kr_ltMatmulDesc_t
}

// NewMatmulDesc creates a matmul descriptor (cublasLtMatmulDescCreate).
// scale is the type of alpha and beta (see cublas.ComputeType.ScaleType).
func NewMatmulDesc(compute cublas.ComputeType, scale cublas.DataType) (*MatmulDesc, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	var d C.kr_ltMatmulDesc_t
	if err := check("cublasLtMatmulDescCreate", C.kr_ltMatmulDescCreate(&d, C.int(compute), C.int(scale))); err != nil {
		return nil, err
	}
	return &MatmulDesc{d: d}, nil
}

// Destroy releases the descriptor (cublasLtMatmulDescDestroy); nil or
// already destroyed is a no-op.
func (d *MatmulDesc) Destroy() error {
	return destroy("cublasLtMatmulDescDestroy", d == nil || d.d == nil,
		func() C.kr_ltStatus_t { return C.kr_ltMatmulDescDestroy(d.d) },
		func() { d.d = nil })
}

// SetAttribute sets attr to the raw bytes of its C value
// (cublasLtMatmulDescSetAttribute). The typed setters are easier to use.
func (d *MatmulDesc) SetAttribute(attr MatmulDescAttribute, value []byte) error {
	return setAttribute("cublasLtMatmulDescSetAttribute", d == nil || d.d == nil, int32(attr), value,
		func(a C.int, data unsafe.Pointer, n C.size_t) C.kr_ltStatus_t {
			return C.kr_ltMatmulDescSetAttribute(d.d, a, data, n)
		})
}

// GetAttribute reads attr into buf and returns the number of bytes the
// attribute has (cublasLtMatmulDescGetAttribute).
func (d *MatmulDesc) GetAttribute(attr MatmulDescAttribute, buf []byte) (int, error) {
	return getAttribute("cublasLtMatmulDescGetAttribute", d == nil || d.d == nil, int32(attr), buf,
		func(a C.int, data unsafe.Pointer, n C.size_t, written *C.size_t) C.kr_ltStatus_t {
			return C.kr_ltMatmulDescGetAttribute(d.d, a, data, n, written)
		})
}

// SetInt32 sets an int32-valued attribute.
func (d *MatmulDesc) SetInt32(attr MatmulDescAttribute, v int32) error {
	return d.SetAttribute(attr, i32(v))
}

// SetUint32 sets a uint32-valued attribute.
func (d *MatmulDesc) SetUint32(attr MatmulDescAttribute, v uint32) error {
	return d.SetAttribute(attr, u32(v))
}

// SetInt64 sets an int64-valued attribute.
func (d *MatmulDesc) SetInt64(attr MatmulDescAttribute, v int64) error {
	return d.SetAttribute(attr, i64(v))
}

// SetPointer sets a pointer-valued attribute to the device pointer p.
func (d *MatmulDesc) SetPointer(attr MatmulDescAttribute, p uintptr) error {
	return d.SetAttribute(attr, ptr(p))
}

// SetTransA sets CUBLASLT_MATMUL_DESC_TRANSA.
func (d *MatmulDesc) SetTransA(op cublas.Operation) error { return d.SetInt32(DescTransA, int32(op)) }

// SetTransB sets CUBLASLT_MATMUL_DESC_TRANSB.
func (d *MatmulDesc) SetTransB(op cublas.Operation) error { return d.SetInt32(DescTransB, int32(op)) }

// SetEpilogue sets CUBLASLT_MATMUL_DESC_EPILOGUE.
func (d *MatmulDesc) SetEpilogue(e Epilogue) error { return d.SetUint32(DescEpilogue, uint32(e)) }

// SetBiasPointer sets CUBLASLT_MATMUL_DESC_BIAS_POINTER to a device
// vector with one element per row of D.
func (d *MatmulDesc) SetBiasPointer(p uintptr) error { return d.SetPointer(DescBiasPointer, p) }

// SetBiasDataType sets CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE.
func (d *MatmulDesc) SetBiasDataType(t cublas.DataType) error {
	return d.SetInt32(DescBiasDataType, int32(t))
}

// SetPointerMode sets CUBLASLT_MATMUL_DESC_POINTER_MODE.
func (d *MatmulDesc) SetPointerMode(m PointerMode) error {
	return d.SetInt32(DescPointerMode, int32(m))
}

// SetAScalePointer sets CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, the device
// scale (one float32 for a scalar scale mode) applied to A.
func (d *MatmulDesc) SetAScalePointer(p uintptr) error { return d.SetPointer(DescAScalePointer, p) }

// SetBScalePointer sets CUBLASLT_MATMUL_DESC_B_SCALE_POINTER.
func (d *MatmulDesc) SetBScalePointer(p uintptr) error { return d.SetPointer(DescBScalePointer, p) }

// SetDScalePointer sets CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, the scale
// of an FP8 output.
func (d *MatmulDesc) SetDScalePointer(p uintptr) error { return d.SetPointer(DescDScalePointer, p) }

// SetFastAccum sets CUBLASLT_MATMUL_DESC_FAST_ACCUM, an int8: FP8
// products accumulated without the periodic promotion to full FP32.
func (d *MatmulDesc) SetFastAccum(on bool) error {
	var v byte
	if on {
		v = 1
	}
	return d.SetAttribute(DescFastAccum, []byte{v})
}

// SetScaleModes sets CUBLASLT_MATMUL_DESC_A_SCALE_MODE and _B_SCALE_MODE
// (int32; cuBLASLt 12.8 and later).
func (d *MatmulDesc) SetScaleModes(a, b MatrixScale) error {
	if err := d.SetInt32(DescAScaleMode, int32(a)); err != nil {
		return err
	}
	return d.SetInt32(DescBScaleMode, int32(b))
}
