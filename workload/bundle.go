package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/internal/runner"
	"github.com/kreplay/kreplay/signatures"
)

// A bundle is a captured workload, self-contained in one directory
// (kreplay capture writes it):
//
//	bundle.json     the manifest (Manifest), naming the files below
//	spec.json       the workload spec, resolved (Spec)
//	trace.json.gz   the Kineto trace of one profiled inference (one per rank)
//	measured.json   the unprofiled run: wall time and energy per inference
//	                (Measured's format)
//	env.json        the GPU and software the capture ran on (Env)
//	kernels/        the kernels' binaries, when recorded
//	schedule.pN.txt.gz
//	                the host's schedule of each measured process N, when
//	                recorded (version 2 on; ScheduleFile)
//
// A multi-rank capture (a tensor-parallel spec) has each rank's files
// instead, listed in the manifest's Ranks: rankR.trace.json.gz,
// kernels/rankR/ and schedule.rankR.pN.txt.gz (RankTraceFile,
// RankKernelsDir, RankScheduleFile), and measured.json in its per-rank
// form (Measured), each rank's run with its own GPU's energy.
//
// kreplay takes a bundle wherever it takes a trace.
const (
	// BundleVersion is the version Capture writes: 2 adds the host
	// schedules and the measured process. Version 1 bundles still read.
	BundleVersion = 2
	BundleFile    = "bundle.json"
)

// minBundleVersion is the oldest bundle version kreplay reads.
const minBundleVersion = 1

// Manifest is bundle.json. File names are relative to the bundle's
// directory.
type Manifest struct {
	Version int `json:"version"`
	// Workload is the workload's name (the spec's Name).
	Workload string `json:"workload"`
	Spec     string `json:"spec"`
	// Traces are the Kineto traces, gzip'ed: one, or one per rank of a
	// multi-GPU run.
	Traces   []string `json:"traces"`
	Measured string   `json:"measured,omitempty"`
	Env      string   `json:"env,omitempty"`
	// Kernels is the directory of the recorded kernel binaries, when
	// there is one.
	Kernels string `json:"kernels,omitempty"`
	// ProfileWarmup is how many inferences were profiled and discarded
	// before the traced one (CaptureOptions.ProfileWarmup); nil in a
	// bundle written before kreplay recorded it, where it was none.
	ProfileWarmup *int `json:"profile_warmup,omitempty"`
	// Schedules are the host schedules recorded in the measured
	// processes (ScheduleFile, gzip'ed; docs/whole-inference.md's
	// format), in run order, one per process that recorded one; none in a
	// version 1 bundle.
	Schedules []string `json:"schedules,omitempty"`
	// MeasuredProcess is the index (from 0, in run order) of the process
	// whose measured run measured.json keeps, the median one; nil in a
	// version 1 bundle.
	MeasuredProcess *int `json:"measured_process,omitempty"`
	// Ranks are each rank's files of a multi-rank capture, in rank order
	// (version 2 on; none for one rank): Traces lists the same traces in
	// the same order, Schedules every rank's schedules, and Kernels is
	// empty.
	Ranks []RankFiles `json:"ranks,omitempty"`
	// Created is when the bundle was written (RFC 3339); Kreplay the
	// version of kreplay that wrote it.
	Created string `json:"created"`
	Kreplay string `json:"kreplay"`
}

// RankFiles are one rank's files in a bundle (Manifest.Ranks).
type RankFiles struct {
	Rank int `json:"rank"`
	// Device is the CUDA device the rank ran on.
	Device int `json:"device"`
	// Trace is the rank's Kineto trace; Kernels its recorded kernels'
	// directory, when recorded; Schedules its host schedules, one per
	// measured process that recorded one, in run order.
	Trace     string   `json:"trace"`
	Kernels   string   `json:"kernels,omitempty"`
	Schedules []string `json:"schedules,omitempty"`
}

// Bundle is a bundle opened for reading.
type Bundle struct {
	Manifest Manifest
	// Name names the bundle in messages: its directory, or
	// "embedded:NAME" for one built into the binary.
	Name string
	// Warnings say what of the bundle is missing but not needed to read
	// it: its kernels directory, say.
	Warnings  []string
	fsys      fs.FS // rooted at the bundle's directory
	noKernels bool  // the manifest names a kernels directory that is missing
	// rankKernels are the ranks' kernels directories that are there, by
	// trace.
	rankKernels map[string]string
}

// IsBundle reports whether dir is a directory holding bundle.json.
func IsBundle(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, BundleFile))
	return err == nil && st.Mode().IsRegular()
}

// ReadBundle opens the bundle in directory dir.
func ReadBundle(dir string) (*Bundle, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s: a bundle is a directory holding %s", dir, BundleFile)
	}
	return OpenBundle(os.DirFS(dir), dir)
}

// OpenBundle opens the bundle at the root of fsys; name names it in
// messages. It reads bundle.json strictly and checks that every file it
// names is there.
func OpenBundle(fsys fs.FS, name string) (*Bundle, error) {
	b := &Bundle{Name: name, fsys: fsys}
	data, err := fs.ReadFile(fsys, BundleFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: not a bundle: no %s", name, BundleFile)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b.Manifest); err != nil {
		return nil, fmt.Errorf("%s: %v", b.file(BundleFile), err)
	}
	if err := b.check(); err != nil {
		return nil, fmt.Errorf("%s: %v", b.file(BundleFile), err)
	}
	return b, nil
}

// check validates the manifest against the files.
func (b *Bundle) check() error {
	m := &b.Manifest
	if m.Version < minBundleVersion || m.Version > BundleVersion {
		return fmt.Errorf("version %d is not a version this kreplay reads (want %d to %d)", m.Version, minBundleVersion, BundleVersion)
	}
	if m.Version < 2 && (len(m.Schedules) > 0 || m.MeasuredProcess != nil) {
		return fmt.Errorf("version %d: schedules and measured_process are version 2's", m.Version)
	}
	if m.Version < 2 && len(m.Ranks) > 0 {
		return fmt.Errorf("version %d: ranks are version 2's", m.Version)
	}
	if m.MeasuredProcess != nil && *m.MeasuredProcess < 0 {
		return fmt.Errorf("measured_process %d: want an index from 0", *m.MeasuredProcess)
	}
	if !nameRE.MatchString(m.Workload) {
		return fmt.Errorf("workload %q is not a workload name", m.Workload)
	}
	if _, err := time.Parse(time.RFC3339, m.Created); err != nil {
		return fmt.Errorf("created %q: want an RFC 3339 time", m.Created)
	}
	if m.Spec == "" {
		return fmt.Errorf(`"spec": missing`)
	}
	if len(m.Traces) == 0 {
		return fmt.Errorf(`"traces": want at least one trace`)
	}
	files := append(append([]string{m.Spec}, m.Traces...), m.Schedules...)
	for _, f := range []string{m.Measured, m.Env} {
		if f != "" {
			files = append(files, f)
		}
	}
	for _, f := range files {
		if !fs.ValidPath(f) || f == "." {
			return fmt.Errorf("%q is not a file name inside the bundle", f)
		}
		st, err := fs.Stat(b.fsys, f)
		if err != nil {
			return fmt.Errorf("%s is missing", f)
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is not a file", f)
		}
	}
	if m.Kernels != "" {
		ok, err := b.kernelsDir(m.Kernels)
		if err != nil {
			return err
		}
		b.noKernels = !ok
	}
	return b.checkRanks()
}

// kernelsDir checks a kernels directory the manifest names: false, with
// a warning, when it is missing.
func (b *Bundle) kernelsDir(dir string) (bool, error) {
	if !fs.ValidPath(dir) || dir == "." {
		return false, fmt.Errorf("kernels %q is not a directory name inside the bundle", dir)
	}
	st, err := fs.Stat(b.fsys, dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A bundle copied without its kernel binaries (they are most
		// of its size) still has its trace, spec and measured run.
		b.Warnings = append(b.Warnings, fmt.Sprintf("%s: kernels directory %q is missing: its signatures replay as a plain trace's",
			b.Name, dir))
		return false, nil
	case err != nil || !st.IsDir():
		return false, fmt.Errorf("kernels %q is not a directory in the bundle", dir)
	}
	return true, nil
}

// checkRanks checks Ranks against Traces and Schedules.
func (b *Bundle) checkRanks() error {
	m := &b.Manifest
	if len(m.Ranks) == 0 {
		return nil
	}
	if len(m.Ranks) != len(m.Traces) {
		return fmt.Errorf("ranks: %d ranks but %d traces", len(m.Ranks), len(m.Traces))
	}
	if m.Kernels != "" {
		return fmt.Errorf("kernels %q beside ranks: each rank names its own", m.Kernels)
	}
	b.rankKernels = map[string]string{}
	for i, r := range m.Ranks {
		if r.Rank != i {
			return fmt.Errorf("ranks[%d]: rank %d, want %d (rank order)", i, r.Rank, i)
		}
		if r.Trace != m.Traces[i] {
			return fmt.Errorf("ranks[%d]: trace %q, but traces[%d] is %q", i, r.Trace, i, m.Traces[i])
		}
		for _, s := range r.Schedules {
			if !slices.Contains(m.Schedules, s) {
				return fmt.Errorf("ranks[%d]: schedule %q is not in schedules", i, s)
			}
		}
		if r.Kernels == "" {
			continue
		}
		ok, err := b.kernelsDir(r.Kernels)
		if err != nil {
			return fmt.Errorf("ranks[%d]: %v", i, err)
		}
		if ok {
			b.rankKernels[r.Trace] = r.Kernels
		}
	}
	return nil
}

// file names a file of the bundle in messages.
func (b *Bundle) file(name string) string {
	if strings.HasPrefix(b.Name, "embedded:") {
		return b.Name + "/" + name
	}
	return filepath.Join(b.Name, filepath.FromSlash(name))
}

// FS returns the bundle's files.
func (b *Bundle) FS() fs.FS { return b.fsys }

// SpecJSON returns spec.json as it is.
func (b *Bundle) SpecJSON() ([]byte, error) { return fs.ReadFile(b.fsys, b.Manifest.Spec) }

// Spec reads the bundle's workload spec.
func (b *Bundle) Spec() (*Spec, error) {
	data, err := b.SpecJSON()
	if err != nil {
		return nil, err
	}
	s, err := ParseSpec(data, b.file(b.Manifest.Spec))
	if err != nil {
		return nil, err
	}
	if s.Name != b.Manifest.Workload {
		return nil, fmt.Errorf("%s: workload %q, but %s names %q", b.file(b.Manifest.Spec), s.Name, BundleFile, b.Manifest.Workload)
	}
	return s, nil
}

// Measured reads the bundle's measured run(s); nil without error when it
// has none.
func (b *Bundle) Measured() (*Measured, error) {
	if b.Manifest.Measured == "" {
		return nil, nil
	}
	data, err := fs.ReadFile(b.fsys, b.Manifest.Measured)
	if err != nil {
		return nil, err
	}
	return ParseMeasured(b.file(b.Manifest.Measured), data)
}

// ModelRun is the measured run of a set of the bundle (its workload and
// rank) as a full-model run's result: what predict compares with. It is
// nil without error when the bundle has no measured run.
func (b *Bundle) ModelRun(set *signatures.Set) (*runner.Result, error) {
	m, err := b.Measured()
	if m == nil || err != nil {
		return nil, err
	}
	r, err := m.Lookup(set.Source.Workload, set.Source.Rank, set.Source.WorldSize)
	if err != nil {
		return nil, err
	}
	return r.Result(), nil
}

// Env is what env.json says of the GPU and software a bundle was
// captured on (the fields kreplay reads; the file may hold more).
type Env struct {
	GPU               string `json:"gpu"`
	SMCount           int    `json:"sm_count,omitempty"`
	MemoryBytes       int64  `json:"memory_bytes,omitempty"`
	ComputeCapability string `json:"compute_capability,omitempty"`
	Driver            string `json:"driver,omitempty"`
	CUDARuntime       string `json:"cuda_runtime,omitempty"`
	CUBLAS            string `json:"cublas,omitempty"`
	CUBLASLt          string `json:"cublaslt,omitempty"`
	CUDNN             string `json:"cudnn,omitempty"`
	NCCL              string `json:"nccl,omitempty"`
	Torch             string `json:"torch,omitempty"`
	Triton            string `json:"triton,omitempty"`
	Transformers      string `json:"transformers,omitempty"`
	Note              string `json:"note,omitempty"`
}

// Env reads env.json; nil without error when the bundle has none.
func (b *Bundle) Env() (*Env, error) {
	if b.Manifest.Env == "" {
		return nil, nil
	}
	data, err := fs.ReadFile(b.fsys, b.Manifest.Env)
	if err != nil {
		return nil, err
	}
	var e Env
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("%s: %v", b.file(b.Manifest.Env), err)
	}
	return &e, nil
}

// TraceFile is how sets imported from the bundle's trace name their
// source file: the bundle directory's base name and the trace's, e.g.
// "h100_bloom-560m_prefill/trace.json.gz".
func (b *Bundle) TraceFile(trace string) string {
	base := strings.TrimPrefix(b.Name, "embedded:")
	return path.Join(filepath.Base(filepath.Clean(base)), trace)
}

// ImportTrace imports one of the bundle's traces (as named in Traces),
// with the bundle's workload name and TraceFile as its source file.
func (b *Bundle) ImportTrace(trace string) (*signatures.Set, error) {
	f, err := b.fsys.Open(trace)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name, err)
	}
	defer f.Close()
	opt := signatures.Options{Workload: b.Manifest.Workload}
	kernels := b.rankKernels[trace]
	if b.Manifest.Kernels != "" && !b.noKernels && len(b.Manifest.Traces) == 1 {
		kernels = b.Manifest.Kernels
	}
	if kernels != "" {
		kfs, err := fs.Sub(b.fsys, kernels)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name, err)
		}
		if opt.Kernels, err = inject.ReadIndex(kfs); err != nil {
			return nil, fmt.Errorf("%s: kernels: %w", b.Name, err)
		}
		opt.KernelsFS = kfs
	}
	set, err := signatures.Import(f, b.file(trace), opt)
	if err != nil {
		return nil, err
	}
	set.Source.File = b.TraceFile(trace)
	return set, nil
}

// Sets imports every trace of the bundle, in order.
func (b *Bundle) Sets() ([]*signatures.Set, error) {
	var sets []*signatures.Set
	for _, t := range b.Manifest.Traces {
		s, err := b.ImportTrace(t)
		if err != nil {
			return nil, err
		}
		sets = append(sets, s)
	}
	return sets, nil
}
