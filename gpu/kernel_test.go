package gpu

import (
	"testing"
	"time"
)

type plain struct{}

func (plain) Launch(*Stream, int) error { return nil }
func (plain) Sets() int                 { return 1 }
func (plain) Footprint() int64          { return 0 }
func (plain) Work() Work                { return Work{} }
func (plain) Capturable() bool          { return true }
func (plain) Close() error              { return nil }

type paced struct {
	plain
	streamed bool
	pace     time.Duration
}

func (p paced) Streamed() bool      { return p.streamed }
func (p paced) Pace() time.Duration { return p.pace }

func TestPaceOf(t *testing.T) {
	for _, c := range []struct {
		name string
		k    Kernel
		want time.Duration
	}{
		{"not paced", plain{}, 0},
		{"paced", paced{streamed: true, pace: 3 * time.Microsecond}, 3 * time.Microsecond},
		{"not streamed", paced{streamed: false, pace: time.Microsecond}, 0},
		{"negative", paced{streamed: true, pace: -time.Microsecond}, 0},
	} {
		if got := PaceOf(c.k); got != c.want {
			t.Errorf("%s: PaceOf = %v, want %v", c.name, got, c.want)
		}
	}
}
