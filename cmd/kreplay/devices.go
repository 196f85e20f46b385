package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/kreplay/kreplay/replay"
)

// allLocalGPUs is -devices' default for a one-rank input where neither
// -device nor -devices is given: every local GPU of device 0's kind,
// device 0 first, said on stderr with the GPUs of another kind left out.
// It returns nil where it finds one GPU or none (the caller keeps device
// 0, whose opening then reports a missing GPU as before).
func allLocalGPUs(cmd string, stderr io.Writer) []int {
	gpus, err := replay.LocalGPUs()
	if err != nil || len(gpus) < 2 {
		return nil
	}
	same, others := replay.SameKind(gpus, 0)
	for _, g := range others {
		fmt.Fprintf(stderr, "kreplay %s: device %d (%s) left out: not a %s as device 0 is; -devices names GPUs to use\n", cmd, g.Index, g.Name, gpus[0].Name)
	}
	if len(same) < 2 {
		return nil
	}
	idx := make([]string, len(same))
	for i, d := range same {
		idx[i] = fmt.Sprint(d)
	}
	fmt.Fprintf(stderr, "kreplay %s: signatures spread over %d x %s (devices %s); -device or -devices narrows it\n", cmd, len(same), gpus[0].Name, strings.Join(idx, ","))
	return same
}
