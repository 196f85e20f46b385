package energy

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// DefaultSampleInterval is the default period of a [Sampler].
const DefaultSampleInterval = 10 * time.Millisecond

// Sample is one [State] of one device, taken by a [Sampler].
type Sample struct {
	// Device is the NVML index of the GPU sampled.
	Device int
	State
}

// stateReader is what a Sampler reads; *Device implements it.
type stateReader interface {
	State() (State, error)
	Index() int
}

// Sampler samples the [State] of one or more devices in the background, one
// goroutine per device, until [Sampler.Stop].
type Sampler struct {
	interval time.Duration
	quit     chan struct{}
	wg       sync.WaitGroup
	series   []*series

	once    sync.Once
	samples []Sample
	err     error
}

// series is written only by its goroutine; mu guards samples, which
// [Sampler.Samples] reads while the goroutine runs. errs and err are read
// after it has ended.
type series struct {
	dev     int
	mu      sync.Mutex
	samples []Sample
	errs    int
	err     error
}

// StartSampler starts sampling devs every interval (DefaultSampleInterval
// if interval <= 0). The first sample of each device is taken at once.
// Sampling keeps its period when a State call is slow by skipping ticks.
func StartSampler(interval time.Duration, devs ...*Device) (*Sampler, error) {
	if len(devs) == 0 {
		return nil, errors.New("energy: StartSampler needs at least one device")
	}
	readers := make([]stateReader, len(devs))
	for i, d := range devs {
		if d == nil {
			return nil, errors.New("energy: StartSampler given a nil device")
		}
		readers[i] = d
	}
	return startSampler(interval, readers), nil
}

func startSampler(interval time.Duration, readers []stateReader) *Sampler {
	if interval <= 0 {
		interval = DefaultSampleInterval
	}
	s := &Sampler{interval: interval, quit: make(chan struct{})}
	for _, r := range readers {
		ser := &series{dev: r.Index()}
		s.series = append(s.series, ser)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.run(r, ser)
		}()
	}
	return s
}

func (s *Sampler) run(r stateReader, ser *series) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		st, err := r.State()
		if err != nil {
			ser.errs++
			if ser.err == nil {
				ser.err = err
			}
			if errors.Is(err, ErrClosed) {
				return
			}
		} else {
			ser.mu.Lock()
			ser.samples = append(ser.samples, Sample{Device: ser.dev, State: st})
			ser.mu.Unlock()
		}
		select {
		case <-t.C:
		case <-s.quit:
			return
		}
	}
}

// Interval is the sampling period.
func (s *Sampler) Interval() time.Duration { return s.interval }

// Samples returns the samples taken so far, in time order, while sampling
// goes on: a copy, so a later sample does not change it. After
// [Sampler.Stop] it returns what Stop returned.
func (s *Sampler) Samples() []Sample {
	var out []Sample
	for _, ser := range s.series {
		ser.mu.Lock()
		out = append(out, ser.samples...)
		ser.mu.Unlock()
	}
	slices.SortStableFunc(out, func(a, b Sample) int { return a.Time.Compare(b.Time) })
	return out
}

// Stop ends sampling, waits for the goroutines and returns all samples in
// time order, with an error describing failed State calls (the first error
// of each device and how many failed; those samples are missing). Calling
// Stop again returns the same result.
func (s *Sampler) Stop() ([]Sample, error) {
	s.once.Do(func() {
		close(s.quit)
		s.wg.Wait()
		var errs []error
		for _, ser := range s.series {
			s.samples = append(s.samples, ser.samples...)
			if ser.err != nil {
				errs = append(errs, fmt.Errorf("energy: GPU %d: %d failed samples, first: %w", ser.dev, ser.errs, ser.err))
			}
		}
		slices.SortStableFunc(s.samples, func(a, b Sample) int { return a.Time.Compare(b.Time) })
		s.err = errors.Join(errs...)
	})
	return s.samples, s.err
}

// DeviceStates returns the states of the samples taken of the given device
// index, in order.
func DeviceStates(samples []Sample, device int) []State {
	var out []State
	for _, s := range samples {
		if s.Device == device {
			out = append(out, s.State)
		}
	}
	return out
}
