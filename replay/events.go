package replay

import (
	"fmt"
	"slices"
	"time"

	"github.com/kreplay/kreplay/internal/cuda"
)

// events is the package's one timer: a pair of CUDA events recorded on a
// stream around the work timed. Every time the package measures (a
// signature's batches, a collective's, a timeline's) and TimeRepeats
// come from it.
type events struct{ start, end *cuda.Event }

// newEvents creates the pair. Call inside Do.
func newEvents() (events, error) {
	start, err := cuda.NewEvent(true)
	if err != nil {
		return events{}, err
	}
	end, err := cuda.NewEvent(true)
	if err != nil {
		start.Destroy()
		return events{}, err
	}
	return events{start, end}, nil
}

// close destroys the events that exist.
func (e events) close() {
	if e.start != nil {
		e.start.Destroy()
	}
	if e.end != nil {
		e.end.Destroy()
	}
}

// around records the start event on s, enqueues work, records the end
// event, waits for it (with wait, or Synchronize when wait is nil) and
// returns the time between the two on the GPU.
func (e events) around(s *cuda.Stream, work func() error, wait func(*cuda.Event) error) (time.Duration, error) {
	if err := e.start.Record(s); err != nil {
		return 0, err
	}
	if err := work(); err != nil {
		return 0, err
	}
	if err := e.end.Record(s); err != nil {
		return 0, err
	}
	if wait == nil {
		wait = (*cuda.Event).Synchronize
	}
	if err := wait(e.end); err != nil {
		return 0, err
	}
	return cuda.Elapsed(e.start, e.end)
}

// TimeRepeats enqueues op on the device's stream warmup times, then times
// each of repeats runs of it alone with the package's timer, and returns
// the best and median times in nanoseconds. op enqueues its work on
// Stream. Call inside Do. It is for work that is not a signature (the
// roofline's peaks: a device copy, a library GEMM); Measure times those.
func (d *Device) TimeRepeats(warmup, repeats int, op func() error) (best, median float64, err error) {
	if repeats < 1 {
		return 0, 0, fmt.Errorf("replay: TimeRepeats of %d repeats", repeats)
	}
	ev, err := newEvents()
	if err != nil {
		return 0, 0, err
	}
	defer ev.close()
	for range warmup {
		if err := op(); err != nil {
			return 0, 0, err
		}
	}
	if err := d.stream.Synchronize(); err != nil {
		return 0, 0, err
	}
	ts := make([]float64, 0, repeats)
	for range repeats {
		el, err := ev.around(d.stream, op, nil)
		if err != nil {
			return 0, 0, err
		}
		ts = append(ts, float64(el.Nanoseconds()))
	}
	slices.Sort(ts)
	median = ts[len(ts)/2]
	if len(ts)%2 == 0 {
		median = (ts[len(ts)/2-1] + ts[len(ts)/2]) / 2
	}
	if !(ts[0] > 0) {
		return 0, 0, fmt.Errorf("timed %g ns: the events did not time the work", ts[0])
	}
	return ts[0], median, nil
}
