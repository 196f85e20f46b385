package workload

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kreplay/kreplay/internal/runner"
)

// ErrNoModel wraps Measure's error for a workload the full-model runner
// cannot run.
var ErrNoModel = errors.New("no full-model run for this workload")

// Measure runs a workload in PyTorch through the full-model runner: load,
// warm up, then inferences back to back until an energy window of ticks
// NVML counter ticks (default 20) closes. Progress lines go to log.
func Measure(name string, ticks int, log io.Writer) (*runner.Result, error) {
	w, err := runner.ParseWorkload(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoModel, err)
	}
	if ticks == 0 {
		ticks = 20
	}
	r, err := runner.Start("")
	if err != nil {
		return nil, err
	}
	defer r.Close()
	info, err := r.Load(w)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "model: %s on %s, torch %s, CUDA %s, driver %s\n", name, info.GPU, info.Torch, info.CUDA, info.Driver)
	// Seconds of warm-up: the host side of a launch-bound model takes
	// that long to settle (BLOOM-560M prefill on the H100 timed 21.8,
	// 17.3 and 13.5 ms per inference in three rounds after 5 warm-up
	// inferences; results/h100/predict/model_protocol.txt).
	n, err := r.Warmup(3, 3*time.Second)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "model: %d warm-up inferences\n", n)
	res, err := r.Run(ticks, 5*time.Minute)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "model: %d inferences back to back, %.2f of them in an energy window of %d ticks (%.2f s)\n",
		res.Inferences, res.Inside, res.Ticks, res.WindowS)
	return res, nil
}
