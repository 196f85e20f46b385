package cublaslt

/*
#include "cublaslt_shim.h"
*/
import "C"

import (
	"fmt"

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
	if l == nil || l.l == nil {
		return nil
	}
	err := check("cublasLtMatrixLayoutDestroy", C.kr_ltMatrixLayoutDestroy(l.l))
	l.l = nil
	return err
}

// SetAttribute sets attr to the raw bytes of its C value
// (cublasLtMatrixLayoutSetAttribute).
func (l *MatrixLayout) SetAttribute(attr MatrixLayoutAttribute, value []byte) error {
	const fn = "cublasLtMatrixLayoutSetAttribute"
	if l == nil || l.l == nil {
		return nilErr(fn)
	}
	if err := check(fn, C.kr_ltMatrixLayoutSetAttribute(l.l, C.int(attr), bytesPtr(value), C.size_t(len(value)))); err != nil {
		return fmt.Errorf("%w (attribute %d)", err, int32(attr))
	}
	return nil
}

// GetAttribute reads attr into buf and returns the attribute's size
// (cublasLtMatrixLayoutGetAttribute).
func (l *MatrixLayout) GetAttribute(attr MatrixLayoutAttribute, buf []byte) (int, error) {
	const fn = "cublasLtMatrixLayoutGetAttribute"
	if l == nil || l.l == nil {
		return 0, nilErr(fn)
	}
	var written C.size_t
	err := check(fn, C.kr_ltMatrixLayoutGetAttribute(l.l, C.int(attr), bytesPtr(buf), C.size_t(len(buf)), &written))
	return int(written), err
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
