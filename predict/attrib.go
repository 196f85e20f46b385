package predict

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/internal/textfmt"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// Kinds of Cause.
const (
	// CauseKernel: the replay ran another kernel (another one chosen by
	// the library, or the traced one on one side only) or took another
	// path, as the fidelity lines say.
	CauseKernel = "kernel"
	// CauseConfig: a configuration line that bears on the signature
	// differs: the GPU, the driver, the power limit, kreplay's build, or
	// the version or file of a library its replay calls.
	CauseConfig = "config"
	// CauseClocks: the replay ran throttled on one side only, or its
	// energy window did (the fidelity lines' flags).
	CauseClocks = "clocks"
)

// Cause is a difference between two outputs that can explain a change of
// a signature's time: what the outputs record, not a proof that it is
// the reason.
type Cause struct {
	Kind string `json:"kind"`
	// What names the difference: "kernel" or "path" (CauseKernel); a
	// configuration key such as "cublas" (CauseConfig); "throttled" or
	// "energy throttled" (CauseClocks).
	What string `json:"what"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// String is the cause as diff's table prints it: a configuration line by
// its key alone (the workload's header lists its values), the others
// with both sides' values.
func (c Cause) String() string {
	if c.Kind == CauseConfig {
		return c.What
	}
	return c.What + " " + shorten(c.Old, 60) + " -> " + shorten(c.New, 60)
}

// shorten cuts s to at most n bytes by leaving out its middle: kernel
// names that share a long prefix differ at the end.
func shorten(s string, n int) string {
	s = textfmt.OneLine(s, len(s)+1)
	if len(s) <= n {
		return s
	}
	head := (n - 3) / 2
	tail := n - 3 - head
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[:head] + "..." + s[start:]
}

// noConfigValue stands for a configuration line one output lacks.
const noConfigValue = "(none)"

// diffConfig lists the configuration lines of ConfigKeys that differ
// between two outputs of a workload, a line one of them lacks as
// "(none)". An output with none of them (written before kreplay wrote
// configuration lines) cannot be compared: note says so.
func diffConfig(wo, wn *WorkloadResults) (changed []Cause, note string) {
	has := func(w *WorkloadResults) bool {
		for _, k := range ConfigKeys {
			if _, ok := w.Config[k]; ok {
				return true
			}
		}
		return false
	}
	switch ho, hn := has(wo), has(wn); {
	case !ho && !hn:
		return nil, "neither output has configuration lines (gpu, driver, cublas, ...): GPU, driver and library changes cannot be told"
	case !ho || !hn:
		side := "old"
		if ho {
			side = "new"
		}
		return nil, "the " + side + " output has no configuration lines (gpu, driver, cublas, ...): GPU, driver and library changes cannot be told"
	}
	for _, k := range ConfigKeys {
		vo, ok := wo.Config[k]
		if !ok {
			vo = noConfigValue
		}
		vn, ok := wn.Config[k]
		if !ok {
			vn = noConfigValue
		}
		if vo != vn {
			changed = append(changed, Cause{Kind: CauseConfig, What: k, Old: vo, New: vn})
		}
	}
	return changed, ""
}

// configBears reports whether a configuration key bears on a replay that
// took one of paths (its fidelity lines' paths; none known: any path).
// The GPU, the driver, the power limit, kreplay's build and the trace bear
// on every replay; a library's line on the replays that call it: cuBLAS's
// on cuBLAS GEMMs, cuBLASLt's on every GEMM (cuBLAS runs its GEMMs on
// cuBLASLt), NCCL's on collectives, NVRTC's on kreplay's own kernels,
// cuDNN's on a plain trace's cuDNN attention that kreplay runs through
// cuDNN (a captured cuDNN kernel runs from its binary).
func configBears(key string, paths []string) bool {
	var uses func(path string) bool
	switch key {
	case "cublas":
		uses = func(p string) bool { return strings.HasPrefix(p, "cublas") && !strings.HasPrefix(p, "cublasLt") }
	case "cublaslt":
		uses = func(p string) bool { return strings.HasPrefix(p, "cublas") }
	case "nccl":
		uses = func(p string) bool { return strings.HasPrefix(p, "nccl") }
	case "nvrtc":
		uses = func(p string) bool { return strings.HasPrefix(p, "kreplay:") || p == "approximate" }
	case "cudnn":
		uses = func(p string) bool { return strings.HasPrefix(p, "cudnn") }
	default:
		return true
	}
	if len(paths) == 0 {
		return true
	}
	return slices.ContainsFunc(paths, uses)
}

// attribute lists what the two outputs record differently for signature
// id: its kernel and path (its fidelity lines, where both sides have
// one), the configuration lines in config that bear on its replay, and
// the throttling flags. The GPU's SMs, memory and compute capability are
// left out when the GPU's name changed with them.
func attribute(id string, wo, wn *WorkloadResults, set *signatures.Set, config []Cause) []Cause {
	fo, okO := wo.Fidelity[id]
	fn, okN := wn.Fidelity[id]
	var causes []Cause
	var paths []string
	if okO && okN {
		traced := ""
		if set != nil {
			if s := set.ByID(id); s != nil {
				traced = s.Kernel
			}
		}
		ko, kn := kernelOf(fo, traced), kernelOf(fn, traced)
		// Another kernel on both sides, named on one only (a line written
		// before they named it): which ran on the other is not known.
		unknown := fo.Kind == replay.FidelityOther && fn.Kind == replay.FidelityOther && (fo.Kernel == "") != (fn.Kernel == "")
		if !unknown && (fo.Kind != fn.Kind || ko != kn) {
			causes = append(causes, Cause{Kind: CauseKernel, What: "kernel", Old: ko, New: kn})
		}
		if fo.Path != fn.Path && fo.Path != "" && fn.Path != "" {
			causes = append(causes, Cause{Kind: CauseKernel, What: "path", Old: fo.Path, New: fn.Path})
		}
	}
	for _, f := range []struct {
		ok bool
		f  bench.Fidelity
	}{{okO, fo}, {okN, fn}} {
		if f.ok && f.f.Path != "" {
			paths = append(paths, f.f.Path)
		}
	}
	gpuChanged := slices.ContainsFunc(config, func(c Cause) bool { return c.What == "gpu" })
	for _, c := range config {
		switch {
		case gpuChanged && (c.What == "gpu-sms" || c.What == "gpu-memory" || c.What == "gpu-cc"):
		case configBears(c.What, paths):
			causes = append(causes, c)
		}
	}
	if okO && okN {
		for _, fl := range []struct {
			what     string
			old, new bool
		}{{"throttled", fo.Throttled, fn.Throttled}, {"energy throttled", fo.EnergyThrottled, fn.EnergyThrottled}} {
			if fl.old != fl.new {
				causes = append(causes, Cause{Kind: CauseClocks, What: fl.what, Old: yesNo(fl.old), New: yesNo(fl.new)})
			}
		}
	}
	return causes
}

// kernelOf names the kernel a fidelity line says ran: the kernel it
// names, the traced kernel for the same kernel (when the set names it),
// else the fidelity itself.
func kernelOf(f bench.Fidelity, traced string) string {
	switch {
	case f.Kernel != "":
		return f.Kernel
	case f.Kind == replay.FidelitySame && traced != "":
		return traced
	}
	return f.Kind
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// causesText joins a signature's causes for diff's table ("-": none
// recorded).
func causesText(cs []Cause) string {
	if len(cs) == 0 {
		return "-"
	}
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return strings.Join(s, "; ")
}
