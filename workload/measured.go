package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/kreplay/kreplay/internal/runner"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
)

// MeasuredRun is one workload timed without the profiler on the machine
// its trace came from: the wall time and the GPU's energy per inference
// (an iteration of the traced workload). For a multi-rank run it is one
// rank's, on that rank's GPU.
type MeasuredRun struct {
	// Machine is the key of the machine in the file, e.g. "2xh200_tp2";
	// Workload the run's key, e.g. "llama-7b-tp2_prefill".
	Machine  string `json:"machine"`
	Workload string `json:"workload"`
	// Rank and World of a multi-rank run (0 and 1 otherwise).
	Rank  int `json:"rank"`
	World int `json:"world"`
	// GPU names the GPU, when the file does.
	GPU string `json:"gpu,omitempty"`
	// Iters is the inferences timed; WallS and EnergyJ are per inference
	// (EnergyJ is 0 when the file has none).
	Iters   int     `json:"iters,omitempty"`
	WallS   float64 `json:"wall_s_per_iter"`
	EnergyJ float64 `json:"energy_j_per_iter,omitempty"`
	// EnergyJWithFirsts is the energy per inference with each measured
	// block's first inference counted, where kreplay capture recorded it
	// (EnergyJ then leaves those out: it is over the inferences that
	// follow another back to back).
	EnergyJWithFirsts float64 `json:"energy_j_per_iter_with_firsts,omitempty"`
	// IdleW is the GPU's idle power measured right after the run (0 when
	// the file has none; kreplay capture records it).
	IdleW float64 `json:"idle_w,omitempty"`
	// SpanMS is the run's spread, where kreplay capture recorded it: the
	// 10th, 50th and 90th percentiles of an inference's span on the GPU,
	// in ms.
	SpanMS []float64 `json:"span_ms_per_iter,omitempty"`
	// TPOTMS is a generate's time per output token, where kreplay capture
	// recorded it: the 10th, 50th and 90th percentiles in ms; Tokens the
	// tokens per inference.
	TPOTMS []float64 `json:"tpot_ms,omitempty"`
	Tokens float64   `json:"tokens_per_iter,omitempty"`
	// ProcessesMS is each measured process's median inference in ms, in
	// run order, where kreplay capture measured several (the run above is
	// the median one's).
	ProcessesMS []float64 `json:"median_ms_per_process,omitempty"`
}

// ProcessSpread is how far the processes' medians lie apart, the largest
// over the smallest less 1; 0 with fewer than two.
func (r MeasuredRun) ProcessSpread() float64 {
	if len(r.ProcessesMS) < 2 {
		return 0
	}
	return slices.Max(r.ProcessesMS)/slices.Min(r.ProcessesMS) - 1
}

// Result is the run as a full-model run's result: what predict compares
// with (its median inference: runner.Result.MedianMS).
func (r MeasuredRun) Result() *runner.Result {
	return &runner.Result{Inferences: r.Iters, WallSPerInference: r.WallS, EnergyJPerInference: r.EnergyJ, EnergyJWithFirsts: r.EnergyJWithFirsts,
		IdleW: r.IdleW, SpanMS: r.SpanMS,
		TPOTMS: r.TPOTMS, Tokens: r.Tokens, ProcessesMS: r.ProcessesMS}
}

// Measured is a file of measured runs (the format of measured.json, next
// to the traces): machines by key, each either with its runs
//
//	{"h100": {"gpu": "...", "runs": {"llama-7b_prefill": {"iters": 10, "wall_s_per_iter": 0.062, "energy_j_per_iter": 42.4}}}}
//
// or, for a multi-rank run, with one object per rank that holds "rank",
// "world" and its runs:
//
//	{"2xh200_tp2": {"rank0": {"rank": 0, "world": 2, "gpu": "...", "runs": {...}}, "rank1": {...}}}
type Measured struct {
	// File names the file the runs were read from.
	File string
	Runs []MeasuredRun
}

// ReadMeasured reads a measured-runs file (see Measured).
func ReadMeasured(path string) (*Measured, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseMeasured(path, b)
}

// ParseMeasured parses the content of a measured-runs file; file names it
// in errors, which also name the field at fault ("machine.rank0.runs.W.wall_s_per_iter").
func ParseMeasured(file string, data []byte) (*Measured, error) {
	fail := func(field, format string, args ...any) error {
		return fmt.Errorf("%s: %s: %s", file, field, fmt.Sprintf(format, args...))
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	m := &Measured{File: file}
	for _, machine := range slices.Sorted(maps.Keys(top)) {
		if machine == "" {
			return nil, fail(`""`, "a machine needs a name")
		}
		obj, err := object(top[machine])
		if err != nil {
			return nil, fail(machine, "%v", err)
		}
		if _, ok := obj["runs"]; ok {
			runs, err := parseRuns(fail, machine, machine, obj, 0, 1)
			if err != nil {
				return nil, err
			}
			m.Runs = append(m.Runs, runs...)
			continue
		}
		ranks := 0
		for _, key := range slices.Sorted(maps.Keys(obj)) {
			sub, err := object(obj[key])
			if err != nil {
				continue // a scalar or list beside the ranks (a note)
			}
			if _, ok := sub["runs"]; !ok {
				continue
			}
			field := machine + "." + key
			rank, err := intField(sub, "rank")
			if err != nil {
				return nil, fail(field+".rank", "%v", err)
			}
			world, err := intField(sub, "world")
			if err != nil {
				return nil, fail(field+".world", "%v", err)
			}
			if rank < 0 || world < 1 || rank >= world {
				return nil, fail(field+".rank", "rank %d of world %d", rank, world)
			}
			runs, err := parseRuns(fail, machine, field, sub, rank, world)
			if err != nil {
				return nil, err
			}
			m.Runs = append(m.Runs, runs...)
			ranks++
		}
		if ranks == 0 {
			return nil, fail(machine, `neither "runs" nor ranks with "runs"`)
		}
	}
	return m, nil
}

// parseRuns reads the "runs" of machine's obj (field names obj in errors).
func parseRuns(fail func(field, format string, args ...any) error, machine, field string, obj map[string]json.RawMessage, rank, world int) ([]MeasuredRun, error) {
	runs, err := object(obj["runs"])
	if err != nil {
		return nil, fail(field+".runs", "%v", err)
	}
	var gpu string
	if raw, ok := obj["gpu"]; ok {
		if err := json.Unmarshal(raw, &gpu); err != nil {
			return nil, fail(field+".gpu", "want a string, got %s", raw)
		}
	}
	var out []MeasuredRun
	for _, w := range slices.Sorted(maps.Keys(runs)) {
		f := field + ".runs." + w
		if w == "" {
			return nil, fail(f, "a run needs a workload name")
		}
		run, err := object(runs[w])
		if err != nil {
			return nil, fail(f, "%v", err)
		}
		r := MeasuredRun{Machine: machine, Workload: w, Rank: rank, World: world, GPU: gpu}
		if r.WallS, err = numField(run, "wall_s_per_iter", true); err != nil {
			return nil, fail(f+".wall_s_per_iter", "%v", err)
		}
		if r.WallS <= 0 {
			return nil, fail(f+".wall_s_per_iter", "%g is not a positive time", r.WallS)
		}
		if r.EnergyJ, err = numField(run, "energy_j_per_iter", false); err != nil {
			return nil, fail(f+".energy_j_per_iter", "%v", err)
		}
		if r.EnergyJ < 0 {
			return nil, fail(f+".energy_j_per_iter", "negative energy %g", r.EnergyJ)
		}
		if r.EnergyJWithFirsts, err = numField(run, "energy_j_per_iter_with_firsts", false); err != nil {
			return nil, fail(f+".energy_j_per_iter_with_firsts", "%v", err)
		}
		if r.EnergyJWithFirsts < 0 {
			return nil, fail(f+".energy_j_per_iter_with_firsts", "negative energy %g", r.EnergyJWithFirsts)
		}
		if r.IdleW, err = numField(run, "idle_w", false); err != nil {
			return nil, fail(f+".idle_w", "%v", err)
		}
		if r.IdleW < 0 {
			return nil, fail(f+".idle_w", "negative power %g", r.IdleW)
		}
		if _, ok := run["iters"]; ok {
			if r.Iters, err = intField(run, "iters"); err != nil {
				return nil, fail(f+".iters", "%v", err)
			}
		}
		if r.SpanMS, err = spanField(run["span_ms_per_iter"]); err != nil {
			return nil, fail(f+".span_ms_per_iter", "%v", err)
		}
		if r.TPOTMS, err = spanField(run["tpot_ms"]); err != nil {
			return nil, fail(f+".tpot_ms", "%v", err)
		}
		if r.Tokens, err = numField(run, "tokens_per_iter", false); err != nil || r.Tokens < 0 {
			return nil, fail(f+".tokens_per_iter", "want 0 or more tokens: %v", err)
		}
		if r.ProcessesMS, err = processesField(run["median_ms_per_process"]); err != nil {
			return nil, fail(f+".median_ms_per_process", "%v", err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Lookup returns the run of a workload on a rank of a world (world 1 for
// a single GPU). It is an error when none matches, or when several
// machines have one (the error names them).
func (m *Measured) Lookup(workload string, rank, world int) (MeasuredRun, error) {
	world = max(world, 1)
	var found []MeasuredRun
	for _, r := range m.Runs {
		if r.Workload == workload && r.Rank == rank && r.World == world {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 0:
		return MeasuredRun{}, fmt.Errorf("%s: no run of workload %q on rank %d of %d", m.File, workload, rank, world)
	case 1:
		return found[0], nil
	}
	var machines []string
	for _, r := range found {
		machines = append(machines, r.Machine)
	}
	return MeasuredRun{}, fmt.Errorf("%s: workload %q on rank %d of %d was measured on several machines: %s", m.File, workload, rank, world, strings.Join(machines, ", "))
}

func object(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("want an object, got %s", short(raw))
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// numField reads a number; a missing field is 0, or an error when required.
func numField(obj map[string]json.RawMessage, key string, required bool) (float64, error) {
	raw, ok := obj[key]
	if !ok {
		if required {
			return 0, fmt.Errorf("missing")
		}
		return 0, nil
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, fmt.Errorf("want a number, got %s", short(raw))
	}
	return v, nil
}

func intField(obj map[string]json.RawMessage, key string) (int, error) {
	v, err := numField(obj, key, true)
	if err != nil {
		return 0, err
	}
	if v != float64(int(v)) {
		return 0, fmt.Errorf("want an integer, got %s", short(obj[key]))
	}
	return int(v), nil
}

// processesField reads the processes' medians (MeasuredRun.ProcessesMS),
// if there are any: positive times in ms.
func processesField(raw json.RawMessage) ([]float64, error) {
	if raw == nil {
		return nil, nil
	}
	var v []float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("want times in ms, got %s", short(raw))
	}
	for _, x := range v {
		if !(x > 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v: want positive times", v)
		}
	}
	return v, nil
}

// spanField reads a run's spread (MeasuredRun.SpanMS), if it has one:
// three positive times in ms, in increasing order.
func spanField(raw json.RawMessage) ([]float64, error) {
	if raw == nil {
		return nil, nil
	}
	var v []float64
	if err := json.Unmarshal(raw, &v); err != nil || len(v) != 3 {
		return nil, fmt.Errorf("want three times in ms (10th, 50th and 90th percentiles), got %s", raw)
	}
	if !(v[0] > 0 && v[0] <= v[1] && v[1] <= v[2]) {
		return nil, fmt.Errorf("percentiles %v are not positive and increasing", v)
	}
	return v, nil
}
