package replay

import (
	"time"

	"github.com/kreplay/kreplay/signatures"
)

// identityOptions are the measurement options of the identity pass: a
// short burst with CUPTI's kernel records on, no energy, no clock probe,
// hardly a pause or a warm-up (which kernels run does not depend on them).
func identityOptions(o SuiteOptions) SuiteOptions {
	io := o
	io.Measure.NoKernelTime = false
	io.Measure.Energy = false
	io.Measure.ClockProbe = false
	io.Measure.MinSamples, io.Measure.MaxSamples = 3, 3
	io.Measure.Budget = 50 * time.Millisecond
	io.Measure.Pause, io.Measure.Warmup = time.Microsecond, 2*time.Millisecond
	io.Measure.MinTime, io.Measure.Cooldown = 0, 0
	return io
}

// identify sets the SameKernel of each single-GPU signature a group of
// several GPUs measured (ranOn[i] the worker that did, -1 none): it runs
// each once more, one GPU at a time while the others idle, with CUPTI's
// kernel records on (which a sharded measurement cannot have, see
// RunSet), and keeps only which activities ran: the entry's times are the
// sharded measurement's. A signature whose identity run fails keeps no
// SameKernel; a GPU that loses its context stops identifying.
func (g *Group) identify(live []*Device, todo []*signatures.Signature, out []Entry, ranOn []int, o SuiteOptions) {
	io := identityOptions(o)
	for w, d := range live {
		for i, on := range ranOn {
			if on != w || out[i].Result == nil || d.Lost() != nil {
				continue
			}
			var probe Entry
			d.checkLost(todo[i], measureRecovered(d.runOne, todo[i], io, &probe), o)
			if probe.Result == nil {
				continue
			}
			out[i].SameKernel = probe.SameKernel
			out[i].Result.Ran = probe.Result.Ran
		}
	}
}
