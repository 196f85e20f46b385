package bench

import (
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
)

// An interpolated result's flag is written last and read back; a line
// without it reads back unflagged.
func TestFidelityInterpolated(t *testing.T) {
	for _, interp := range []bool{false, true} {
		f := FidelityOf(&replay.Result{Fidelity: replay.FidelityOwn, Path: "p", Converged: true})
		f.Interpolated = interp
		line := FidelityLine("BenchmarkReplay/workload=w/sig=s", f)
		if strings.HasSuffix(line, "path p; interpolated") != interp {
			t.Errorf("interpolated %v: line %q", interp, line)
		}
		if _, _, got, ok := ParseFidelityLine(line); !ok || got != f {
			t.Errorf("%q read back as %+v, want %+v", line, got, f)
		}
	}
}
