package workload

import (
	"fmt"
	"strings"

	"github.com/kreplay/kreplay/schedule"
	"github.com/kreplay/kreplay/signatures"
)

// HostSchedule returns the host schedule the whole-inference model takes
// for the bundle's trace (as named in Traces) and that trace's runtime
// calls, which order its launches: the schedule of the process whose
// measured run the bundle keeps (or its first) where the bundle has
// schedules (in a multi-rank bundle, the trace's rank's), else one made from the profiled trace (schedule.FromRuntime,
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
	name := b.scheduleOf(trace)
	if name == "" {
		s, err := schedule.FromRuntime(rt)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: a host schedule from the trace: %w", b.file(trace), err)
		}
		return s, rt, nil
	}
	s, err := b.readSchedule(name)
	if err != nil {
		return nil, nil, err
	}
	return s, rt, nil
}

// scheduleOf names the recorded host schedule that goes with the trace:
// the measured process's (or the first) of the trace's rank in a
// multi-rank bundle, of the bundle otherwise; "" when there is none.
func (b *Bundle) scheduleOf(trace string) string {
	list := b.Manifest.Schedules
	if len(b.Manifest.Ranks) > 0 {
		list = nil
		for _, r := range b.Manifest.Ranks {
			if r.Trace == trace {
				list = r.Schedules
			}
		}
	} else if len(b.Manifest.Traces) != 1 {
		return ""
	}
	if len(list) == 0 {
		return ""
	}
	if p := b.Manifest.MeasuredProcess; p != nil {
		for _, name := range list {
			if strings.HasSuffix(name, fmt.Sprintf(".p%d.txt.gz", *p)) {
				return name
			}
		}
	}
	return list[0]
}
