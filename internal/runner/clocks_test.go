package runner

import (
	"encoding/json"
	"testing"
)

// TestClocks reads a run reply's clock fields, with and without the GPU
// temperature, and says them in one line.
func TestClocks(t *testing.T) {
	for _, tc := range []struct {
		name, reply, want string
	}{
		{"no temperature", `{"sm_clock_mhz": 1980, "sm_clock_min_mhz": 1980, "sm_clock_max_mhz": 1980, "power_capped": 0, "throttled": 0, "clock_samples": 177}`,
			"SM 1980 MHz (1980-1980), power-capped 0% of the window"},
		{"temperature", `{"sm_clock_mhz": 1720.4, "sm_clock_min_mhz": 1410, "sm_clock_max_mhz": 1980, "power_capped": 0.35, "throttled": 0.4, "clock_samples": 90, "gpu_temp_c": 41.4, "gpu_temp_max_c": 44}`,
			"SM 1720 MHz (1410-1980), power-capped 35% of the window, GPU 41 C (max 44 C)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Clocks
			if err := json.Unmarshal([]byte(tc.reply), &c); err != nil {
				t.Fatal(err)
			}
			if got := c.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			b, err := json.Marshal(&c)
			if err != nil {
				t.Fatal(err)
			}
			var back Clocks
			if err := json.Unmarshal(b, &back); err != nil || back != c {
				t.Errorf("round trip %s: %+v, %v; want %+v", b, back, err, c)
			}
		})
	}
}
