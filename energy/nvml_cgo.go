//go:build cgo

package energy

// This file is the only one that calls go-nvml. go-nvml needs cgo; without
// cgo, nvml_nocgo.go stands in and every entry point reports ErrNoNVML.

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nv is this package's own go-nvml library instance. Its Init loads
// libnvidia-ml.so.1 with dlopen and reports ERROR_LIBRARY_NOT_FOUND, rather
// than crashing, when the library is absent. No NVML function may be called
// before Init succeeds: the symbols would be unresolved.
var nv = nvml.New()

// hasEventReasons records whether the loaded driver exports
// nvmlDeviceGetCurrentClocksEventReasons (R535+); older drivers only have
// the throttle-reasons call. Written only while lib.mu is held in bindInit.
var hasEventReasons bool

func nvmlErr(op string, ret nvml.Return) error {
	if ret == nvml.SUCCESS {
		return nil
	}
	msg := ret.Error()
	if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
		msg = "libnvidia-ml.so.1 could not be loaded"
	}
	return &NVMLError{Op: op, Code: int(ret), Message: msg}
}

func bindInit() error {
	if err := nvmlErr("nvmlInit", nv.Init()); err != nil {
		return err
	}
	hasEventReasons = nv.Extensions().LookupSymbol("nvmlDeviceGetCurrentClocksEventReasons") == nil
	return nil
}

func bindShutdown() error {
	return nvmlErr("nvmlShutdown", nv.Shutdown())
}

func bindDeviceCount() (int, error) {
	n, ret := nv.DeviceGetCount()
	return n, nvmlErr("nvmlDeviceGetCount", ret)
}

func bindDriverVersion() (string, error) {
	v, ret := nv.SystemGetDriverVersion()
	return v, nvmlErr("nvmlSystemGetDriverVersion", ret)
}

// handle is one GPU's NVML handle. Its methods must only be called while
// NVML is initialised (the owning Device holds a reference).
type handle struct {
	d nvml.Device
}

func bindHandle(index int) (handle, error) {
	d, ret := nv.DeviceGetHandleByIndex(index)
	if err := nvmlErr("nvmlDeviceGetHandleByIndex", ret); err != nil {
		return handle{}, err
	}
	return handle{d: d}, nil
}

// bindHandleByPCIBusID is the GPU at the PCI address busID
// ("domain:bus:device.function", as cuDeviceGetPCIBusId writes it) and its
// NVML index.
func bindHandleByPCIBusID(busID string) (handle, int, error) {
	d, ret := nv.DeviceGetHandleByPciBusId(busID)
	if err := nvmlErr("nvmlDeviceGetHandleByPciBusId("+busID+")", ret); err != nil {
		return handle{}, 0, err
	}
	i, ret := d.GetIndex()
	if err := nvmlErr("nvmlDeviceGetIndex", ret); err != nil {
		return handle{}, 0, err
	}
	return handle{d: d}, i, nil
}

func (h handle) name() (string, error) {
	s, ret := h.d.GetName()
	return s, nvmlErr("nvmlDeviceGetName", ret)
}

func (h handle) uuid() (string, error) {
	s, ret := h.d.GetUUID()
	return s, nvmlErr("nvmlDeviceGetUUID", ret)
}

// powerLimitMW is the enforced power limit in milliwatts.
func (h handle) powerLimitMW() (uint32, error) {
	v, ret := h.d.GetEnforcedPowerLimit()
	return v, nvmlErr("nvmlDeviceGetEnforcedPowerLimit", ret)
}

func (h handle) smClockMHz() (uint32, error) {
	v, ret := h.d.GetClockInfo(nvml.CLOCK_SM)
	return v, nvmlErr("nvmlDeviceGetClockInfo(SM)", ret)
}

func (h handle) memClockMHz() (uint32, error) {
	v, ret := h.d.GetClockInfo(nvml.CLOCK_MEM)
	return v, nvmlErr("nvmlDeviceGetClockInfo(MEM)", ret)
}

func (h handle) maxSMClockMHz() (uint32, error) {
	v, ret := h.d.GetMaxClockInfo(nvml.CLOCK_SM)
	return v, nvmlErr("nvmlDeviceGetMaxClockInfo(SM)", ret)
}

func (h handle) maxMemClockMHz() (uint32, error) {
	v, ret := h.d.GetMaxClockInfo(nvml.CLOCK_MEM)
	return v, nvmlErr("nvmlDeviceGetMaxClockInfo(MEM)", ret)
}

// memoryBusWidth is the memory bus width in bits.
func (h handle) memoryBusWidth() (uint32, error) {
	v, ret := h.d.GetMemoryBusWidth()
	return v, nvmlErr("nvmlDeviceGetMemoryBusWidth", ret)
}

func (h handle) temperatureC() (uint32, error) {
	v, ret := h.d.GetTemperature(nvml.TEMPERATURE_GPU)
	return v, nvmlErr("nvmlDeviceGetTemperature", ret)
}

// powerInstantMW reads field NVML_FI_DEV_POWER_INSTANT (GPU scope), in mW.
func (h handle) powerInstantMW() (float64, error) {
	fv := []nvml.FieldValue{{FieldId: nvml.FI_DEV_POWER_INSTANT}}
	if err := nvmlErr("nvmlDeviceGetFieldValues", h.d.GetFieldValues(fv)); err != nil {
		return 0, err
	}
	if err := nvmlErr("nvmlDeviceGetFieldValues(FI_DEV_POWER_INSTANT)", nvml.Return(fv[0].NvmlReturn)); err != nil {
		return 0, err
	}
	v, ok := decodeFieldValue(fv[0].ValueType, fv[0].Value)
	if !ok {
		return 0, &NVMLError{Op: "nvmlDeviceGetFieldValues(FI_DEV_POWER_INSTANT)", Code: nvmlNotSupported, Message: "unknown value type"}
	}
	return v, nil
}

// powerUsageMW is nvmlDeviceGetPowerUsage in mW: a one-second average on
// Ampere (except GA100) and newer, instantaneous on older GPUs.
func (h handle) powerUsageMW() (uint32, error) {
	v, ret := h.d.GetPowerUsage()
	return v, nvmlErr("nvmlDeviceGetPowerUsage", ret)
}

func (h handle) clockReasons() (uint64, error) {
	if hasEventReasons {
		v, ret := h.d.GetCurrentClocksEventReasons()
		return v, nvmlErr("nvmlDeviceGetCurrentClocksEventReasons", ret)
	}
	v, ret := h.d.GetCurrentClocksThrottleReasons()
	return v, nvmlErr("nvmlDeviceGetCurrentClocksThrottleReasons", ret)
}

// totalEnergyMJ is the total-energy counter in millijoules since the driver
// was loaded.
func (h handle) totalEnergyMJ() (uint64, error) {
	v, ret := h.d.GetTotalEnergyConsumption()
	return v, nvmlErr("nvmlDeviceGetTotalEnergyConsumption", ret)
}
