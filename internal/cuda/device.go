package cuda

// #include <stdlib.h>
// #include "kr_cuda.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// Device is a CUdevice handle, obtained from [DeviceGet]. Device queries
// need no context.
type Device int

// DeviceAttribute is a CUdevice_attribute value.
type DeviceAttribute int

// Device attributes (CU_DEVICE_ATTRIBUTE_*). The values are fixed by the
// driver ABI; header_test.go checks them against cuda.h.
const (
	AttrMaxThreadsPerBlock           DeviceAttribute = 1
	AttrMaxBlockDimX                 DeviceAttribute = 2
	AttrMaxBlockDimY                 DeviceAttribute = 3
	AttrMaxBlockDimZ                 DeviceAttribute = 4
	AttrMaxGridDimX                  DeviceAttribute = 5
	AttrMaxGridDimY                  DeviceAttribute = 6
	AttrMaxGridDimZ                  DeviceAttribute = 7
	AttrMaxSharedMemoryPerBlock      DeviceAttribute = 8
	AttrTotalConstantMemory          DeviceAttribute = 9
	AttrWarpSize                     DeviceAttribute = 10
	AttrMaxRegistersPerBlock         DeviceAttribute = 12
	AttrClockRate                    DeviceAttribute = 13 // kHz
	AttrMultiprocessorCount          DeviceAttribute = 16
	AttrIntegrated                   DeviceAttribute = 18
	AttrComputeMode                  DeviceAttribute = 20
	AttrConcurrentKernels            DeviceAttribute = 31
	AttrECCEnabled                   DeviceAttribute = 32
	AttrPCIBusID                     DeviceAttribute = 33
	AttrPCIDeviceID                  DeviceAttribute = 34
	AttrMemoryClockRate              DeviceAttribute = 36 // kHz
	AttrGlobalMemoryBusWidth         DeviceAttribute = 37 // bits
	AttrL2CacheSize                  DeviceAttribute = 38 // bytes
	AttrMaxThreadsPerMultiprocessor  DeviceAttribute = 39
	AttrAsyncEngineCount             DeviceAttribute = 40
	AttrUnifiedAddressing            DeviceAttribute = 41
	AttrPCIDomainID                  DeviceAttribute = 50
	AttrComputeCapabilityMajor       DeviceAttribute = 75
	AttrComputeCapabilityMinor       DeviceAttribute = 76
	AttrMaxSharedMemoryPerSM         DeviceAttribute = 81 // bytes
	AttrMaxRegistersPerSM            DeviceAttribute = 82
	AttrMaxSharedMemoryPerBlockOptin DeviceAttribute = 97 // bytes
	AttrMaxBlocksPerMultiprocessor   DeviceAttribute = 106
	AttrMaxPersistingL2CacheSize     DeviceAttribute = 108 // bytes
)

// DeviceCount returns the number of CUDA devices.
func DeviceCount() (int, error) {
	if err := ready(); err != nil {
		return 0, err
	}
	var n C.int
	if err := check("cuDeviceGetCount", C.kr_cuDeviceGetCount(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// HasDevice initializes the driver (Init) and returns nil when it
// reports at least one device: Init's error without a driver,
// ErrNoDevice without a device.
func HasDevice() error {
	if err := Init(); err != nil {
		return err
	}
	n, err := DeviceCount()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNoDevice
	}
	return nil
}

// DeviceGet returns the device with the given ordinal, 0 <= ordinal < DeviceCount().
func DeviceGet(ordinal int) (Device, error) {
	if err := ready(); err != nil {
		return 0, err
	}
	var d C.kr_CUdevice
	if err := check("cuDeviceGet", C.kr_cuDeviceGet(&d, C.int(ordinal))); err != nil {
		return 0, err
	}
	return Device(d), nil
}

// Name returns the device's marketing name, e.g. "NVIDIA H100 80GB HBM3".
func (d Device) Name() (string, error) {
	if err := ready(); err != nil {
		return "", err
	}
	const n = 256
	buf := (*C.char)(C.calloc(n, 1))
	defer C.free(unsafe.Pointer(buf))
	if err := check("cuDeviceGetName", C.kr_cuDeviceGetName(buf, n, C.kr_CUdevice(d))); err != nil {
		return "", err
	}
	return C.GoString(buf), nil
}

// Attribute returns the value of attribute a of the device.
func (d Device) Attribute(a DeviceAttribute) (int, error) {
	if err := ready(); err != nil {
		return 0, err
	}
	var v C.int
	if err := check("cuDeviceGetAttribute", C.kr_cuDeviceGetAttribute(&v, C.int(a), C.kr_CUdevice(d))); err != nil {
		return 0, fmt.Errorf("attribute %d: %w", int(a), err)
	}
	return int(v), nil
}

// SMCount returns the number of streaming multiprocessors.
func (d Device) SMCount() (int, error) { return d.Attribute(AttrMultiprocessorCount) }

// ComputeCapability returns the compute capability, e.g. (9, 0) for H100.
func (d Device) ComputeCapability() (major, minor int, err error) {
	if major, err = d.Attribute(AttrComputeCapabilityMajor); err != nil {
		return 0, 0, err
	}
	if minor, err = d.Attribute(AttrComputeCapabilityMinor); err != nil {
		return 0, 0, err
	}
	return major, minor, nil
}

// L2CacheSize returns the L2 cache size in bytes.
func (d Device) L2CacheSize() (int, error) { return d.Attribute(AttrL2CacheSize) }

// ClockRate returns the peak SM clock in kHz.
func (d Device) ClockRate() (int, error) { return d.Attribute(AttrClockRate) }

// MemoryClockRate returns the peak memory clock in kHz.
func (d Device) MemoryClockRate() (int, error) { return d.Attribute(AttrMemoryClockRate) }

// MemoryBusWidth returns the global memory bus width in bits.
func (d Device) MemoryBusWidth() (int, error) { return d.Attribute(AttrGlobalMemoryBusWidth) }

// MaxSharedMemoryPerBlockOptin returns the most shared memory, in bytes, a
// block can use after opting in with [Function.SetAttribute] and
// [FuncAttrMaxDynamicSharedSizeBytes].
func (d Device) MaxSharedMemoryPerBlockOptin() (int, error) {
	return d.Attribute(AttrMaxSharedMemoryPerBlockOptin)
}

// TotalMem returns the device memory size in bytes.
func (d Device) TotalMem() (int, error) {
	if err := ready(); err != nil {
		return 0, err
	}
	var n C.size_t
	if err := check("cuDeviceTotalMem", C.kr_cuDeviceTotalMem(&n, C.kr_CUdevice(d))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// PCIBusID returns the device's PCI address as "domain:bus:device.function",
// e.g. "0000:1b:00.0". It returns ErrUnsupported if the driver lacks
// cuDeviceGetPCIBusId.
func (d Device) PCIBusID() (string, error) {
	if err := ready(); err != nil {
		return "", err
	}
	if !hasSlot(int(C.KR_FN_cuDeviceGetPCIBusId)) {
		return "", fmt.Errorf("cuDeviceGetPCIBusId: %w", ErrUnsupported)
	}
	const n = 64
	buf := (*C.char)(C.calloc(n, 1))
	defer C.free(unsafe.Pointer(buf))
	if err := check("cuDeviceGetPCIBusId", C.kr_cuDeviceGetPCIBusId(buf, n, C.kr_CUdevice(d))); err != nil {
		return "", err
	}
	return C.GoString(buf), nil
}
