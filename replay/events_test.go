package replay

import "testing"

// TimeRepeats needs a repeat to time; it says so before touching the GPU.
func TestTimeRepeatsNone(t *testing.T) {
	if _, _, err := (&Device{}).TimeRepeats(1, 0, func() error { return nil }); err == nil {
		t.Error("no error for 0 repeats")
	}
}
