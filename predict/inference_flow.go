package predict

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/energy"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/schedule"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/workload"
)

// Units of the inference benchmark's figures (bench.InferenceName),
// besides ns/op (the wall time) and J/op (the energy).
const (
	UnitBusyNS     = "busy-ns"
	UnitGPUIdleNS  = "gpu-idle-ns"
	UnitHostWaitNS = "host-wait-ns"
	UnitTTFTNS     = "ttft-ns"
	UnitJPerToken  = "J/token"
	UnitKernelJ    = "kernel-J"
	UnitWaitJ      = "wait-J"
	UnitWaitW      = "wait-W"
	// The host probe's constants the prediction took (HostConstants).
	UnitSubmitNS   = "submit-ns"
	UnitQueueGapNS = "queue-gap-ns"
	UnitWakeNS     = "wake-ns"
	// UnitMedianWallNS is the simulated inferences' median wall
	// (Inference.MedianWallNS), beside ns/op, their mean: the wall the
	// acceptance holds against the measured median inference.
	UnitMedianWallNS = "median-wall-ns"
	// UnitTracedWallNS and UnitTracedMedianWallNS are the same inference's
	// mean and median walls with the trace's own kernel times in place of
	// the replays (Inference.TracedWallNS and TracedMedianWallNS).
	UnitTracedWallNS       = "traced-wall-ns"
	UnitTracedMedianWallNS = "traced-median-wall-ns"
	// UnitIsolatedJ, UnitPacedJ and UnitPacedWallNS are, where the energy
	// is in place (Inference.EnergyDesign EnergyInPlace; J/op is then
	// its), the isolated design's total (Inference.IsolatedJ), the paced
	// timeline's energy per pass (PacedJ) and its window's wall per pass
	// (PacedWallNS); absent otherwise.
	UnitIsolatedJ   = "isolated-J/op"
	UnitPacedJ      = "paced-J/op"
	UnitPacedWallNS = "paced-wall-ns"
	// UnitBusyScale and UnitUnscaledJ are, where the in-place energy was
	// scaled to the predicted busy time (Inference.BusyScale), the factor
	// and the energy before it (UnscaledJ); absent otherwise.
	UnitBusyScale = "busy-scale"
	UnitUnscaledJ = "unscaled-J/op"
)

// InferenceBenchName is the inference benchmark's name below
// bench.InferenceName: workload=W/inference.
func InferenceBenchName(workload string) string { return "workload=" + workload + "/inference" }

// Metrics are the inference's figures as benchmark values; an inference
// without an energy (NoEnergy) has no J/op, kernel-J, wait-J or J/token,
// and one without the isolated design (NoIsolated) no kernel-J, wait-J or
// isolated-J/op.
func (inf *Inference) Metrics() []benchfmt.Value {
	v := []benchfmt.Value{
		{Value: inf.WallNS, Unit: "ns/op"},
		{Value: inf.BusyNS, Unit: UnitBusyNS},
		{Value: inf.GPUIdleNS, Unit: UnitGPUIdleNS},
		{Value: inf.HostWaitNS, Unit: UnitHostWaitNS},
	}
	if inf.NoEnergy == "" {
		v = append(v, benchfmt.Value{Value: inf.EnergyJ, Unit: "J/op"})
		if inf.NoIsolated == "" {
			v = append(v, benchfmt.Value{Value: inf.KernelJ, Unit: UnitKernelJ},
				benchfmt.Value{Value: inf.WaitJ, Unit: UnitWaitJ})
		}
	}
	v = append(v, []benchfmt.Value{
		{Value: inf.Constants.WaitPowerW, Unit: UnitWaitW},
		{Value: float64(inf.Constants.SubmitNS), Unit: UnitSubmitNS},
		{Value: float64(inf.Constants.QueueGapNS), Unit: UnitQueueGapNS},
		{Value: float64(inf.Constants.WakeNS), Unit: UnitWakeNS},
	}...)
	if inf.MedianWallNS > 0 {
		v = append(v, benchfmt.Value{Value: inf.MedianWallNS, Unit: UnitMedianWallNS})
	}
	if inf.TracedWallNS > 0 {
		v = append(v, benchfmt.Value{Value: inf.TracedWallNS, Unit: UnitTracedWallNS})
	}
	if inf.TracedMedianWallNS > 0 {
		v = append(v, benchfmt.Value{Value: inf.TracedMedianWallNS, Unit: UnitTracedMedianWallNS})
	}
	if inf.EnergyDesign == EnergyInPlace {
		if inf.NoIsolated == "" {
			v = append(v, benchfmt.Value{Value: inf.IsolatedJ, Unit: UnitIsolatedJ})
		}
		v = append(v, benchfmt.Value{Value: inf.PacedJ, Unit: UnitPacedJ},
			benchfmt.Value{Value: inf.PacedWallNS, Unit: UnitPacedWallNS})
		if inf.BusyScale > 0 {
			v = append(v, benchfmt.Value{Value: inf.BusyScale, Unit: UnitBusyScale},
				benchfmt.Value{Value: inf.UnscaledJ, Unit: UnitUnscaledJ})
		}
	}
	if inf.Tokens > 0 {
		v = append(v, benchfmt.Value{Value: inf.Tokens, Unit: bench.UnitTokens},
			benchfmt.Value{Value: inf.TTFTNS, Unit: UnitTTFTNS},
			benchfmt.Value{Value: inf.TPOTNS, Unit: bench.UnitTPOTNS},
			benchfmt.Value{Value: inf.TPOTP90NS, Unit: bench.UnitTPOTP90NS})
		if inf.NoEnergy == "" {
			v = append(v, benchfmt.Value{Value: inf.JPerToken, Unit: UnitJPerToken})
		}
	}
	return v
}

// inference probes the host path on d and predicts the whole inference
// from o.Schedule; a failure is recorded in fr.InferenceErr.
func (fr *FlowResult) inference(d *replay.Device, o FlowOptions, progress io.Writer) {
	if fr.Lost != nil {
		fr.InferenceErr = fmt.Errorf("not predicted: %w", fr.Lost)
		fmt.Fprintf(progress, "inference: %v\n", fr.InferenceErr)
		return
	}
	if o.Schedule.Source == schedule.SourceTrace {
		fmt.Fprintf(progress, "inference: no recorded host schedule: the host's gaps are the profiled trace's (a guess: the profiler slows the host)\n")
	}
	if line := otherMachine(o.Schedule.CPU, fr.Set.Source.GPU(), HostCPU(), fr.GPU); line != "" {
		fmt.Fprintf(progress, "inference: %s\n", line)
	}
	hp := o.hostProbe()
	if hp.NoPower {
		fmt.Fprintf(progress, "host probe: the launch path and the wake from a wait, on %s (no energy measured: not the GPU's power while it waits)\n", fr.GPU)
	} else {
		fmt.Fprintf(progress, "host probe: the launch path, the wake from a wait and the GPU's power while it waits, on %s\n", fr.GPU)
	}
	p, err := replay.MeasureHost(context.Background(), d, hp)
	if err != nil {
		fr.InferenceErr = fmt.Errorf("host probe: %w", err)
		fmt.Fprintf(progress, "inference: %v\n", fr.InferenceErr)
		return
	}
	fr.Host = &p
	fmt.Fprintf(progress, "host probe: submit %.2f µs, queue gap %.2f µs, wake %.2f µs, %s%s\n",
		p.SubmitNS/1e3, p.QueueGapNS/1e3, p.WakeNS/1e3, waitPower(p, hp.NoPower), queueTries(p.Queue))
	limit, short := p.PowerLimitW, o.shortEnergyWindows()
	if short != "" {
		limit = 0
	}
	windows, _ := o.signatureWindows()
	in := InferenceInput{
		Set: fr.Set, Runtime: o.Runtime, Schedule: o.Schedule, Entries: fr.Entries,
		Constants: HostConstants(&p), PowerLimitW: limit, NoSignatureEnergy: o.Measure.Energy && !windows,
	}
	if len(p.Graph.Spreads) > 0 {
		in.GraphLaunch = p.Graph.CostNS
	}
	fr.Inference, fr.InferenceErr = PredictInference(in)
	if fr.InferenceErr != nil {
		fmt.Fprintf(progress, "inference: %v\n", fr.InferenceErr)
		return
	}
	if short != "" && p.PowerLimitW > 0 {
		fr.Inference.NoPowerBound = fmt.Sprintf("the %.0f W power limit not applied: %s", p.PowerLimitW, short)
		fmt.Fprintf(progress, "inference: %s\n", fr.Inference.NoPowerBound)
	}
	if mean, median, err := TracedWall(in); err != nil {
		fmt.Fprintf(progress, "inference: with the trace's own kernel times: %v\n", err)
	} else {
		fr.Inference.TracedWallNS, fr.Inference.TracedMedianWallNS = mean, median
	}
	fmt.Fprintf(progress, "inference: %s\n", fr.Inference.Summary())
	fmt.Fprintf(progress, "inference: %s\n", fr.Inference.HostText(5))
	for _, w := range fr.Inference.WhatIfs {
		fmt.Fprintf(progress, "inference what-if, %s\n", fr.Inference.whatIfText(w))
	}
}

// whatIfText is a what-if against the inference in one line: its name,
// wall and, where the inference has an energy and the kernels' energies
// the what-ifs' are summed from (not NoIsolated), its energy.
func (inf *Inference) whatIfText(w WhatIf) string {
	s := fmt.Sprintf("%s: wall %.4g ms (%+.1f%%, %s-bound)", w.Name, w.WallNS/1e6, 100*(w.WallNS/inf.WallNS-1), w.Bound)
	if inf.NoEnergy != "" || inf.NoIsolated != "" {
		return s + ", energy not measured"
	}
	return s + fmt.Sprintf(", %.4g J (%+.1f%%)", w.EnergyJ, 100*(w.EnergyJ/inf.EnergyJ-1))
}

// Summary is the prediction in one line.
func (inf *Inference) Summary() string {
	energy, perToken := fmt.Sprintf("%.4g J", inf.EnergyJ), fmt.Sprintf(", %.4g J/token", inf.JPerToken)
	if inf.NoEnergy != "" {
		energy, perToken = "energy not measured", ""
	}
	s := fmt.Sprintf("wall median %.4g ms, mean %.4g ms (GPU busy %.4g ms, %s-bound), %s",
		inf.MedianWallNS/1e6, inf.WallNS/1e6, inf.BusyNS/1e6, inf.Bound, energy)
	if inf.Tokens > 0 {
		s += fmt.Sprintf(", %.0f tokens: TTFT %.4g ms, TPOT %.4g ms (p90 %.4g)%s",
			inf.Tokens, inf.TTFTNS/1e6, inf.TPOTNS/1e6, inf.TPOTP90NS/1e6, perToken)
	}
	return s + "; host schedule from the " + inf.Source
}

// HostScheduleFor returns the host schedule and the trace's runtime calls
// for PredictInference of set, the input that kreplay predict reads: the
// bundle's for the trace set was imported from
// (workload.Bundle.HostSchedule; one rank's in a multi-rank bundle), or
// for a trace file one made from the trace itself (schedule.FromRuntime,
// a guess). A signature set has none: the error says so.
func HostScheduleFor(input string, b *workload.Bundle, set *signatures.Set) (*schedule.Schedule, *signatures.Runtime, error) {
	if b != nil {
		for _, t := range b.Manifest.Traces {
			if len(b.Manifest.Traces) == 1 || b.TraceFile(t) == set.Source.File {
				return b.HostSchedule(t)
			}
		}
		return nil, nil, fmt.Errorf("%s: no trace of the bundle is %s", b.Name, set.Source.File)
	}
	if strings.HasSuffix(input, ".json") && !strings.HasSuffix(input, ".trace.json") {
		return nil, nil, fmt.Errorf("%s: a signature set holds no host schedule (pass its trace or bundle)", input)
	}
	f, err := os.Open(input)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	rt, err := signatures.ReadRuntime(f, input)
	if err != nil {
		return nil, nil, err
	}
	s, err := schedule.FromRuntime(rt)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: a host schedule from the trace: %w", input, err)
	}
	return s, rt, nil
}

// HostText is the host's time per inference split TaxBreak-style, and
// the top ops by host time: "host: framework A ms, launch path B ms,
// waits C ms (framework dominates); by op: aten::mm 1.2 ms (30 ops), ...".
func (inf *Inference) HostText(top int) string {
	h := inf.Host
	s := fmt.Sprintf("host per inference: framework %.4g ms, launch path %.4g ms, waits %.4g ms (%s dominates)",
		h.FrameworkNS/1e6, h.LaunchNS/1e6, h.WaitNS/1e6, inf.Dominant)
	for i, sh := range inf.Shares {
		if i == top {
			break
		}
		sep := ", "
		if i == 0 {
			sep = "; by op: "
		}
		s += fmt.Sprintf("%s%s %.4g ms (%.0f ops)", sep, sh.Label, (sh.FrameworkNS+sh.LaunchNS+sh.WaitNS)/1e6, sh.Ops)
	}
	return s
}

// BoundEnergyTicks and BoundEnergyWarmup are the shortest per-signature
// energy windows (NVML counter ticks, after a warm-up) with which the
// whole-inference prediction applies the GPU's power limit to the
// predicted wall (kreplay predict's defaults), and BoundEnergyShare the
// least share of the traced time whose energy is measured rather than
// estimated: the limit stretches the wall by the summed kernel energies,
// and shorter windows, or energies estimated from a class's power, can
// put those above what the inference draws (docs/whole-inference.md).
const (
	BoundEnergyTicks  = 31
	BoundEnergyWarmup = time.Second
	BoundEnergyShare  = 1
)

// shortEnergyWindows says how o's energy windows fall short of the
// bound's (BoundEnergyTicks and the rest), or that the signatures had
// none of their own with energy measured (signatureWindows); "" where
// they do not.
func (o FlowOptions) shortEnergyWindows() string {
	if windows, _ := o.signatureWindows(); o.Measure.Energy && !windows {
		return "no signature's own energy window was measured (-signature-energy on measures them)"
	}
	ticks := cmp.Or(o.Measure.EnergyTicks, energy.DefaultMinTicks)
	var short []string
	if ticks < BoundEnergyTicks {
		short = append(short, fmt.Sprintf("%d ticks", ticks))
	}
	if o.Measure.EnergyWarmup < BoundEnergyWarmup {
		short = append(short, fmt.Sprintf("a %v warm-up", o.Measure.EnergyWarmup))
	}
	if o.EnergyShare > 0 && o.EnergyShare < BoundEnergyShare {
		short = append(short, fmt.Sprintf("energy measured for %.0f%% of the traced time", 100*o.EnergyShare))
	}
	if len(short) == 0 {
		return ""
	}
	return fmt.Sprintf("energy windows of %s, short of %d ticks after %v over all of it", strings.Join(short, ", "), BoundEnergyTicks, BoundEnergyWarmup)
}

// otherMachine says, where the replay machine differs from the capture's
// (its CPU or its GPU), that the host's gaps are the capture machine's,
// naming both; "" where they match or nothing says.
func otherMachine(capCPU, capGPU, cpu, gpu string) string {
	otherCPU := capCPU != "" && cpu != "" && capCPU != cpu
	otherGPU := capGPU != "" && gpu != "" && capGPU != gpu
	if !otherCPU && !otherGPU {
		return ""
	}
	return fmt.Sprintf("the host schedule is the capture machine's (CPU %s, GPU %s); this machine has CPU %s, GPU %s: the host's gaps are taken as recorded there",
		orUnknown(capCPU), orUnknown(capGPU), orUnknown(cpu), orUnknown(gpu))
}

func orUnknown(s string) string { return cmp.Or(s, "unknown") }

// HostCPU is this machine's CPU model: /proc/cpuinfo's first "model name"
// ("" where it says none), as the capture's runner records it.
func HostCPU() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// queueTries says, when the host probe's queue probe ran more than once
// (replay.QueueProbe.Tries), how often and with what blocker.
func queueTries(q replay.QueueProbe) string {
	if q.Tries <= 1 {
		return ""
	}
	return fmt.Sprintf("; the queue probe ran %d times, the host not queueing ahead of shorter blockers, the last %.0f µs", q.Tries, q.BlockerNS/1e3)
}

// hostProbe is the host probe's options for the flow: without energy
// measured (Measure.Energy off) the inference has no energy, and the
// probe skips its power windows, most of its time. The signatures' own
// windows (SignatureEnergy) do not enter: the in-place energy takes the
// probe's waiting power.
func (o FlowOptions) hostProbe() replay.HostProbeOptions {
	hp := o.HostProbe
	if !o.Measure.Energy {
		hp.NoPower = true
	}
	return hp
}

// waitPower is the host probe's power while the GPU waits, for its
// progress line.
func waitPower(p replay.HostProbe, noPower bool) string {
	if noPower {
		return "power while waiting not measured"
	}
	return fmt.Sprintf("power while waiting %.1f W (idle %.1f W)", p.WaitPowerW, p.IdleW)
}
