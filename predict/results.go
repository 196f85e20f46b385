package predict

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/roofline"
)

// Input is one `go test -bench` output to read.
type Input struct {
	// Name names the input in messages (its file name).
	Name   string
	Reader io.Reader
}

// ReadFiles reads benchmark output files as Inputs; "-" is standard
// input. A gzip file (bench.gz, or any name: the gzip header tells) is
// read decompressed.
func ReadFiles(paths []string) ([]Input, error) {
	var in []Input
	for _, p := range paths {
		name, r := p, io.Reader(nil)
		if p == "-" {
			name, r = "stdin", os.Stdin
		} else {
			f, err := os.Open(p)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			r = f
		}
		b, err := readMaybeGzip(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		in = append(in, Input{Name: name, Reader: bytes.NewReader(b)})
	}
	return in, nil
}

// readMaybeGzip reads r whole, decompressed when it starts with the gzip
// header.
func readMaybeGzip(r io.Reader) ([]byte, error) {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		return io.ReadAll(zr)
	}
	return io.ReadAll(br)
}

// Results are the measurements of benchmark outputs, by workload.
type Results struct {
	// Workloads, sorted by name.
	Workloads []*WorkloadResults
	// Warnings: lines benchfmt could not parse, results of unknown
	// benchmarks, and the like.
	Warnings []string
}

// Workload returns the results of a workload, or nil.
func (rs *Results) Workload(name string) *WorkloadResults {
	for _, w := range rs.Workloads {
		if w.Name == name {
			return w
		}
	}
	return nil
}

// WorkloadNames lists the workloads with results.
func (rs *Results) WorkloadNames() []string {
	var n []string
	for _, w := range rs.Workloads {
		n = append(n, w.Name)
	}
	return n
}

// WorkloadResults are one workload's measurements: every value of every
// run (-count, several files) in the order read.
type WorkloadResults struct {
	Name string
	// Sigs holds the replay benchmarks' values by signature ID.
	Sigs map[string]*Samples
	// Model holds the whole-model benchmark's values (bench.ModelName); nil
	// when the output has none.
	Model *Samples
	// Timeline holds the timeline benchmark's values (bench.TimelineName); nil
	// when the output has none.
	Timeline *Samples
	// Paced holds the paced timeline's values (bench.PacedName); nil
	// when the output has none.
	Paced *Samples
	// Inference holds the predicted whole inference's values
	// (bench.InferenceName); nil when the output has none.
	Inference *Samples
	// Context holds each signature's time in context (bench.ContextName),
	// by signature ID; empty when the output has none.
	Context map[string]*Samples
	// Skipped gives the reason a signature's benchmark was skipped or
	// failed, from the "--- SKIP" and "--- FAIL" lines go test -v prints.
	Skipped map[string]string
	// NoModel is why the model benchmark did not run, from its
	// bench.NoModelLine ("" when none was printed).
	NoModel string
	// EnergyNotInPlace is why the predicted inference's energy is the
	// isolated replays' (Inference.NotInPlace), from the line WriteBench
	// writes for it; "" where the output has none (the energy in place,
	// or an output from before the design).
	EnergyNotInPlace string
	// NoEnergy is why the predicted inference has no energy
	// (Inference.NoEnergy), from the line WriteBench writes for it; ""
	// where the output has none.
	NoEnergy string
	// Fidelity is each signature's, from its bench.FidelityLine (the last
	// one read; absent in outputs made before they were written).
	Fidelity map[string]bench.Fidelity
	// PowerLimitW is the GPU's enforced power limit from the results'
	// "power-limit" configuration line (0 when none says it).
	PowerLimitW float64
	// Config holds the configuration lines ("key: value") in effect for
	// the workload's results, the first value read of each key: gpu,
	// driver, cublas, trace-gpu and the others replay.Device.Config and
	// bench.TraceConfig write, besides go test's goos, pkg and cpu.
	// ConfigMixed lists, sorted, the keys of ConfigKeys whose value
	// differs between its results (outputs of different machines or
	// builds read together); a warning says so.
	Config      map[string]string
	ConfigMixed []string
	// Peaks are the GPU's peaks from the results' configuration lines
	// (roofline.FromConfig; the first results that have them), nil when
	// none has them.
	Peaks *roofline.Peaks
}

// ConfigKeys are the configuration lines kreplay writes ahead of its
// results (replay.Device.Config, bench.TraceConfig), in the order diff
// lists their changes.
var ConfigKeys = []string{"gpu", "gpu-sms", "gpu-memory", "gpu-cc", "driver", "cuda-driver", "power-limit",
	"cublas", "cublaslt", "cudnn", "nccl", "nvrtc", "kreplay", "trace-gpu"}

// addConfig records the file configuration of a result.
func (w *WorkloadResults) addConfig(r *benchfmt.Result) (mixed []string) {
	if w.Config == nil {
		w.Config = map[string]string{}
	}
	for _, c := range r.Config {
		if !c.File {
			continue
		}
		v := strings.TrimSpace(string(c.Value))
		old, ok := w.Config[c.Key]
		switch {
		case !ok:
			w.Config[c.Key] = v
		case old != v && slices.Contains(ConfigKeys, c.Key) && !slices.Contains(w.ConfigMixed, c.Key):
			w.ConfigMixed = append(w.ConfigMixed, c.Key)
			slices.Sort(w.ConfigMixed)
			mixed = append(mixed, fmt.Sprintf("%s (%s and %s)", c.Key, old, v))
		}
	}
	return mixed
}

// peaksOf reads the peaks in a result's configuration (nil, nil when it
// has none).
func peaksOf(r *benchfmt.Result) (*roofline.Peaks, error) {
	items := make([]replay.ConfigItem, 0, len(r.Config))
	for _, c := range r.Config {
		items = append(items, replay.ConfigItem{Key: c.Key, Value: string(c.Value)})
	}
	return roofline.FromConfig(items)
}

// addPeaks reads a result's peaks into w, warning once per input about
// peaks that do not parse and about peaks that differ from those already
// read (the first ones are kept).
func (rs *Results) addPeaks(w *WorkloadResults, r *benchfmt.Result, input string, warned map[string]bool) {
	p, err := peaksOf(r)
	warn := func(msg string) {
		if !warned[msg] {
			warned[msg] = true
			rs.Warnings = append(rs.Warnings, msg)
		}
	}
	switch {
	case err != nil:
		warn(fmt.Sprintf("%s: %v: those peaks are not used", input, err))
	case p == nil:
	case w.Peaks == nil:
		w.Peaks = p
	case p.Summary() != w.Peaks.Summary():
		warn(fmt.Sprintf("%s: %s: other peaks than the first read (%s): the roofline uses the first", input, w.Name, w.Peaks.Summary()))
	}
}

// powerLimit reads a "power-limit" configuration value ("700W").
func powerLimit(r *benchfmt.Result) float64 {
	v := strings.TrimSpace(string(r.GetConfig("power-limit")))
	w, err := strconv.ParseFloat(strings.TrimSuffix(v, "W"), 64)
	if err != nil || w <= 0 {
		return 0
	}
	return w
}

// Samples are one benchmark's values over its runs, per unit; a run that
// did not report a unit has no value for it.
type Samples struct {
	NS     []float64 // ns/op
	Joules []float64 // J/op
	Watts  []float64 // W
	IdleW  []float64 // idle-W
	GBps   []float64
	TFLOPs []float64
	// SMMHz is the mean SM clock during each run's replay (sm-MHz).
	SMMHz []float64
	// SkippedNS is the traced time a timeline replay skipped (skipped-ns);
	// GapNS its idle gap after each launch (gap-ns).
	SkippedNS []float64
	GapNS     []float64
	// MeanNS is a model run's mean wall time per inference (mean-ns),
	// where its ns/op is the median span (bench.ModelMetrics).
	MeanNS []float64
	// Other holds the values of every other unit, by the unit as written
	// (the inference benchmark's busy-ns, tpot-ns, J/token, ...).
	Other map[string][]float64
}

// Of returns the values of a unit kept in Other.
func (s *Samples) Of(unit string) []float64 {
	if s == nil {
		return nil
	}
	return s.Other[unit]
}

// Runs is the number of runs with a time.
func (s *Samples) Runs() int {
	if s == nil {
		return 0
	}
	return len(s.NS)
}

func (s *Samples) add(r *benchfmt.Result) bool {
	ok := false
	for _, v := range r.Values {
		switch {
		case v.Unit == "sec/op":
			s.NS = append(s.NS, v.Value*1e9)
			ok = true
		case v.Unit == bench.UnitJoules:
			s.Joules = append(s.Joules, v.Value)
		case v.Unit == bench.UnitWatts:
			s.Watts = append(s.Watts, v.Value)
		case v.Unit == bench.UnitIdleWatts:
			s.IdleW = append(s.IdleW, v.Value)
		case v.Unit == bench.UnitGBps:
			s.GBps = append(s.GBps, v.Value)
		case v.Unit == bench.UnitTFLOPs:
			s.TFLOPs = append(s.TFLOPs, v.Value)
		case v.Unit == bench.UnitSMMHz:
			s.SMMHz = append(s.SMMHz, v.Value)
		case v.OrigUnit == bench.UnitSkippedNS: // benchfmt tidies it to skipped-sec
			s.SkippedNS = append(s.SkippedNS, v.OrigValue)
		case v.OrigUnit == bench.UnitGapNS:
			s.GapNS = append(s.GapNS, v.OrigValue)
		case v.OrigUnit == bench.UnitMeanNS:
			s.MeanNS = append(s.MeanNS, v.OrigValue)
		default:
			if s.Other == nil {
				s.Other = map[string][]float64{}
			}
			u, x := v.OrigUnit, v.OrigValue // set where benchfmt tidied the unit
			if u == "" {
				u, x = v.Unit, v.Value
			}
			s.Other[u] = append(s.Other[u], x)
		}
	}
	return ok
}

// ErrNoBenchmarks is wrapped by ReadResults's error for an input that holds
// neither a benchmark result nor a skipped benchmark: not go test -bench
// output.
var ErrNoBenchmarks = errors.New("no benchmark lines (want go test -bench output, from kreplay predict or a generated package)")

// ReadResults reads `go test -bench` outputs (the Go benchmark format,
// through benchfmt) and groups the values of kreplay's benchmarks by
// workload and signature, as benchproc projects them on ".name",
// "/workload" and "/sig". Other benchmarks are ignored with a warning; an
// input with no benchmark lines at all is an error (ErrNoBenchmarks).
//
// A result with a value that is not finite, is negative or exceeds
// MaxValue (checkValues) is skipped whole, with a warning naming the
// input, the line and the benchmark, and reading goes on: one corrupt line
// costs one run of one benchmark, as a line benchfmt cannot parse does,
// and the warnings say which.
func ReadResults(inputs []Input) (*Results, error) {
	np, err := bench.NewNameProjection()
	if err != nil {
		return nil, err
	}
	rs := &Results{}
	byName := map[string]*WorkloadResults{}
	get := func(name string) *WorkloadResults {
		w := byName[name]
		if w == nil {
			w = &WorkloadResults{Name: name, Sigs: map[string]*Samples{}, Skipped: map[string]string{}, Fidelity: map[string]bench.Fidelity{}}
			byName[name] = w
			rs.Workloads = append(rs.Workloads, w)
		}
		return w
	}
	ignored := map[string]bool{}
	warned := map[string]bool{} // warnings about peaks, once each
	for _, in := range inputs {
		data, err := io.ReadAll(in.Reader)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.Name, err)
		}
		data = bench.MachineLinesAsConfig(data) // the GPU's UUID and peaks
		br := benchfmt.NewReader(bytes.NewReader(data), in.Name)
		results := 0
		for br.Scan() {
			switch rec := br.Result().(type) {
			case *benchfmt.SyntaxError:
				rs.Warnings = append(rs.Warnings, rec.Error())
			case *benchfmt.Result:
				results++
				if err := checkValues(rec); err != nil {
					file, line := rec.Pos()
					rs.Warnings = append(rs.Warnings, fmt.Sprintf("%s:%d: Benchmark%s: %v: the result is skipped", file, line, rec.Name.Full(), err))
					continue
				}
				base, workload, sig := np.Keys(rec)
				var s *Samples
				switch {
				case base == bench.ReplayName && workload != "" && sig != "":
					w := get(workload)
					if s = w.Sigs[sig]; s == nil {
						s = &Samples{}
						w.Sigs[sig] = s
					}
				case base == bench.ModelName && workload != "":
					w := get(workload)
					if w.Model == nil {
						w.Model = &Samples{}
					}
					s = w.Model
				case base == bench.ContextName && workload != "" && sig != "":
					w := get(workload)
					if w.Context == nil {
						w.Context = map[string]*Samples{}
					}
					if s = w.Context[sig]; s == nil {
						s = &Samples{}
						w.Context[sig] = s
					}
				case base == bench.TimelineName && workload != "":
					w := get(workload)
					if w.Timeline == nil {
						w.Timeline = &Samples{}
					}
					s = w.Timeline
				case base == bench.InferenceName && workload != "":
					w := get(workload)
					if w.Inference == nil {
						w.Inference = &Samples{}
					}
					s = w.Inference
				case base == bench.PacedName && workload != "":
					w := get(workload)
					if w.Paced == nil {
						w.Paced = &Samples{}
					}
					s = w.Paced
				default:
					if n := string(rec.Name.Full()); !ignored[n] {
						ignored[n] = true
						rs.Warnings = append(rs.Warnings, fmt.Sprintf("%s: ignored Benchmark%s: not a kreplay benchmark", in.Name, n))
					}
					continue
				}
				if w := byName[workload]; w != nil {
					if w.PowerLimitW == 0 {
						w.PowerLimitW = powerLimit(rec)
					}
					for _, m := range w.addConfig(rec) {
						rs.Warnings = append(rs.Warnings, fmt.Sprintf("%s: workload %s: configuration %s differs between its results; its first value is used", in.Name, workload, m))
					}
					rs.addPeaks(w, rec, in.Name, warned)
				}
				if !s.add(rec) {
					rs.Warnings = append(rs.Warnings, fmt.Sprintf("%s: Benchmark%s has no ns/op", in.Name, rec.Name.Full()))
				}
			}
		}
		if err := br.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", in.Name, err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if w, sig, f, ok := bench.ParseFidelityLine(line); ok {
				get(w).Fidelity[sig] = f
			}
			if w, why, ok := parseNotInPlaceLine(line); ok {
				get(w).EnergyNotInPlace = why
			}
			if w, why, ok := parseNoEnergyLine(line); ok {
				get(w).NoEnergy = why
			}
		}
		sks := skips(data)
		if results == 0 && len(sks) == 0 {
			return nil, fmt.Errorf("%s: %w", in.Name, ErrNoBenchmarks)
		}
		for _, sk := range sks {
			switch {
			case sk.workload != "" && sk.sig != "":
				get(sk.workload).Skipped[sk.sig] = sk.reason
			case sk.workload != "":
				get(sk.workload).NoModel = sk.reason
			}
		}
	}
	slices.SortFunc(rs.Workloads, func(a, b *WorkloadResults) int { return strings.Compare(a.Name, b.Name) })
	return rs, nil
}

// MaxValue bounds the values ReadResults accepts, in the unit as written,
// with a time in ns (1e15 ns is 11.6 days per op): larger ones are
// corrupt, not measured.
const MaxValue = 1e15

// checkValues returns an error naming the first value of r that is not
// finite, is negative or exceeds MaxValue. Every unit kreplay's
// benchmarks report (times, joules, watts, rates, clocks, counts) is
// non-negative.
func checkValues(r *benchfmt.Result) error {
	for _, v := range r.Values {
		u, x := v.OrigUnit, v.OrigValue // set where benchfmt tidied the unit
		if u == "" {
			u, x = v.Unit, v.Value
		}
		if u == "sec/op" {
			u, x = "ns/op", x*1e9
		}
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			return fmt.Errorf("%s is %v, not a finite number", u, x)
		case x < 0:
			return fmt.Errorf("%s is %v, negative", u, x)
		case x > MaxValue:
			return fmt.Errorf("%s is %v, more than %g", u, x, MaxValue)
		}
	}
	return nil
}

type skip struct{ workload, sig, reason string }

var skipLine = regexp.MustCompile(`^\s*--- (SKIP|FAIL): Benchmark(\S+)`)

// sourcePrefix matches the "file.go:123: " go test puts before a log line.
var sourcePrefix = regexp.MustCompile(`^[\w.-]+\.go:\d+: `)

// skips finds the replay benchmarks go test -v reports as skipped or
// failed ("--- SKIP: BenchmarkX" and "--- FAIL: BenchmarkX"), with the
// first line of their log as the reason: the indented lines go test
// prints between the benchmark's name and that line, or after it; and the
// model benchmarks that did not run (bench.NoModelLine, a skip without a
// sig).
func skips(data []byte) []skip {
	var out []skip
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	var header string  // the benchmark whose log lines follow
	var pending string // the first log line since header
	var after *skip    // a skip whose reason may follow it
	for sc.Scan() {
		line := sc.Text()
		if w, reason, ok := bench.ParseNoModelLine(line); ok {
			out = append(out, skip{workload: w, reason: reason})
			after = nil
			continue
		}
		if m := skipLine.FindStringSubmatch(line); m != nil {
			after = nil
			name := m[2]
			workload, sig := nameKeys(name)
			if sig == "" {
				continue
			}
			sk := skip{workload: workload, sig: sig, reason: strings.ToLower(m[1])}
			same := header != "" && sameBenchmark(header, name)
			if pending != "" && same {
				sk.reason += ": " + pending
			}
			out = append(out, sk)
			if pending == "" || !same {
				after = &out[len(out)-1]
			}
			header, pending = "", ""
			continue
		}
		trimmed := strings.TrimLeft(line, " \t")
		switch {
		case trimmed == "":
		case len(trimmed) < len(line): // an indented log line
			msg := sourcePrefix.ReplaceAllString(trimmed, "")
			if after != nil {
				after.reason += ": " + msg
				after = nil
			} else if header != "" && pending == "" {
				pending = msg
			}
		case strings.HasPrefix(line, "Benchmark"):
			header, pending, after = strings.Fields(line)[0][len("Benchmark"):], "", nil
		default:
			after = nil
		}
	}
	return out
}

// sameBenchmark reports whether two replay benchmark names (without the
// "Benchmark" prefix) name the same benchmark, GOMAXPROCS suffix or not.
func sameBenchmark(a, b string) bool {
	wa, sa := nameKeys(a)
	wb, sb := nameKeys(b)
	return wa == wb && sa == sb
}

// nameKeys extracts the workload and sig keys of a replay benchmark name
// without the "Benchmark" prefix ("Replay/workload=W/sig=ID-8").
func nameKeys(full string) (workload, sig string) {
	var n benchfmt.Name = []byte(full)
	base, parts := n.Parts()
	if string(base) != bench.ReplayName {
		return "", ""
	}
	for _, p := range parts {
		k, v, ok := strings.Cut(strings.TrimPrefix(string(p), "/"), "=")
		if !ok {
			continue
		}
		switch k {
		case bench.WorkloadKey:
			workload = v
		case bench.SigKey:
			sig = v
		}
	}
	return workload, sig
}
