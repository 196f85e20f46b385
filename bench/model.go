package bench

import (
	"errors"
	"fmt"
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

// Model runs the workload's real inference through kreplay's full-model
// runner (internal/runner), as spec says: the generated package's
// spec.json (JSON; nil for a package generated from a plain trace, whose
// spec is then the built-in one its workload's name gives, if any, see
// workload.FromName). The workload is loaded, warmed up, and inferences
// run back to back until an energy window of whole NVML counter ticks
// closes. It reports the wall time of one inference as ns/op (the median
// inference's, with the mean as mean-ns: see ModelMetrics), its energy as
// J/op, and the GPU's idle power right after as idle-W, which the report
// uses for the energy of the idle gaps. It runs once per benchmark
// invocation.
//
// When the model cannot run (no spec, a spec the runner does not run or
// one of several ranks, no PyTorch or no GPU), Model prints why on
// standard output, in a line that go test shows without -v
// (NoModelLine), and skips; under KREPLAY_REQUIRE_GPU=1 a missing
// PyTorch or GPU fails instead.
func Model(b *testing.B, set *signatures.Set, spec []byte) {
	b.Helper()
	ticks := modelTicks(b)
	s, err := ModelSpec(set, spec)
	if err == nil {
		err = oneProcess(s)
	}
	if err != nil {
		noModel(b, err)
	}
	var log strings.Builder
	res, err := workload.Measure(s, ticks, &log)
	if l := strings.TrimSpace(log.String()); l != "" {
		b.Logf("%s", l)
	}
	if err != nil {
		modelFailed(b, err)
	}
	reportMetrics(b, ModelMetrics(res))
}

// modelTicks is the energy window's ticks EnvModelTicks asks for
// (default 20); a value that is not a count of 2 or more fails b.
func modelTicks(b *testing.B) int {
	b.Helper()
	ticks := 20
	if v := os.Getenv(EnvModelTicks); v != "" {
		var err error
		if ticks, err = strconv.Atoi(v); err != nil || ticks < 2 {
			b.Fatalf("%s=%q: want a tick count of 2 or more", EnvModelTicks, v)
		}
	}
	return ticks
}

// modelFailed ends a model benchmark whose run failed with err: skipped
// with a NoModelLine for a workload the runner does not run, or without
// PyTorch or a GPU unless one is required (gputest.Required); failed
// otherwise.
func modelFailed(b *testing.B, err error) {
	b.Helper()
	if errors.Is(err, workload.ErrNoModel) || errors.Is(err, runner.ErrUnavailable) && !gputest.Required() {
		noModel(b, err)
	}
	b.Fatal(err)
}

// ModelSpec is the spec Model runs: spec parsed, or for a set without one
// the spec its workload's name gives (workload.FromName). The error wraps
// workload.ErrNoModel when there is none.
func ModelSpec(set *signatures.Set, spec []byte) (*workload.Spec, error) {
	if len(spec) == 0 {
		s, err := workload.FromName(set.Source.Workload)
		if err != nil {
			return nil, fmt.Errorf("%w: %v (generate the package from a bundle, kreplay capture's output, to run any workload)", workload.ErrNoModel, err)
		}
		return s, nil
	}
	s, err := workload.ParseSpec(spec, SpecFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", workload.ErrNoModel, err)
	}
	return s, nil
}

// oneProcess returns an error wrapping workload.ErrNoModel for a spec of
// several ranks, which a package of one set does not run: a package
// generated from the whole bundle does (GroupModel).
func oneProcess(s *workload.Spec) error {
	if s.World() < 2 {
		return nil
	}
	return fmt.Errorf("%w: workload %s runs as %d ranks, and this package holds one rank's set: generate the package from the bundle "+
		"(kreplay gen BUNDLE), whose BenchmarkModel runs the ranks together", workload.ErrNoModel, s.Name, s.World())
}

// noModel says why the model does not run, in a line go test prints
// without -v, and skips.
func noModel(b *testing.B, err error) {
	b.Helper()
	fmt.Println(NoModelLine(b.Name(), err.Error()))
	b.Skip(err)
}

// noModelPrefix starts a NoModelLine. It is not a benchfmt configuration
// line ("key: value" with a lower-case key and no space), so benchstat and
// benchfmt pass over it.
const noModelPrefix = "kreplay "

// NoModelLine is the line Model prints when the model benchmark name
// cannot run: "kreplay BenchmarkModel/workload=W/model: no model run:
// REASON" (ParseNoModelLine reads it back).
func NoModelLine(name, reason string) string {
	return noModelPrefix + name + ": no model run: " + strings.ReplaceAll(reason, "\n", " ")
}

// ParseNoModelLine reads a NoModelLine: the workload of the benchmark it
// names and the reason.
func ParseNoModelLine(line string) (workload, reason string, ok bool) {
	rest, ok := strings.CutPrefix(line, noModelPrefix+"Benchmark"+ModelName+"/")
	if !ok {
		return "", "", false
	}
	name, reason, ok := strings.Cut(rest, ": no model run: ")
	if !ok {
		return "", "", false
	}
	w, ok := strings.CutPrefix(name, WorkloadKey+"=")
	if !ok {
		return "", "", false
	}
	w, _, _ = strings.Cut(w, "/")
	return w, reason, w != ""
}
