package energy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestClockReasonsDecode(t *testing.T) {
	tests := []struct {
		r         ClockReasons
		names     []string
		str       string
		throttled bool
	}{
		{0, nil, "none", false},
		{0x1, []string{"gpu_idle"}, "gpu_idle", false},
		{0x2, []string{"applications_clocks_setting"}, "applications_clocks_setting", false},
		{0x4, []string{"sw_power_cap"}, "sw_power_cap", true},
		{0x8, []string{"hw_slowdown"}, "hw_slowdown", true},
		{0x10, []string{"sync_boost"}, "sync_boost", false},
		{0x20, []string{"sw_thermal_slowdown"}, "sw_thermal_slowdown", true},
		{0x40, []string{"hw_thermal_slowdown"}, "hw_thermal_slowdown", true},
		{0x80, []string{"hw_power_brake_slowdown"}, "hw_power_brake_slowdown", true},
		{0x100, []string{"display_clocks_setting"}, "display_clocks_setting", false},
		{0x1 | 0x100, []string{"gpu_idle", "display_clocks_setting"}, "gpu_idle|display_clocks_setting", false},
		// Measured on H100 under back-to-back GEMMs: SW power cap.
		{0x4 | 0x2, []string{"applications_clocks_setting", "sw_power_cap"}, "applications_clocks_setting|sw_power_cap", true},
		{0x8 | 0x40 | 0x80, []string{"hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"}, "hw_slowdown|hw_thermal_slowdown|hw_power_brake_slowdown", true},
		{0x200, []string{"0x200"}, "0x200", false},
		{1 << 63, []string{"0x8000000000000000"}, "0x8000000000000000", false},
		{0x1FF, []string{"gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "sync_boost",
			"sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "display_clocks_setting"},
			"gpu_idle|applications_clocks_setting|sw_power_cap|hw_slowdown|sync_boost|sw_thermal_slowdown|hw_thermal_slowdown|hw_power_brake_slowdown|display_clocks_setting", true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%#x", uint64(tc.r)), func(t *testing.T) {
			if got := tc.r.Names(); !slices.Equal(got, tc.names) {
				t.Errorf("Names = %q, want %q", got, tc.names)
			}
			if got := tc.r.String(); got != tc.str {
				t.Errorf("String = %q, want %q", got, tc.str)
			}
			if got := tc.r.Throttled(); got != tc.throttled {
				t.Errorf("Throttled = %v, want %v", got, tc.throttled)
			}
			if got := (State{Reasons: tc.r}).Throttled(); got != tc.throttled {
				t.Errorf("State.Throttled = %v, want %v", got, tc.throttled)
			}
		})
	}
}

func TestDecodeFieldValue(t *testing.T) {
	raw := func(f func(b []byte)) [8]byte {
		var b [8]byte
		f(b[:])
		return b
	}
	e := binary.NativeEndian
	tests := []struct {
		name string
		typ  uint32
		raw  [8]byte
		want float64
		ok   bool
	}{
		{"uint (power mW)", valueUint, raw(func(b []byte) { e.PutUint32(b, 412345) }), 412345, true},
		{"ulong", valueULong, raw(func(b []byte) { e.PutUint64(b, 1<<40) }), 1 << 40, true},
		{"ulonglong", valueULongLong, raw(func(b []byte) { e.PutUint64(b, 123456789012) }), 123456789012, true},
		{"slonglong", valueSLongLong, raw(func(b []byte) { e.PutUint64(b, uint64(0xFFFFFFFFFFFFFFFF)) }), -1, true},
		{"sint", valueSInt, raw(func(b []byte) { e.PutUint32(b, uint32(0xFFFFFFFE)) }), -2, true},
		{"ushort", valueUShort, raw(func(b []byte) { e.PutUint16(b, 65535) }), 65535, true},
		{"double", valueDouble, raw(func(b []byte) { e.PutUint64(b, math.Float64bits(87.25)) }), 87.25, true},
		{"unknown type", 7, raw(func(b []byte) {}), 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := decodeFieldValue(tc.typ, tc.raw)
			if got != tc.want || ok != tc.ok {
				t.Errorf("decodeFieldValue = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestNVMLErrorIs(t *testing.T) {
	tests := []struct {
		code                 int
		noNVML, notSupported bool
	}{
		{nvmlLibraryNotFound, true, false},
		{nvmlDriverNotLoaded, true, false},
		{nvmlNotSupported, false, true},
		{999, false, false},
	}
	for _, tc := range tests {
		var err error = &NVMLError{Op: "op", Code: tc.code, Message: "msg"}
		err = fmt.Errorf("wrapped: %w", err)
		if got := errors.Is(err, ErrNoNVML); got != tc.noNVML {
			t.Errorf("code %d: Is(ErrNoNVML) = %v", tc.code, got)
		}
		if got := errors.Is(err, ErrNotSupported); got != tc.notSupported {
			t.Errorf("code %d: Is(ErrNotSupported) = %v", tc.code, got)
		}
	}
}
