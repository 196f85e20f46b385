package bench

import (
	"bytes"
	"strings"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/roofline"
)

// MachinePrefix starts a machine line: "# gpu-uuid: GPU-…". kreplay
// writes the lines whose value differs between two machines of one
// configuration (IsMachineKey) so, not as benchfmt configuration lines,
// which benchstat's default -table .config would split on: two outputs
// of two GPUs of one model then fall into one table and are compared.
// benchfmt passes over a machine line; MachineLinesAsConfig reads it
// back as configuration for kreplay's own readers.
const MachinePrefix = "# "

// IsMachineKey reports whether a configuration key's value belongs to
// the one machine rather than its configuration: the GPU's UUID
// (replay.KeyGPUUUID), and the peaks measured on it and when
// (roofline.KeyMeasured and the "peak-" keys of roofline.Peaks.Config).
func IsMachineKey(key string) bool {
	return key == replay.KeyGPUUUID || key == roofline.KeyMeasured || strings.HasPrefix(key, "peak-")
}

// MachineLinesAsConfig returns benchmark output with its machine lines
// ("# key: value", IsMachineKey(key)) turned into the configuration lines
// ("key: value") they stand for, in place, so that a benchfmt reader
// gives them to the results that follow as it gives any configuration.
// Output written before machine lines existed has them as configuration
// lines already and is returned as it is.
func MachineLinesAsConfig(data []byte) []byte {
	if !bytes.Contains(data, []byte("\n"+MachinePrefix)) && !bytes.HasPrefix(data, []byte(MachinePrefix)) {
		return data
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, l := range lines {
		rest, ok := bytes.CutPrefix(l, []byte(MachinePrefix))
		if !ok {
			continue
		}
		if key, _, ok := bytes.Cut(rest, []byte(":")); ok && IsMachineKey(string(key)) {
			lines[i] = rest
		}
	}
	return bytes.Join(lines, nil)
}
