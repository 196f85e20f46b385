package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/kreplay/kreplay/replay"
)

// spreadDefault is whether predict and run spread a one-rank input's
// signatures over every local GPU of device 0's kind when neither -device
// nor -devices is given: off until a whole prediction spread so has been
// held against one GPU's on a GPU machine (results/h200x2/predict-speed/:
// the group's CUDA-event times put a decode's GPU time 6.1% low; the
// CUPTI-timed group reached the host probe and no further). -devices all
// asks for it. Making it the default is setting this true.
const spreadDefault = false

// devicesAll is -devices' value for every local GPU of device 0's kind.
const devicesAll = "all"

// spreadWanted says whether a one-rank input's signatures go to every
// local GPU of device 0's kind: asked (-devices all), or by default
// (spreadDefault) where no GPU was named (-device, -devices) and nothing
// given needs one GPU (oneGPU: -families, -shared-energy, -roofline).
func spreadWanted(all bool, given map[string]bool, oneGPU bool) bool {
	return all || spreadDefault && !given["device"] && !given["devices"] && !oneGPU
}

// allLocalGPUs is every local GPU of device 0's kind, device 0 first, for
// -devices all (or the spreading default): it says on stderr what it
// spreads over and which GPUs of another kind it leaves out. It returns
// nil where it finds one such GPU or none (the caller keeps device 0,
// whose opening then reports a missing GPU as before).
func allLocalGPUs(cmd string, stderr io.Writer) []int {
	gpus, err := replay.LocalGPUs()
	if err != nil {
		fmt.Fprintf(stderr, "kreplay %s: -devices %s: %v; device 0 alone\n", cmd, devicesAll, err)
		return nil
	}
	if len(gpus) == 0 {
		return nil
	}
	same, others := replay.SameKind(gpus, 0)
	if len(same) < 2 {
		fmt.Fprintf(stderr, "kreplay %s: one %s here (device 0); the signatures run on it alone\n", cmd, gpus[0].Name)
		return nil
	}
	for _, g := range others {
		fmt.Fprintf(stderr, "kreplay %s: device %d (%s) left out: device 0 is a %s\n", cmd, g.Index, g.Name, gpus[0].Name)
	}
	idx := make([]string, len(same))
	for i, d := range same {
		idx[i] = fmt.Sprint(d)
	}
	fmt.Fprintf(stderr, "kreplay %s: signatures spread over %d x %s (devices %s)\n", cmd, len(same), gpus[0].Name, strings.Join(idx, ","))
	return same
}
