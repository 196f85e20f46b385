package replay

import (
	"errors"
	"fmt"

	"github.com/kreplay/kreplay/internal/cuda"
)

// ErrDataFlowFault is returned by PrepareTimeline with
// TimelineOptions.DataFlow when a launch of the timeline fails on the
// shared buffers.
var ErrDataFlowFault = errors.New("timeline: a kernel failed on the recorded data flow")

// stepDataFlow launches the timeline's order once, one launch at a time,
// each synchronized, before the graph is captured, and names the first
// launch that fails: on the recorded data flow a kernel reads what the
// replays before it left in the shared buffers, which need not be what
// it read in the capture (one recorded launch stands for every
// invocation of a signature, at that launch's addresses), and an index
// read from there can be out of range. A sticky failure is recorded as
// the loss of the device's context (Device.Lost). Only this first pass
// is checked: the values drift further with every pass
// (results/h200/timeline-dataflow/).
func (t *Timeline) stepDataFlow(order []*Prepared) error {
	s := t.dev.stream
	for i, p := range order {
		err := t.dev.Do(func() error {
			if err := p.Kernel.Launch(s, 0); err != nil {
				return err
			}
			return s.Synchronize()
		})
		if err == nil {
			continue
		}
		lost := ""
		if cuda.IsSticky(err) {
			lost = "; the GPU's context is lost for the rest of this process"
			t.dev.checkLost(p.Sig, err, SuiteOptions{})
		}
		return fmt.Errorf("%w: launch %d of %d, signature %s (%s): %w%s",
			ErrDataFlowFault, i+1, len(order), p.Sig.ID, p.Sig.Label, err, lost)
	}
	return nil
}

// kernelsPerLaunchInOrder is kernelsPerLaunch on the recorded data flow:
// it launches the timeline's order once, in order, and counts each
// launch's kernels where its signature comes last. Launched out of order
// (kernelsPerLaunch's way), a kernel on the shared buffers would read
// what no pass of the timeline leaves there.
func (t *Timeline) kernelsPerLaunchInOrder(rec *recorder) (map[*Prepared]int, error) {
	if err := rec.discard(); err != nil {
		return nil, err
	}
	per := map[*Prepared]int{}
	for _, p := range t.order {
		if err := p.Kernel.Launch(t.dev.stream, 0); err != nil {
			return nil, err
		}
		ks, err := kernelRecords(rec)
		if err != nil {
			return nil, err
		}
		per[p] = len(ks)
	}
	return per, nil
}
