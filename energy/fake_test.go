package energy

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// simGPU is a test-only stand-in for a Device: an energy counter that
// publishes watts×period every period of wall-clock time, and constant
// states. It exists to exercise the goroutines of Measure and Sampler on
// the CPU; nothing outside tests uses it.
type simGPU struct {
	index     int
	start     time.Time
	period    time.Duration
	watts     float64
	noCounter bool  // EnergyCounter reports NOT_SUPPORTED
	frozen    bool  // the counter never changes
	failAfter int64 // State fails with ErrClosed after this many calls (0: never)

	states atomic.Int64
	mu     sync.Mutex
	reads  int
}

func (g *simGPU) Index() int { return g.index }

func (g *simGPU) EnergyCounter() (uint64, error) {
	if g.noCounter {
		return 0, &NVMLError{Op: "nvmlDeviceGetTotalEnergyConsumption", Code: nvmlNotSupported, Message: "Not Supported"}
	}
	g.mu.Lock()
	g.reads++
	g.mu.Unlock()
	if g.frozen {
		return 1000, nil
	}
	n := time.Since(g.start) / g.period
	return 1000 + uint64(float64(n)*g.watts*g.period.Seconds()*1000), nil
}

func (g *simGPU) State() (State, error) {
	n := g.states.Add(1)
	if g.failAfter > 0 && n > g.failAfter {
		return State{}, ErrClosed
	}
	if g.failAfter < 0 && n%2 == 0 {
		return State{}, errors.New("transient")
	}
	return State{Time: time.Now(), PowerW: g.watts, PowerSource: PowerInstant, SMClockMHz: 1980, MemClockMHz: 2619, TemperatureC: 40}, nil
}
