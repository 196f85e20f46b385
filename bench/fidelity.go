package bench

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/replay"
)

// Fidelity is what a replay's fidelity line says of one signature: how
// close it is to the trace (replay.Fidelities), the path it replayed by,
// and whether NVML saw throttling or sampling ended short of its target.
// EnergyThrottled says the energy window ran throttled (a power or
// thermal cap lowered the clocks while the launches ran back to back):
// its J/op is the energy of a launch at the capped clock. EnergyDuty
// says the energy was measured again duty-cycled under the cap
// (replay.DutyEnergy); EnergyEstimated that it was not measured but
// estimated from its class's power (replay.EstimateEnergy); EnergyShared
// that it was measured in a window shared by that many signatures
// (replay.SharedWindow), 0 otherwise. Kernel is the
// kernel that ran when a vendor library chose another kernel than the
// traced one (replay.FidelityOther): the one of the longest time per
// invocation among the replay's CUPTI records ("" otherwise, and in lines
// written before it was). ThrottledSamples of TakenSamples timed samples
// overlapped NVML's throttling (replay.Result.ThrottledSamples): left out
// of the result, or kept (ThrottledKept) when too few others remained;
// all zero when none did, and in lines written before they were counted.
type Fidelity struct {
	Kind             string `json:"kind"`
	Path             string `json:"path"`
	Kernel           string `json:"kernel,omitempty"`
	Throttled        bool   `json:"throttled,omitempty"`
	ThrottledSamples int    `json:"throttled_samples,omitempty"`
	TakenSamples     int    `json:"taken_samples,omitempty"`
	ThrottledKept    bool   `json:"throttled_kept,omitempty"`
	Unconverged      bool   `json:"unconverged,omitempty"`
	EnergyThrottled  bool   `json:"energy_throttled,omitempty"`
	EnergyDuty       bool   `json:"energy_duty,omitempty"`
	EnergyEstimated  bool   `json:"energy_estimated,omitempty"`
	EnergyShared     int    `json:"energy_shared,omitempty"`
	// ThrottleUnchecked: NVML's sampler read no GPU state during the
	// samples (replay.Result.SamplerErr), so throttled samples were
	// neither flagged nor left out.
	ThrottleUnchecked bool `json:"throttle_unchecked,omitempty"`
	// Interpolated: the result was not measured but interpolated between
	// measured members of the signature's family (replay.Entry.Interpolated;
	// FidelityOf, which sees only the result, leaves it to the caller).
	Interpolated bool `json:"interpolated,omitempty"`
}

// FidelityOf is a result's Fidelity ("unchecked" when the result does not
// say: a collective measured across GPUs).
func FidelityOf(r *replay.Result) Fidelity {
	kind := r.Fidelity
	if kind == "" {
		kind = replay.FidelityUnchecked
	}
	f := Fidelity{Kind: kind, Path: r.Path, Throttled: r.Throttled, Unconverged: !r.Converged,
		EnergyThrottled:   r.Energy != nil && r.Energy.Throttled,
		EnergyDuty:        r.Energy != nil && r.Energy.Duty != nil,
		EnergyEstimated:   r.Energy != nil && r.Energy.Method == replay.EstimatedMethod,
		ThrottleUnchecked: r.SamplerErr != ""}
	if r.Energy != nil && r.Energy.Shared != nil {
		f.EnergyShared = len(r.Energy.Shared.Members)
	}
	if kind == replay.FidelityOther {
		f.Kernel = mainKernel(r.Ran)
	}
	if r.ThrottledSamples > 0 {
		f.ThrottledSamples, f.TakenSamples, f.ThrottledKept = r.ThrottledSamples, r.TakenSamples(), r.ThrottledKept
	}
	return f
}

// mainKernel is the name of the kernel of the longest time per invocation
// among ran, or "".
func mainKernel(ran []replay.Ran) string {
	name, most := "", -1.0
	for _, a := range ran {
		if t := float64(a.DurNS) * a.PerCall; a.Kind == "kernel" && t > most {
			name, most = a.Name, t
		}
	}
	return name
}

// fidelityTag separates a FidelityLine's benchmark name from what it says.
const fidelityTag = ": fidelity: "

// FidelityLine is the line a replay benchmark prints with its result, which
// go test shows without -v and benchfmt passes over:
// "kreplay BenchmarkReplay/workload=W/sig=ID: fidelity: same kernel; path
// captured; ran KERNEL; throttled; 3 of 40 samples throttled, discarded;
// unconverged; energy throttled; energy duty-cycled; energy estimated;
// energy shared by 4; throttling unchecked; interpolated"
// (the kernel and the flags only when set; "kept" instead of "discarded"
// when too few samples were left to discard the throttled ones; a ";" in
// the path or the kernel's name is written as ",").
func FidelityLine(name string, f Fidelity) string {
	s := noModelPrefix + name + fidelityTag + f.Kind + "; path " + strings.ReplaceAll(f.Path, ";", ",")
	if f.Kernel != "" {
		s += "; ran " + strings.ReplaceAll(f.Kernel, ";", ",")
	}
	if f.Throttled {
		s += "; throttled"
	}
	if f.ThrottledSamples > 0 {
		s += "; " + throttledSamplesText(f.ThrottledSamples, f.TakenSamples, f.ThrottledKept)
	}
	if f.Unconverged {
		s += "; unconverged"
	}
	if f.EnergyThrottled {
		s += "; energy throttled"
	}
	if f.EnergyDuty {
		s += "; energy duty-cycled"
	}
	if f.EnergyEstimated {
		s += "; energy estimated"
	}
	if f.EnergyShared > 0 {
		s += fmt.Sprintf("; energy shared by %d", f.EnergyShared)
	}
	if f.ThrottleUnchecked {
		s += "; throttling unchecked"
	}
	if f.Interpolated {
		s += "; interpolated"
	}
	return s
}

// ParseFidelityLine reads a FidelityLine: the workload and signature of
// the benchmark it names, and the fidelity.
func ParseFidelityLine(line string) (workload, sig string, f Fidelity, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), noModelPrefix+"Benchmark"+ReplayName+"/")
	if !ok {
		return "", "", f, false
	}
	name, what, ok := strings.Cut(rest, fidelityTag)
	if !ok {
		return "", "", f, false
	}
	for _, kv := range strings.Split(name, "/") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case WorkloadKey:
			workload = v
		case SigKey:
			sig = v
		}
	}
	parts := strings.Split(what, "; ")
	f.Kind = parts[0]
	for _, p := range parts[1:] {
		switch {
		case strings.HasPrefix(p, "path "):
			f.Path = strings.TrimPrefix(p, "path ")
		case strings.HasPrefix(p, "ran "):
			f.Kernel = strings.TrimPrefix(p, "ran ")
		case p == "throttled":
			f.Throttled = true
		case strings.Contains(p, " samples throttled, "):
			f.ThrottledSamples, f.TakenSamples, f.ThrottledKept = parseThrottledSamples(p)
		case p == "unconverged":
			f.Unconverged = true
		case p == "energy throttled":
			f.EnergyThrottled = true
		case p == "energy duty-cycled":
			f.EnergyDuty = true
		case p == "energy estimated":
			f.EnergyEstimated = true
		case strings.HasPrefix(p, "energy shared by "):
			f.EnergyShared, _ = strconv.Atoi(strings.TrimPrefix(p, "energy shared by "))
		case p == "throttling unchecked":
			f.ThrottleUnchecked = true
		case p == "interpolated":
			f.Interpolated = true
		}
	}
	if i := strings.LastIndexByte(sig, '-'); i > 0 && strings.Trim(sig[i+1:], "0123456789") == "" {
		sig = sig[:i] // go test's -GOMAXPROCS suffix
	}
	return workload, sig, f, workload != "" && sig != "" && f.Kind != ""
}

// throttledSamplesText is a FidelityLine's "3 of 40 samples throttled,
// discarded" (or ", kept").
func throttledSamplesText(n, of int, kept bool) string {
	what := "discarded"
	if kept {
		what = "kept"
	}
	return fmt.Sprintf("%d of %d samples throttled, %s", n, of, what)
}

// parseThrottledSamples reads what throttledSamplesText writes; anything
// else gives zeros.
func parseThrottledSamples(p string) (n, of int, kept bool) {
	var what string
	if _, err := fmt.Sscanf(p, "%d of %d samples throttled, %s", &n, &of, &what); err != nil ||
		n <= 0 || of < n || throttledSamplesText(n, of, what == "kept") != p {
		return 0, 0, false
	}
	return n, of, what == "kept"
}

// String is the fidelity as the line says it.
func (f Fidelity) String() string {
	return fmt.Sprintf("%s (%s)", f.Kind, f.Path)
}
