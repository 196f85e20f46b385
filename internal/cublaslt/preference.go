package cublaslt

/*
#include "cublaslt_shim.h"
*/
import "C"

import "fmt"

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
	if p == nil || p.p == nil {
		return nil
	}
	err := check("cublasLtMatmulPreferenceDestroy", C.kr_ltMatmulPreferenceDestroy(p.p))
	p.p = nil
	return err
}

// SetAttribute sets attr to the raw bytes of its C value
// (cublasLtMatmulPreferenceSetAttribute).
func (p *MatmulPreference) SetAttribute(attr MatmulPreferenceAttribute, value []byte) error {
	const fn = "cublasLtMatmulPreferenceSetAttribute"
	if p == nil || p.p == nil {
		return nilErr(fn)
	}
	if err := check(fn, C.kr_ltMatmulPreferenceSetAttribute(p.p, C.int(attr), bytesPtr(value), C.size_t(len(value)))); err != nil {
		return fmt.Errorf("%w (attribute %d)", err, int32(attr))
	}
	return nil
}

// GetAttribute reads attr into buf and returns the attribute's size
// (cublasLtMatmulPreferenceGetAttribute).
func (p *MatmulPreference) GetAttribute(attr MatmulPreferenceAttribute, buf []byte) (int, error) {
	const fn = "cublasLtMatmulPreferenceGetAttribute"
	if p == nil || p.p == nil {
		return 0, nilErr(fn)
	}
	var written C.size_t
	err := check(fn, C.kr_ltMatmulPreferenceGetAttribute(p.p, C.int(attr), bytesPtr(buf), C.size_t(len(buf)), &written))
	return int(written), err
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
