package replay

import (
	"testing"
	"time"
)

func TestETA(t *testing.T) {
	start := time.Now().Add(-10 * time.Second)
	for _, tc := range []struct {
		done, total int
		want        string
	}{
		{0, 10, ""},
		{10, 10, ""},
		{5, 10, ", ~10s left"},
		{1, 4, ", ~30s left"},
	} {
		if got := eta(start, tc.done, tc.total); got != tc.want {
			t.Errorf("eta(10s ago, %d, %d) = %q, want %q", tc.done, tc.total, got, tc.want)
		}
	}
}
