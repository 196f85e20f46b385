package predict

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// ErrMixedGPUs: FlowOptions.Devices names GPUs of different kinds or
// drivers, whose replays would not make one prediction.
var ErrMixedGPUs = errors.New("GPUs of different kinds")

// openFlowDevices opens the GPUs of o (Devices, or Device alone) as a
// group, each with o's tier-3 configuration; a GPU that does not open is
// ErrNoGPU, GPUs that differ ErrMixedGPUs.
func openFlowDevices(o FlowOptions) (*replay.Group, error) {
	idx := o.Devices
	if len(idx) == 0 {
		idx = []int{o.Device}
	}
	g, err := replay.OpenGroup(idx...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGPU, err)
	}
	for _, d := range g.Devices {
		d.Tier3 = o.Tier3
	}
	if err := sameKind(g.Devices); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// sameKind says whether the devices are of one GPU kind and driver.
func sameKind(ds []*replay.Device) error {
	for _, d := range ds[1:] {
		if d.Name != ds[0].Name || d.DriverVersion != ds[0].DriverVersion {
			return fmt.Errorf("%w: device %d is %s (driver %d), device %d %s (driver %d)", ErrMixedGPUs,
				ds[0].Index, ds[0].Name, ds[0].DriverVersion, d.Index, d.Name, d.DriverVersion)
		}
	}
	return nil
}

// gpusOf names the group's GPUs: "NVIDIA H200", or "2 x NVIDIA H200
// (devices 0,1)".
func gpusOf(g *replay.Group) string {
	if len(g.Devices) == 1 {
		return g.Devices[0].Name
	}
	idx := make([]string, len(g.Devices))
	for i, d := range g.Devices {
		idx[i] = fmt.Sprint(d.Index)
	}
	return fmt.Sprintf("%d x %s (devices %s)", len(g.Devices), g.Devices[0].Name, strings.Join(idx, ","))
}

// runFlowSet replays set's signatures on the group's GPU, or spread over
// its GPUs, and says which lost its context first (nil: none).
func runFlowSet(g *replay.Group, set *signatures.Set, o replay.SuiteOptions) ([]replay.Entry, error) {
	var entries []replay.Entry
	if len(g.Devices) == 1 {
		entries = g.Devices[0].RunSet(set, o)
	} else {
		entries = g.RunSet(set, o)
	}
	for _, d := range g.Devices {
		if err := d.Lost(); err != nil {
			return entries, err
		}
	}
	return entries, nil
}
