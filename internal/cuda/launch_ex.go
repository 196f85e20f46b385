package cuda

// #include <stdlib.h>
// #include <string.h>
// #include "kr_cuda.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// LaunchAttr is a launch attribute (CUlaunchAttribute): its id and the
// bytes of its 64-byte value.
type LaunchAttr struct {
	ID    int
	Value [64]byte
}

// Launch attribute ids (CUlaunchAttributeID).
const (
	LaunchAttrCooperative                     = 2
	LaunchAttrClusterDimension                = 4
	LaunchAttrClusterSchedulingPolicy         = 5
	LaunchAttrProgrammaticStreamSerialization = 6
	LaunchAttrPriority                        = 8
	LaunchAttrMemSyncDomainMap                = 9
	LaunchAttrMemSyncDomain                   = 10
	LaunchAttrPreferredClusterDimension       = 11
)

// LaunchConfig is how a kernel is launched with LaunchBlock.
type LaunchConfig struct {
	Grid, Block [3]uint32
	SharedMem   uint32
	Attrs       []LaunchAttr
}

// ParamBlock is a kernel's parameter buffer in C memory, laid out as the
// kernel takes it, with the kernelParams array that points into it. It
// can be launched many times; Free releases it.
type ParamBlock struct {
	p *unsafe.Pointer
	n int
}

// NewParamBlock copies blob, a parameter buffer, into C memory with
// pointers to each parameter at offsets.
func NewParamBlock(blob []byte, offsets []int) (*ParamBlock, error) {
	offs := make([]C.size_t, len(offsets)+1)
	for i, o := range offsets {
		if o < 0 || o > len(blob) {
			return nil, fmt.Errorf("cuda: parameter offset %d outside a %d-byte buffer", o, len(blob))
		}
		offs[i] = C.size_t(o)
	}
	var b unsafe.Pointer
	if len(blob) > 0 {
		b = unsafe.Pointer(&blob[0])
	}
	p := C.kr_params_new(b, C.size_t(len(blob)), &offs[0], C.int(len(offsets)))
	if p == nil {
		return nil, fmt.Errorf("cuda: cannot allocate %d bytes for kernel parameters", len(blob))
	}
	return &ParamBlock{p: p, n: len(offsets)}, nil
}

// Free releases the block; a second Free is a no-op.
func (b *ParamBlock) Free() {
	if b != nil && b.p != nil {
		C.kr_params_free(b.p)
		b.p = nil
	}
}

// LaunchBlock queues the kernel on s with cuLaunchKernelEx: cfg's shape,
// dynamic shared memory and attributes, and the parameters in pb.
func (f *Function) LaunchBlock(cfg LaunchConfig, s *Stream, pb *ParamBlock) error {
	h, err := f.handle()
	if err != nil {
		return err
	}
	if !hasSlot(C.KR_FN_cuLaunchKernelEx) {
		return fmt.Errorf("cuda: launch %s: the driver has no cuLaunchKernelEx (CUDA 11.8+)", f.name)
	}
	sh, err := s.handle()
	if err != nil {
		return err
	}
	var c C.kr_CUlaunchConfig
	c.gridDimX, c.gridDimY, c.gridDimZ = C.uint(cfg.Grid[0]), C.uint(cfg.Grid[1]), C.uint(cfg.Grid[2])
	c.blockDimX, c.blockDimY, c.blockDimZ = C.uint(cfg.Block[0]), C.uint(cfg.Block[1]), C.uint(cfg.Block[2])
	c.sharedMemBytes = C.uint(cfg.SharedMem)
	c.hStream = sh
	if n := len(cfg.Attrs); n > 0 {
		attrs := (*C.kr_CUlaunchAttribute)(C.calloc(C.size_t(n), C.sizeof_kr_CUlaunchAttribute))
		if attrs == nil {
			return fmt.Errorf("cuda: launch %s: cannot allocate attributes", f.name)
		}
		defer C.free(unsafe.Pointer(attrs))
		dst := unsafe.Slice(attrs, n)
		for i := range dst {
			dst := &dst[i]
			dst.id = C.int(cfg.Attrs[i].ID)
			C.memcpy(unsafe.Pointer(&dst.value[0]), unsafe.Pointer(&cfg.Attrs[i].Value[0]), 64)
		}
		c.attrs, c.numAttrs = attrs, C.uint(n)
	}
	var params *unsafe.Pointer
	if pb != nil {
		params = pb.p
	}
	if err := check("cuLaunchKernelEx", C.kr_cuLaunchKernelEx(&c, h, params)); err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	return nil
}
