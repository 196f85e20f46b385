package workload

import (
	"fmt"
	"io"

	"github.com/kreplay/kreplay/internal/runner"
)

// MeasureGroup runs a tensor-parallel workload (Spec.World > 1) for real
// as Capture measures one: one runner per rank on its device
// (runner.Group), loaded, warmed up and run in lock step until every
// rank's energy window of ticks NVML counter ticks (default DefaultTicks)
// closed and MinInferences ran, then each GPU's idle power. It returns
// each rank's run, in rank order, with its own GPU's energy. Progress
// lines go to log. A nil spec, one of a single rank (Measure runs it) or
// one Capture cannot run (Spec.Capturable) is an error wrapping
// ErrNoModel; a rank that fails fails the run, named.
func MeasureGroup(s *Spec, ticks int, log io.Writer) ([]*runner.Result, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: no workload spec", ErrNoModel)
	}
	if err := s.Capturable(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoModel, err)
	}
	if s.World() < 2 {
		return nil, fmt.Errorf(`%w: workload %s runs as one process (no "parallel" of 2 or more ranks): Measure runs it`, ErrNoModel, s.Name)
	}
	g, _, err := loadGroup(s, "", s.Devices, nil, nil, log, "model")
	if err != nil {
		return nil, err
	}
	defer g.Close()
	res, err := measureGroup(g, ticks, warmupTime, log, "model", nil)
	if err != nil {
		return nil, err
	}
	for r, res := range res {
		fmt.Fprintf(log, "model: rank %d (device %d): %.4g ms and %.4g J per inference%s, idle %.1f W\n",
			r, s.Devices[r], res.WallSPerInference*1e3, res.EnergyJPerInference, withFirsts(res), res.IdleW)
	}
	return res, nil
}
