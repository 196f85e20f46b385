package replay

import (
	"errors"
	"fmt"
)

// ErrDataFlowFault is returned by PrepareTimeline with
// TimelineOptions.DataFlow when a launch of the timeline fails on the
// shared buffers. The CUDA context is then lost for the rest of the
// process.
var ErrDataFlowFault = errors.New("timeline: a kernel failed on the recorded data flow")

// stepDataFlow launches the timeline's order once, one launch at a time,
// each synchronized, before the graph is captured. On the recorded data
// flow a kernel reads what the replays before it left in the shared
// buffers. That need not be what it read in the capture: a signature
// replays one recorded launch at each of its invocations, at that
// launch's addresses, where the caching allocator may since have put
// other tensors. An index read from there can be out of range, and the
// kernel asserts. On two decodes a graph of such launches killed the
// process inside cuGraphLaunch; launched one at a time, a third stopped
// at an index_select's device-side assert in its first pass
// (results/h200/timeline-dataflow/). This pass names such a launch. It
// checks the first pass only: the values drift further with every pass,
// and a fourth decode passed it: during the samples a gather asserted
// on an index out of bounds, which the samples' events did not return
// and the census after them did (Measure fails with it).
func (t *Timeline) stepDataFlow(order []*Prepared) error {
	s := t.dev.stream
	for i, p := range order {
		err := t.dev.Do(func() error {
			if err := p.Kernel.Launch(s, 0); err != nil {
				return err
			}
			return s.Synchronize()
		})
		if err != nil {
			return fmt.Errorf("%w: launch %d of %d, signature %s (%s): %v; the GPU context is lost for the rest of this process",
				ErrDataFlowFault, i+1, len(order), p.Sig.ID, p.Sig.Label, err)
		}
	}
	return nil
}
