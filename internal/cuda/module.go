package cuda

// #include <stdlib.h>
// #include <string.h>
// #include "kr_cuda.h"
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// FuncAttribute is a CUfunction_attribute value.
type FuncAttribute int

// Function attributes (CU_FUNC_ATTRIBUTE_*). header_test.go checks the
// values against cuda.h.
const (
	FuncAttrMaxThreadsPerBlock            FuncAttribute = 0
	FuncAttrSharedSizeBytes               FuncAttribute = 1
	FuncAttrConstSizeBytes                FuncAttribute = 2
	FuncAttrLocalSizeBytes                FuncAttribute = 3
	FuncAttrNumRegs                       FuncAttribute = 4
	FuncAttrPTXVersion                    FuncAttribute = 5
	FuncAttrBinaryVersion                 FuncAttribute = 6
	FuncAttrCacheModeCA                   FuncAttribute = 7
	FuncAttrMaxDynamicSharedSizeBytes     FuncAttribute = 8
	FuncAttrPreferredSharedMemoryCarveout FuncAttribute = 9
)

// Module is a loaded CUDA module (cubin, fatbin or PTX). Its methods must
// be called inside [Context.Do].
type Module struct {
	h        C.kr_CUmodule
	unloaded bool
}

// LoadData loads a module image into the current context: a cubin, a
// fatbin, or PTX text (which the driver compiles for the device). The image
// is copied into C memory with a terminating NUL, which PTX requires.
func LoadData(image []byte) (*Module, error) {
	if err := ready(); err != nil {
		return nil, err
	}
	if len(image) == 0 {
		return nil, errors.New("cuda: LoadData: empty image")
	}
	buf := C.malloc(C.size_t(len(image) + 1))
	if buf == nil {
		return nil, fmt.Errorf("cuda: LoadData: cannot allocate %d bytes", len(image)+1)
	}
	defer C.free(buf)
	C.memcpy(buf, unsafe.Pointer(&image[0]), C.size_t(len(image)))
	*(*byte)(unsafe.Add(buf, len(image))) = 0
	var m C.kr_CUmodule
	if err := check("cuModuleLoadData", C.kr_cuModuleLoadData(&m, buf)); err != nil {
		return nil, err
	}
	return &Module{h: m}, nil
}

// Handle returns the CUmodule, for other libraries.
func (m *Module) Handle() unsafe.Pointer {
	if m == nil {
		return nil
	}
	return unsafe.Pointer(m.h)
}

// Unload unloads the module; its functions become invalid. A second
// Unload is a no-op.
func (m *Module) Unload() error {
	return destroyOnce("cuModuleUnload", m == nil || m.unloaded,
		func() C.kr_CUresult { return C.kr_cuModuleUnload(m.h) },
		func() {
			m.unloaded = true
			m.h = nil
		})
}

// Function looks up a kernel by its (mangled, unless extern "C") name.
func (m *Module) Function(name string) (*Function, error) {
	if err := ready(); err != nil {
		return nil, err
	}
	if m == nil || m.unloaded {
		return nil, ErrDestroyed
	}
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var f C.kr_CUfunction
	if err := check("cuModuleGetFunction", C.kr_cuModuleGetFunction(&f, m.h, cs)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Function{h: f, name: name, mod: m}, nil
}

// Function is a kernel in a loaded module.
type Function struct {
	h    C.kr_CUfunction
	name string
	mod  *Module

	paramsOnce sync.Once
	params     []ParamInfo
	paramsErr  error
}

// ParamInfo is the place of one kernel parameter in the device-side
// parameter buffer.
type ParamInfo struct {
	Offset int
	Size   int
}

func (f *Function) handle() (C.kr_CUfunction, error) {
	if err := ready(); err != nil {
		return nil, err
	}
	if f == nil || f.mod == nil || f.mod.unloaded {
		return nil, ErrDestroyed
	}
	return f.h, nil
}

// Handle returns the CUfunction, for other libraries.
func (f *Function) Handle() unsafe.Pointer {
	if f == nil {
		return nil
	}
	return unsafe.Pointer(f.h)
}

// Name returns the kernel's name as the driver reports it (cuFuncGetName,
// CUDA 12.3+), or the name it was looked up by on older drivers.
func (f *Function) Name() (string, error) {
	h, err := f.handle()
	if err != nil {
		return "", err
	}
	if !hasSlot(int(C.KR_FN_cuFuncGetName)) {
		return f.name, nil
	}
	var s *C.char
	if err := check("cuFuncGetName", C.kr_cuFuncGetName(&s, h)); err != nil {
		return "", err
	}
	return C.GoString(s), nil
}

// Attribute returns attribute a of the kernel.
func (f *Function) Attribute(a FuncAttribute) (int, error) {
	h, err := f.handle()
	if err != nil {
		return 0, err
	}
	var v C.int
	if err := check("cuFuncGetAttribute", C.kr_cuFuncGetAttribute(&v, C.int(a), h)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// SetAttribute sets attribute a of the kernel, e.g.
// FuncAttrMaxDynamicSharedSizeBytes before launching with more than 48 KiB
// of dynamic shared memory.
func (f *Function) SetAttribute(a FuncAttribute, v int) error {
	h, err := f.handle()
	if err != nil {
		return err
	}
	return check("cuFuncSetAttribute", C.kr_cuFuncSetAttribute(h, C.int(a), C.int(v)))
}

// NumRegs returns the number of registers each thread uses.
func (f *Function) NumRegs() (int, error) { return f.Attribute(FuncAttrNumRegs) }

// MaxThreadsPerBlock returns the largest block size the kernel can be
// launched with on the current device.
func (f *Function) MaxThreadsPerBlock() (int, error) {
	return f.Attribute(FuncAttrMaxThreadsPerBlock)
}

// MaxActiveBlocksPerSM returns how many blocks of blockSize threads, each
// with dynamicSmem bytes of dynamic shared memory, fit on one SM.
func (f *Function) MaxActiveBlocksPerSM(blockSize, dynamicSmem int) (int, error) {
	h, err := f.handle()
	if err != nil {
		return 0, err
	}
	var n C.int
	if err := check("cuOccupancyMaxActiveBlocksPerMultiprocessor",
		C.kr_cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, h, C.int(blockSize), C.size_t(dynamicSmem))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// maxParams bounds the cuFuncGetParamInfo probe (kernel parameters take
// at most 32764 bytes, so at most that many parameters).
const maxParams = 32764

// Params returns the offset and size of each kernel parameter, from
// cuFuncGetParamInfo (CUDA 12.4+); ErrUnsupported on older drivers.
func (f *Function) Params() ([]ParamInfo, error) {
	h, err := f.handle()
	if err != nil {
		return nil, err
	}
	f.paramsOnce.Do(func() {
		if !hasSlot(int(C.KR_FN_cuFuncGetParamInfo)) {
			f.paramsErr = fmt.Errorf("cuFuncGetParamInfo: %w", ErrUnsupported)
			return
		}
		var ps []ParamInfo
		for i := 0; i < maxParams; i++ {
			var off, size C.size_t
			r := C.kr_cuFuncGetParamInfo(h, C.size_t(i), &off, &size)
			if r == CodeInvalidValue {
				break // i is past the last parameter
			}
			if r != C.KR_CUDA_SUCCESS {
				f.paramsErr = check("cuFuncGetParamInfo", r)
				return
			}
			ps = append(ps, ParamInfo{Offset: int(off), Size: int(size)})
		}
		f.params = ps
	})
	return f.params, f.paramsErr
}

// Launch queues the kernel on stream s (nil: legacy default stream) with
// the given grid and block dimensions and dynamic shared memory bytes.
//
// args are the kernel's arguments by value, in order; see RawArg for the
// accepted types (DevicePtr for pointers, fixed-width integers, floats).
// They are copied into C memory for the call, which the driver copies again
// at launch, so nothing needs to outlive Launch. When the driver can report
// the kernel's parameters (CUDA 12.4+), the number and size of args are
// checked against them before launching.
func (f *Function) Launch(grid, block [3]uint32, sharedMem uint32, s *Stream, args ...any) error {
	h, err := f.handle()
	if err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		if grid[i] == 0 || block[i] == 0 {
			return fmt.Errorf("cuda: launch %s: zero dimension in grid %v or block %v", f.name, grid, block)
		}
	}
	sh, err := s.handle()
	if err != nil {
		return err
	}
	packed, err := packParams(args)
	if err != nil {
		return fmt.Errorf("launch %s: %w", f.name, err)
	}
	if params, perr := f.Params(); perr == nil {
		if err := matchParams(params, packed); err != nil {
			return fmt.Errorf("cuda: launch %s: %w", f.name, err)
		}
	}
	pb, err := newParamBlock(packed)
	if err != nil {
		return err
	}
	defer pb.free()
	r := C.kr_cuLaunchKernel(h,
		C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]),
		C.uint(sharedMem), sh, pb.params())
	if err := check("cuLaunchKernel", r); err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	return nil
}

// matchParams checks packed arguments against the kernel's parameters.
func matchParams(params []ParamInfo, packed *packedParams) error {
	if len(params) != len(packed.sizes) {
		return fmt.Errorf("kernel takes %d parameters, got %d arguments", len(params), len(packed.sizes))
	}
	for i, p := range params {
		if packed.sizes[i] != p.Size {
			return fmt.Errorf("argument %d has %d bytes, kernel parameter %d has %d", i, packed.sizes[i], i, p.Size)
		}
	}
	return nil
}
