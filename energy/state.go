package energy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"
)

// ClockReasons is NVML's clock-event (formerly "throttle") reason bitmask,
// as returned by nvmlDeviceGetCurrentClocksEventReasons. Bits not named
// below are kept and printed in hex.
type ClockReasons uint64

// The clock-event reason bits, with the values of nvml.h.
const (
	// ReasonGPUIdle: nothing runs, clocks are dropped (not throttling).
	ReasonGPUIdle ClockReasons = 0x1
	// ReasonApplicationsClocks: clocks limited by the applications-clocks
	// setting.
	ReasonApplicationsClocks ClockReasons = 0x2
	// ReasonSWPowerCap: the software power-capping algorithm holds clocks
	// down to stay under the power limit. Heavy back-to-back GEMMs on an
	// H100 set this bit.
	ReasonSWPowerCap ClockReasons = 0x4
	// ReasonHWSlowdown: hardware slowdown (thermal, power brake or similar)
	// cuts clocks by a factor of two or more.
	ReasonHWSlowdown ClockReasons = 0x8
	// ReasonSyncBoost: clocks held down to match other GPUs in a sync-boost
	// group.
	ReasonSyncBoost ClockReasons = 0x10
	// ReasonSWThermal: software thermal slowdown (temperature near its
	// maximum operating limit).
	ReasonSWThermal ClockReasons = 0x20
	// ReasonHWThermal: hardware thermal slowdown (temperature too high).
	ReasonHWThermal ClockReasons = 0x40
	// ReasonHWPowerBrake: hardware power-brake slowdown asserted by an
	// external signal (e.g. the power supply).
	ReasonHWPowerBrake ClockReasons = 0x80
	// ReasonDisplayClocks: clocks limited by the display clock setting.
	ReasonDisplayClocks ClockReasons = 0x100

	// ThrottleReasons are the bits that count as throttling for
	// [ClockReasons.Throttled]: power cap, thermal and hardware slowdowns.
	// Idle, applications clocks, sync boost and display clocks are not.
	ThrottleReasons = ReasonSWPowerCap | ReasonHWSlowdown | ReasonSWThermal |
		ReasonHWThermal | ReasonHWPowerBrake
)

var reasonNames = [...]string{
	"gpu_idle",
	"applications_clocks_setting",
	"sw_power_cap",
	"hw_slowdown",
	"sync_boost",
	"sw_thermal_slowdown",
	"hw_thermal_slowdown",
	"hw_power_brake_slowdown",
	"display_clocks_setting",
}

// Names returns the names of the set bits, lowest bit first: "gpu_idle",
// "applications_clocks_setting", "sw_power_cap", "hw_slowdown",
// "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
// "hw_power_brake_slowdown", "display_clocks_setting", and "0x…" for an
// unnamed bit. It returns nil for no bits.
func (r ClockReasons) Names() []string {
	var names []string
	for v := uint64(r); v != 0; v &= v - 1 {
		i := bits.TrailingZeros64(v)
		if i < len(reasonNames) {
			names = append(names, reasonNames[i])
		} else {
			names = append(names, fmt.Sprintf("%#x", uint64(1)<<i))
		}
	}
	return names
}

// String joins [ClockReasons.Names] with "|", or returns "none".
func (r ClockReasons) String() string {
	if r == 0 {
		return "none"
	}
	return strings.Join(r.Names(), "|")
}

// Throttled reports whether any bit of [ThrottleReasons] is set: the clocks
// are held down by the power cap, temperature or a hardware slowdown.
// An idle GPU is not throttled.
func (r ClockReasons) Throttled() bool { return r&ThrottleReasons != 0 }

// State is a snapshot of one GPU. Readings the GPU does not support are
// left zero (PowerSource then is PowerUnknown).
type State struct {
	// Time is when the snapshot was started; power is read first.
	Time time.Time
	// PowerW is board power in watts, from PowerSource.
	PowerW      float64
	PowerSource PowerSource
	// SMClockMHz and MemClockMHz are the current SM and memory clocks.
	SMClockMHz  uint32
	MemClockMHz uint32
	// TemperatureC is the GPU core temperature in degrees Celsius.
	TemperatureC uint32
	// Reasons is the clock-event reason bitmask.
	Reasons ClockReasons
}

// Throttled reports whether the state counts as throttled; see
// [ClockReasons.Throttled].
func (s State) Throttled() bool { return s.Reasons.Throttled() }

// String is a one-line summary for logs.
func (s State) String() string {
	return fmt.Sprintf("%.1f W (%s) SM %d MHz mem %d MHz %d C reasons %s",
		s.PowerW, s.PowerSource, s.SMClockMHz, s.MemClockMHz, s.TemperatureC, s.Reasons)
}

// State reads a snapshot of the GPU: power (instantaneous where available),
// SM and memory clocks, temperature and clock-event reasons. Queries the GPU
// does not support leave their fields zero; any other NVML failure is
// returned with the fields read so far.
func (d *Device) State() (State, error) {
	var s State
	err := d.do(func() error {
		s.Time = time.Now()
		var errs []error
		keep := func(err error) {
			if err != nil && !errors.Is(err, ErrNotSupported) {
				errs = append(errs, err)
			}
		}
		var err error
		s.PowerW, s.PowerSource, err = d.power()
		keep(err)
		s.SMClockMHz, err = d.h.smClockMHz()
		keep(err)
		s.MemClockMHz, err = d.h.memClockMHz()
		keep(err)
		s.TemperatureC, err = d.h.temperatureC()
		keep(err)
		var r uint64
		r, err = d.h.clockReasons()
		keep(err)
		s.Reasons = ClockReasons(r)
		return errors.Join(errs...)
	})
	return s, err
}

// NVML value types of nvmlValueType_t.
const (
	valueDouble    = 0
	valueUint      = 1
	valueULong     = 2
	valueULongLong = 3
	valueSLongLong = 4
	valueSInt      = 5
	valueUShort    = 6
)

// decodeFieldValue converts the raw nvmlValue_t union of a field value to
// float64 according to its nvmlValueType_t. The union is in host byte order.
func decodeFieldValue(valueType uint32, raw [8]byte) (float64, bool) {
	e := binary.NativeEndian
	switch valueType {
	case valueDouble:
		return math.Float64frombits(e.Uint64(raw[:])), true
	case valueUint:
		return float64(e.Uint32(raw[:4])), true
	case valueULong, valueULongLong:
		return float64(e.Uint64(raw[:])), true
	case valueSLongLong:
		return float64(int64(e.Uint64(raw[:]))), true
	case valueSInt:
		return float64(int32(e.Uint32(raw[:4]))), true
	case valueUShort:
		return float64(e.Uint16(raw[:2])), true
	}
	return 0, false
}
