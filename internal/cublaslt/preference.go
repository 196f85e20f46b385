package cublaslt

/*
#include "cublaslt_shim.h"
*/
import "C"

import "unsafe"

// MatmulPreference is a cublasLtMatmulPreference_t: limits that
// AlgoGetHeuristic honours, such as the largest workspace allowed.
type MatmulPreference struct {
	p C.kr_ltMatmulPreference_t
}

// NewMatmulPreference creates a preference with the library defaults (no
// workspace allowed) (cublasLtMatmulPreferenceCreate).
func NewMatmulPreference() (*MatmulPreference, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	var p C.kr_ltMatmulPreference_t
	if err := check("cublasLtMatmulPreferenceCreate", C.kr_ltMatmulPreferenceCreate(&p)); err != nil {
		return nil, err
	}
	return &MatmulPreference{p: p}, nil
}

// Destroy releases the preference (cublasLtMatmulPreferenceDestroy); nil
// or already destroyed is a no-op.
func (p *MatmulPreference) Destroy() error {
	return destroy("cublasLtMatmulPreferenceDestroy", p == nil || p.p == nil,
		func() C.kr_ltStatus_t { return C.kr_ltMatmulPreferenceDestroy(p.p) },
		func() { p.p = nil })
}

// SetAttribute sets attr to the raw bytes of its C value
// (cublasLtMatmulPreferenceSetAttribute).
func (p *MatmulPreference) SetAttribute(attr MatmulPreferenceAttribute, value []byte) error {
	return setAttribute("cublasLtMatmulPreferenceSetAttribute", p == nil || p.p == nil, int32(attr), value,
		func(a C.int, data unsafe.Pointer, n C.size_t) C.kr_ltStatus_t {
			return C.kr_ltMatmulPreferenceSetAttribute(p.p, a, data, n)
		})
}

// GetAttribute reads attr into buf and returns the attribute's size
// (cublasLtMatmulPreferenceGetAttribute).
func (p *MatmulPreference) GetAttribute(attr MatmulPreferenceAttribute, buf []byte) (int, error) {
	return getAttribute("cublasLtMatmulPreferenceGetAttribute", p == nil || p.p == nil, int32(attr), buf,
		func(a C.int, data unsafe.Pointer, n C.size_t, written *C.size_t) C.kr_ltStatus_t {
			return C.kr_ltMatmulPreferenceGetAttribute(p.p, a, data, n, written)
		})
}

// SetUint32 sets a uint32-valued attribute.
func (p *MatmulPreference) SetUint32(attr MatmulPreferenceAttribute, v uint32) error {
	return p.SetAttribute(attr, u32(v))
}

// SetUint64 sets a uint64-valued attribute.
func (p *MatmulPreference) SetUint64(attr MatmulPreferenceAttribute, v uint64) error {
	return p.SetAttribute(attr, u64(v))
}

// SetMaxWorkspaceBytes sets CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES.
func (p *MatmulPreference) SetMaxWorkspaceBytes(n uint64) error {
	return p.SetUint64(PrefMaxWorkspaceBytes, n)
}
