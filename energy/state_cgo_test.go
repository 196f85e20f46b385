//go:build cgo

package energy

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// TestConstantsMatchNVML checks the bits and codes this package spells out
// against go-nvml's copies of nvml.h.
func TestConstantsMatchNVML(t *testing.T) {
	pairs := []struct {
		name      string
		ours, lib uint64
	}{
		{"GpuIdle", uint64(ReasonGPUIdle), nvml.ClocksEventReasonGpuIdle},
		{"ApplicationsClocksSetting", uint64(ReasonApplicationsClocks), nvml.ClocksEventReasonApplicationsClocksSetting},
		{"SwPowerCap", uint64(ReasonSWPowerCap), nvml.ClocksEventReasonSwPowerCap},
		{"HwSlowdown", uint64(ReasonHWSlowdown), nvml.ClocksThrottleReasonHwSlowdown},
		{"SyncBoost", uint64(ReasonSyncBoost), nvml.ClocksEventReasonSyncBoost},
		{"SwThermalSlowdown", uint64(ReasonSWThermal), nvml.ClocksEventReasonSwThermalSlowdown},
		{"HwThermalSlowdown", uint64(ReasonHWThermal), nvml.ClocksThrottleReasonHwThermalSlowdown},
		{"HwPowerBrakeSlowdown", uint64(ReasonHWPowerBrake), nvml.ClocksThrottleReasonHwPowerBrakeSlowdown},
		{"DisplayClockSetting", uint64(ReasonDisplayClocks), nvml.ClocksEventReasonDisplayClockSetting},
		{"NOT_SUPPORTED", nvmlNotSupported, uint64(nvml.ERROR_NOT_SUPPORTED)},
		{"DRIVER_NOT_LOADED", nvmlDriverNotLoaded, uint64(nvml.ERROR_DRIVER_NOT_LOADED)},
		{"LIBRARY_NOT_FOUND", nvmlLibraryNotFound, uint64(nvml.ERROR_LIBRARY_NOT_FOUND)},
		{"VALUE_TYPE_DOUBLE", valueDouble, uint64(nvml.VALUE_TYPE_DOUBLE)},
		{"VALUE_TYPE_UNSIGNED_INT", valueUint, uint64(nvml.VALUE_TYPE_UNSIGNED_INT)},
		{"VALUE_TYPE_UNSIGNED_LONG", valueULong, uint64(nvml.VALUE_TYPE_UNSIGNED_LONG)},
		{"VALUE_TYPE_UNSIGNED_LONG_LONG", valueULongLong, uint64(nvml.VALUE_TYPE_UNSIGNED_LONG_LONG)},
		{"VALUE_TYPE_SIGNED_LONG_LONG", valueSLongLong, uint64(nvml.VALUE_TYPE_SIGNED_LONG_LONG)},
		{"VALUE_TYPE_SIGNED_INT", valueSInt, uint64(nvml.VALUE_TYPE_SIGNED_INT)},
		{"VALUE_TYPE_UNSIGNED_SHORT", valueUShort, uint64(nvml.VALUE_TYPE_UNSIGNED_SHORT)},
	}
	for _, p := range pairs {
		if p.ours != p.lib {
			t.Errorf("%s: ours %#x, nvml.h %#x", p.name, p.ours, p.lib)
		}
	}
	if uint64(ReasonGPUIdle|ReasonApplicationsClocks|ReasonSWPowerCap|ReasonHWSlowdown|ReasonSyncBoost|
		ReasonSWThermal|ReasonHWThermal|ReasonHWPowerBrake|ReasonDisplayClocks) != nvml.ClocksEventReasonAll {
		t.Errorf("named bits do not cover ClocksEventReasonAll %#x", nvml.ClocksEventReasonAll)
	}
}
