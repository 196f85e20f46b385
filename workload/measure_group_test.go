package workload

import (
	"errors"
	"strings"
	"testing"
)

// MeasureGroup on two stand-in GPUs: one run per rank, in rank order,
// each with its own GPU's energy and idle power, and progress lines per
// rank.
func TestMeasureGroup(t *testing.T) {
	fakeGPU(t)
	spec := tpSpec(t, []int{3, 1}, "")
	var log strings.Builder
	res, err := MeasureGroup(spec, 3, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(res) != 2 {
		t.Fatalf("%d results, want 2", len(res))
	}
	for r, res := range res {
		if res.Inferences < MinInferences || res.WallSPerInference <= 0 || res.EnergyJPerInference <= 0 || res.IdleW <= 0 {
			t.Errorf("rank %d's run %+v", r, res)
		}
	}
	if res[0].Inferences != res[1].Inferences {
		t.Errorf("ranks ran %d and %d inferences, want the same (lock step)", res[0].Inferences, res[1].Inferences)
	}
	for _, want := range []string{"rank 1 of 2", "model: rank 0 (device 3):", "model: rank 1 (device 1):"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}

// What MeasureGroup does not run is an error wrapping ErrNoModel that
// says why, before any runner starts.
func TestMeasureGroupNoModel(t *testing.T) {
	one := commandSpec(t, `["python3", "fake_command.py"]`, "ok")
	noParallel := commandSpec(t, `["python3", "fake_command.py"]`, "ok")
	noParallel.Model, noParallel.Devices = &Model{}, []int{0, 1}
	for _, tc := range []struct {
		name string
		spec *Spec
		want string
	}{
		{"nil", nil, "no workload spec"},
		{"one rank", one, "runs as one process"},
		{"devices without parallel", noParallel, `unless the spec says "parallel"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MeasureGroup(tc.spec, 3, nil)
			if !errors.Is(err, ErrNoModel) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrNoModel saying %q", err, tc.want)
			}
		})
	}
}
