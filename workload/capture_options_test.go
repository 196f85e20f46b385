package workload

import "testing"

// ProfileWarmup's zero value is the default, a negative one none.
func TestProfileWarmup(t *testing.T) {
	for _, c := range []struct{ set, want int }{{0, DefaultProfileWarmup}, {-1, 0}, {1, 1}, {3, 3}} {
		if got := (CaptureOptions{ProfileWarmup: c.set}).profileWarmup(); got != c.want {
			t.Errorf("ProfileWarmup %d: the runner gets %d, want %d", c.set, got, c.want)
		}
	}
}
