package bench

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/runner"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/workload"
)

// EnvModelTicks sets the NVML counter ticks of the model's energy window
// (default 20: about 2 s; one tick is then about 5% of the window's energy
// at worst, and the window is aligned to ticks at both ends).
const EnvModelTicks = "KREPLAY_MODEL_TICKS"

// ModelBenchName is the sub-benchmark name of the model run.
func ModelBenchName(workload string) string { return WorkloadKey + "=" + workload + "/model" }

// Model runs the workload's real inference in PyTorch through kreplay's
// full-model runner (internal/runner): the model is built with random
// weights as the traces were, warmed up, and inferences run back to back
// until an energy window of whole NVML counter ticks closes. It reports
// the wall time of one inference as ns/op, its energy as J/op, and the
// GPU's idle power right after as idle-W, which the report uses for the
// energy of the idle gaps. It runs once per benchmark invocation.
func Model(b *testing.B, set *signatures.Set) {
	b.Helper()
	ticks := 20
	if v := os.Getenv(EnvModelTicks); v != "" {
		var err error
		if ticks, err = strconv.Atoi(v); err != nil || ticks < 2 {
			b.Fatalf("%s=%q: want a tick count of 2 or more", EnvModelTicks, v)
		}
	}
	var log strings.Builder
	res, err := workload.Measure(set.Source.Workload, ticks, &log)
	if l := strings.TrimSpace(log.String()); l != "" {
		b.Logf("%s", l)
	}
	if err != nil {
		if errors.Is(err, workload.ErrNoModel) || errors.Is(err, runner.ErrUnavailable) && !gputest.Required() {
			b.Skip(err)
		}
		b.Fatal(err)
	}
	reportMetrics(b, ModelMetrics(res))
}
