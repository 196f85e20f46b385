package cublaslt

/*
#include "cublaslt_shim.h"
*/
import "C"

import (
	"unsafe"

	"github.com/kreplay/kreplay/internal/cublas"
)

// MatrixLayout is a cublasLtMatrixLayout_t: element type, shape, leading
// dimension, order and batching of one matrix operand.
type MatrixLayout struct {
	l C.kr_ltMatrixLayout_t
}

// NewMatrixLayout creates a layout of rows×cols elements of type t with
// leading dimension ld, column-major by default
// (cublasLtMatrixLayoutCreate).
func NewMatrixLayout(t cublas.DataType, rows, cols uint64, ld int64) (*MatrixLayout, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	var l C.kr_ltMatrixLayout_t
	if err := check("cublasLtMatrixLayoutCreate",
		C.kr_ltMatrixLayoutCreate(&l, C.int(t), C.uint64_t(rows), C.uint64_t(cols), C.int64_t(ld))); err != nil {
		return nil, err
	}
	return &MatrixLayout{l: l}, nil
}

// Destroy releases the layout (cublasLtMatrixLayoutDestroy); nil or
// already destroyed is a no-op.
func (l *MatrixLayout) Destroy() error {
	return destroy("cublasLtMatrixLayoutDestroy", l == nil || l.l == nil,
		func() C.kr_ltStatus_t { return C.kr_ltMatrixLayoutDestroy(l.l) },
		func() { l.l = nil })
}

// SetAttribute sets attr to the raw bytes of its C value
// (cublasLtMatrixLayoutSetAttribute).
func (l *MatrixLayout) SetAttribute(attr MatrixLayoutAttribute, value []byte) error {
	return setAttribute("cublasLtMatrixLayoutSetAttribute", l == nil || l.l == nil, int32(attr), value,
		func(a C.int, data unsafe.Pointer, n C.size_t) C.kr_ltStatus_t {
			return C.kr_ltMatrixLayoutSetAttribute(l.l, a, data, n)
		})
}

// GetAttribute reads attr into buf and returns the attribute's size
// (cublasLtMatrixLayoutGetAttribute).
func (l *MatrixLayout) GetAttribute(attr MatrixLayoutAttribute, buf []byte) (int, error) {
	return getAttribute("cublasLtMatrixLayoutGetAttribute", l == nil || l.l == nil, int32(attr), buf,
		func(a C.int, data unsafe.Pointer, n C.size_t, written *C.size_t) C.kr_ltStatus_t {
			return C.kr_ltMatrixLayoutGetAttribute(l.l, a, data, n, written)
		})
}

// SetInt32 sets an int32-valued attribute.
func (l *MatrixLayout) SetInt32(attr MatrixLayoutAttribute, v int32) error {
	return l.SetAttribute(attr, i32(v))
}

// SetUint32 sets a uint32-valued attribute.
func (l *MatrixLayout) SetUint32(attr MatrixLayoutAttribute, v uint32) error {
	return l.SetAttribute(attr, u32(v))
}

// SetInt64 sets an int64-valued attribute.
func (l *MatrixLayout) SetInt64(attr MatrixLayoutAttribute, v int64) error {
	return l.SetAttribute(attr, i64(v))
}

// SetUint64 sets a uint64-valued attribute.
func (l *MatrixLayout) SetUint64(attr MatrixLayoutAttribute, v uint64) error {
	return l.SetAttribute(attr, u64(v))
}

// SetBatchCount sets CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT.
func (l *MatrixLayout) SetBatchCount(n int32) error { return l.SetInt32(LayoutBatchCount, n) }

// SetStridedBatchOffset sets CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
// the distance in elements between consecutive matrices of a batch.
func (l *MatrixLayout) SetStridedBatchOffset(elems int64) error {
	return l.SetInt64(LayoutStridedBatchOffset, elems)
}

// SetOrder sets CUBLASLT_MATRIX_LAYOUT_ORDER.
func (l *MatrixLayout) SetOrder(o Order) error { return l.SetInt32(LayoutOrder, int32(o)) }
