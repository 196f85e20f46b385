package bench

import (
	"fmt"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/kreplay/kreplay/signatures"
)

// Benchmark base names, as benchfmt's ".name" gives them (without the
// "Benchmark" prefix).
const (
	// ReplayName is the benchmark of the signatures, one sub-benchmark
	// each: BenchmarkReplay/workload=W/sig=ID.
	ReplayName = "Replay"
	// ModelName is the whole model run for real, as a benchmark line
	// BenchmarkModel/workload=W/model whose ns/op is the wall time of
	// one inference, with J/op its energy and idle-W the GPU's idle
	// power (see Model); Report uses it when it is there.
	ModelName = "Model"
	// TimelineName is the whole traced timeline replayed in order, as a
	// benchmark line BenchmarkTimeline/workload=W/timeline whose ns/op is
	// the replay's time for one timeline and skipped-ns the traced time it
	// could not replay (see Timeline); Report uses it when it is there.
	TimelineName = "Timeline"
	// ContextName is a signature's time in context, from the timeline
	// replay: BenchmarkContext/workload=W/sig=ID, ns/op the kernel time of
	// one of its invocations there (replay.SigContext).
	ContextName = "Context"
	// InferenceName is the whole inference predicted from the bundle's
	// host schedule and the replays (predict.PredictInference), as a
	// benchmark line BenchmarkInference/workload=W/inference whose ns/op
	// is the predicted wall time of one inference, with J/op its energy
	// and the other figures in their own units.
	InferenceName = "Inference"
	// PacedName is the timeline launched from the host at the recorded
	// host schedule's pacing (replay.Timeline.MeasurePaced), the whole
	// inference's independent check: BenchmarkPaced/workload=W/paced,
	// ns/op the host's wall time of one inference, J/op its energy.
	PacedName = "Paced"
)

// Keys of the sub-benchmark name configuration.
const (
	WorkloadKey = "workload"
	SigKey      = "sig"
)

// Workload is the name a set's workload has in benchmark names: the
// set's workload name with every character other than letters, digits,
// '.', '_', '+' and '-' replaced by '_' (a '/' would split the name, a
// space or '=' would break benchfmt's key=value parsing), followed by
// "_rankN" for one rank of a multi-rank run.
func Workload(src signatures.Source) string {
	w := src.Workload
	if w == "" {
		w = signatures.WorkloadName(src.File)
	}
	if w == "" {
		w = "workload"
	}
	w = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '+', r == '-':
			return r
		}
		return '_'
	}, w)
	if src.WorldSize > 1 {
		w += fmt.Sprintf("_rank%d", src.Rank)
	}
	return w
}

// PackageName turns a workload name into a Go package name: lower case,
// every character other than a letter or digit replaced by '_', and a
// leading "w" when it would start with a digit.
func PackageName(workload string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(workload) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || s[0] >= '0' && s[0] <= '9' || s[0] == '_' {
		s = "w" + s
	}
	return s
}

// SignatureName is the sub-benchmark name of a signature within
// BenchmarkReplay: "workload=W/sig=ID".
func SignatureName(workload, id string) string {
	return WorkloadKey + "=" + workload + "/" + SigKey + "=" + id
}

// NameProjection reads kreplay's keys from benchmark results as benchstat
// and benchproc read them: the base name (".name") and the "/workload"
// and "/sig" keys of the sub-benchmark name.
type NameProjection struct {
	proj                 *benchproc.Projection
	name, workload, sigF *benchproc.Field
}

// NewNameProjection returns a NameProjection.
func NewNameProjection() (*NameProjection, error) {
	var pp benchproc.ProjectionParser
	proj, err := pp.Parse(".name,/"+WorkloadKey+",/"+SigKey, nil)
	if err != nil {
		return nil, err
	}
	f := proj.Fields()
	return &NameProjection{proj: proj, name: f[0], workload: f[1], sigF: f[2]}, nil
}

// Keys returns r's base name (ReplayName, ModelName, TimelineName or
// another benchmark's), workload and signature ID ("" where absent).
func (np *NameProjection) Keys(r *benchfmt.Result) (base, workload, sig string) {
	key := np.proj.Project(r)
	return key.Get(np.name), key.Get(np.workload), key.Get(np.sigF)
}
