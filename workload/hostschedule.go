package workload

import (
	"fmt"

	"github.com/kreplay/kreplay/schedule"
	"github.com/kreplay/kreplay/signatures"
)

// HostSchedule returns the host schedule the whole-inference model takes
// for the bundle's trace (as named in Traces) and that trace's runtime
// calls, which order its launches: the schedule of the process whose
// measured run the bundle keeps (or its first) where the bundle has
// schedules, else one made from the profiled trace (schedule.FromRuntime,
// Source schedule.SourceTrace: a guess, for the profiler slows the host).
func (b *Bundle) HostSchedule(trace string) (*schedule.Schedule, *signatures.Runtime, error) {
	f, err := b.fsys.Open(trace)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", b.Name, err)
	}
	defer f.Close()
	rt, err := signatures.ReadRuntime(f, b.file(trace))
	if err != nil {
		return nil, nil, err
	}
	if len(b.Manifest.Schedules) == 0 || len(b.Manifest.Traces) != 1 {
		s, err := schedule.FromRuntime(rt)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: a host schedule from the trace: %w", b.file(trace), err)
		}
		return s, rt, nil
	}
	i := max(b.MeasuredSchedule(), 0)
	r, err := b.OpenSchedule(i)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	s, err := schedule.Read(r)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", b.file(b.Manifest.Schedules[i]), err)
	}
	return s, rt, nil
}
