package bench

import (
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
)

// A replay whose NVML sampler read nothing says so in its fidelity line,
// which reads back; one whose sampler read does not.
func TestFidelityThrottleUnchecked(t *testing.T) {
	for _, tt := range []struct {
		samplerErr string
		tail       string
	}{
		{"NVML reads failed, its states are not used: energy: GPU 0: 3 failed samples", "path p; throttling unchecked"},
		{"", "path p"},
	} {
		f := FidelityOf(&replay.Result{Fidelity: replay.FidelityOwn, Path: "p", Converged: true, SamplerErr: tt.samplerErr})
		line := FidelityLine("BenchmarkReplay/workload=w/sig=s", f)
		if !strings.HasSuffix(line, tt.tail) {
			t.Errorf("%q: line %q, want it to end %q", tt.samplerErr, line, tt.tail)
		}
		if _, _, got, ok := ParseFidelityLine(line); !ok || got != f || got.ThrottleUnchecked != (tt.samplerErr != "") {
			t.Errorf("%q read back as %+v, want %+v", line, got, f)
		}
	}
}
