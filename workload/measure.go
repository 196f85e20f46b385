package workload

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kreplay/kreplay/internal/runner"
)

// ErrNoModel wraps Measure's error for a workload the full-model runner
// cannot run: no spec, or one it does not run (Spec.Runnable).
var ErrNoModel = errors.New("no full-model run for this workload")

// Warm-up before a measured run: at least WarmupInferences inferences and
// WarmupTime. Seconds of it: the host side of a launch-bound model takes
// that long to settle (a few warm-up inferences leave its later rounds
// markedly faster than its first; see
// results/h100/predict/model_protocol.txt), and torch.compile compiles in
// it.
const (
	WarmupInferences = 3
	WarmupTime       = 3 * time.Second
)

// warmupTime is WarmupTime, shorter in tests.
var warmupTime = WarmupTime

// DefaultTicks is the NVML counter ticks of a measured run's energy
// window when none is given (about 2 s).
const DefaultTicks = 20

// MinInferences is the fewest inferences a measured run times, whatever
// its energy window: the median of their spans (the model benchmark's
// ns/op) needs more than the 4 or 5 that a 20-tick window holds of a
// decode of half a second (qwen05b-decode, H100: medians 549 and 505 ms
// in two runs of 5 inferences, the capture's 509 ms).
const MinInferences = 20

// maxRunTime bounds a measured run.
const maxRunTime = 5 * time.Minute

// Start starts the runner that runs s: kreplay's own for a model, the
// spec's command otherwise, with env added to its environment. python
// runs kreplay's runner (default python3).
func Start(s *Spec, python string, env []string) (*runner.Runner, error) {
	opt := runner.StartOptions{Python: python, Env: env}
	if c := s.Command; c != nil {
		opt.Command, opt.Dir = c.Argv, c.Dir
	}
	return runner.Start(opt)
}

// Measure runs a workload for real through the full-model runner: load,
// warm up, then inferences back to back until an energy window of ticks
// NVML counter ticks (default DefaultTicks) closes. Progress lines go to
// log. A nil spec, or one the runner does not run, is an error wrapping
// ErrNoModel.
func Measure(s *Spec, ticks int, log io.Writer) (*runner.Result, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: no workload spec", ErrNoModel)
	}
	if err := s.Runnable(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoModel, err)
	}
	r, _, err := load(s, "", nil, log, "model")
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return measure(r, ticks, log, "model")
}

// load starts the runner for s with env added to its environment and
// loads the workload; progress lines, prefixed, go to log.
func load(s *Spec, python string, env []string, log io.Writer, prefix string) (*runner.Runner, *runner.Info, error) {
	r, err := Start(s, python, env)
	if err != nil {
		return nil, nil, err
	}
	info, err := r.Load(s)
	if err != nil {
		r.Close()
		return nil, nil, err
	}
	fmt.Fprintf(log, "%s: %s on %s, torch %s, CUDA %s, driver %s\n", prefix, s.Name, info.GPU, info.Torch, info.CUDA, info.Driver)
	if info.Compile != "" {
		fmt.Fprintf(log, "%s: compiled %s\n", prefix, info.Compile)
	}
	return r, info, nil
}

// warmup warms the loaded workload up: at least WarmupInferences
// inferences and WarmupTime.
func warmup(r *runner.Runner, log io.Writer, prefix string) error {
	n, err := r.Warmup(WarmupInferences, warmupTime)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "%s: %d warm-up inferences\n", prefix, n)
	return nil
}

// measure warms the loaded workload up, then runs it back to back until
// an energy window of ticks NVML counter ticks (default DefaultTicks)
// closes and MinInferences ran, then measures the idle power (the
// runner's run request).
func measure(r *runner.Runner, ticks int, log io.Writer, prefix string) (*runner.Result, error) {
	if ticks == 0 {
		ticks = DefaultTicks
	}
	if err := warmup(r, log, prefix); err != nil {
		return nil, err
	}
	res, err := r.Run(ticks, MinInferences, maxRunTime)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "%s: %d inferences back to back, %.2f of them in an energy window of %d ticks (%.2f s)\n",
		prefix, res.Inferences, res.Inside, res.Ticks, res.WindowS)
	return res, nil
}

// withFirsts is r's energy per inference with the measured blocks' first
// inferences counted, as a suffix to its energy per inference ("" where
// the runner did not give it).
func withFirsts(r *runner.Result) string {
	if r.EnergyJWithFirsts <= 0 {
		return ""
	}
	return fmt.Sprintf(" back to back (%.4g J with each block's first)", r.EnergyJWithFirsts)
}
