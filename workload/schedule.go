package workload

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/internal/runner"
	"github.com/kreplay/kreplay/schedule"
)

// ScheduleFile is the name of the host schedule (gzip'ed,
// docs/whole-inference.md's format) of the measured process of index
// process (from 0, in run order, as measured.json's
// median_ms_per_process) in a bundle: "schedule.p0.txt.gz".
func ScheduleFile(process int) string { return fmt.Sprintf("schedule.p%d.txt.gz", process) }

// scheduleEnv builds kreplay's schedule recorder (package inject's) in
// the user's cache directory and returns the environment that loads it
// into a runner; a variable, so that tests give a stand-in.
var scheduleEnv = func() ([]string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	lib, err := inject.BuildSchedule(filepath.Join(cache, "kreplay", "inject"))
	if err != nil {
		return nil, err
	}
	return inject.ScheduleEnv(lib, 0), nil
}

// scheduleRecorder returns the environment that loads the schedule
// recorder into the measured runners, or nil, with a warning, where it
// cannot be built (no C compiler): the capture goes on without schedules.
func (c *capture) scheduleRecorder() []string {
	if c.o.NoSchedule {
		return nil
	}
	env, err := scheduleEnv()
	if err != nil {
		fmt.Fprintf(c.o.Progress, "capture: warning: no host schedule: the schedule recorder: %v\n", err)
		return nil
	}
	return env
}

// scheduleRequests are the recorded run's schedules of process, one per
// rank, each into a raw file in the bundle's directory.
func (c *capture) scheduleRequests(process int) []runner.ScheduleRequest {
	names := c.scheduleFiles(process)
	reqs := make([]runner.ScheduleRequest, len(names))
	for i, name := range names {
		reqs[i] = runner.ScheduleRequest{Path: filepath.Join(c.dir, "."+name+".raw"), Inferences: c.o.ScheduleInferences, Process: process}
	}
	return reqs
}

// removeRaw removes the raw files of reqs.
func (c *capture) removeRaw(reqs []runner.ScheduleRequest) {
	for _, r := range reqs {
		os.Remove(r.Path)
	}
}

// keepSchedules puts the schedules the recorded run res of process wrote
// (reqs, one per rank) into the bundle (ScheduleFile, or
// RankScheduleFile per rank); a rank without its schedule is a warning,
// and no schedule of process.
func (c *capture) keepSchedules(process int, reqs []runner.ScheduleRequest, res []*runner.Result) {
	names := c.scheduleFiles(process)
	var err error
	for i := 0; i < len(names) && err == nil; i++ {
		switch {
		case res[i].ScheduleError != "":
			err = errors.New(res[i].ScheduleError)
		case res[i].Schedule == nil:
			err = errors.New("the runner did not record it")
		default:
			err = gzipFile(reqs[i].Path, filepath.Join(c.dir, names[i]))
		}
	}
	if err != nil {
		for _, name := range names {
			os.Remove(filepath.Join(c.dir, name))
		}
		fmt.Fprintf(c.o.Progress, "capture: warning: no host schedule from process %d: %v\n", process+1, err)
		return
	}
	c.schedules = append(c.schedules, names...)
	for i, name := range names {
		c.noteSchedule(process, name, res[i])
	}
}

// noteSchedule says how the schedule name of process went: which
// recorder ran and what it cost.
func (c *capture) noteSchedule(process int, name string, run *runner.Result) {
	p := c.o.Progress
	res := run.Schedule
	over := float64(res.OverheadNSPerInference)
	if res.Recorder == schedule.RecorderHook {
		wall := run.WallSPerInference * 1e9
		fmt.Fprintf(p, "capture: process %d: host schedule of %d inferences (%s), recorded by the hook recorder: every measured inference, in %d blocks; its cost %+.4g µs per inference (%+.2f%% of the measured %.4g ms), %.4g ms armed against %.4g ms disarmed, the medians of %d pairs of single inferences; the probe: %.3g µs per recorded call\n",
			process+1, res.Inferences, name, res.Blocks, over/1e3, 100*over/max(wall, 1), wall/1e6,
			float64(res.ArmedWallNS)/1e6, float64(res.MeasuredWallNS)/1e6, res.CostPairs, float64(res.OverheadNSPerCall)/1e3)
	} else {
		fmt.Fprintf(p, "capture: process %d: host schedule of %d inferences (%s), recorded by the CUPTI recorder between %d measured blocks: %.4g ms recorded against %.4g ms measured per inference, a cost of %+.4g µs per inference (%+.1f%%); the probe: %.3g µs per recorded call\n",
			process+1, res.Inferences, name, res.Blocks, float64(res.ArmedWallNS)/1e6, float64(res.MeasuredWallNS)/1e6,
			over/1e3, 100*over/float64(max(res.MeasuredWallNS, 1)), float64(res.OverheadNSPerCall)/1e3)
	}
	if len(run.BlockWallMS) > 0 {
		ms := make([]string, len(run.BlockWallMS))
		for i, v := range run.BlockWallMS {
			ms[i] = fmt.Sprintf("%.4g", v)
		}
		fmt.Fprintf(p, "capture: process %d: measured blocks' wall per inference %s ms\n", process+1, strings.Join(ms, ", "))
	}
	if res.Lost > 0 || res.Incomplete > 0 {
		fmt.Fprintf(p, "capture: warning: process %d's schedule lost %d calls past the recorder's buffer and %d inferences with them (raise KREPLAY_SCHED_RECORDS)\n",
			process+1, res.Lost, res.Incomplete)
	}
	if res.OtherThreads > 0 {
		fmt.Fprintf(p, "capture: process %d: %d calls of threads other than the inference's (a watchdog's event polls) left out of its schedule\n",
			process+1, res.OtherThreads)
	}
	if res.HookOld > 0 {
		fmt.Fprintf(p, "capture: warning: process %d: the hook recorder passed %d driver entry points of another signature than its wrappers' (CUDA 12.0's) through unrecorded\n",
			process+1, res.HookOld)
	}
	if res.HookSecond > 0 {
		fmt.Fprintf(p, "capture: process %d: %d lookups resolved a recorded call to a second definition, recorded through the first\n",
			process+1, res.HookSecond)
	}
}

// gzipFile writes src, gzip'ed, to dst.
func gzipFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	z := gzip.NewWriter(out)
	_, err = io.Copy(z, in)
	if cerr := z.Close(); err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return err
}

// Schedules returns the bundle's host schedules, as named in its
// manifest: none in a bundle captured without them (before kreplay
// recorded them, with CaptureOptions.NoSchedule, or without a C
// compiler).
func (b *Bundle) Schedules() []string { return b.Manifest.Schedules }

// OpenSchedule opens the bundle's i-th host schedule (Schedules), gunzipped:
// docs/whole-inference.md's text format.
func (b *Bundle) OpenSchedule(i int) (io.ReadCloser, error) {
	if i < 0 || i >= len(b.Manifest.Schedules) {
		return nil, fmt.Errorf("%s: no host schedule %d (the bundle has %d)", b.Name, i, len(b.Manifest.Schedules))
	}
	name := b.Manifest.Schedules[i]
	f, err := b.fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name, err)
	}
	z, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %v", b.file(name), err)
	}
	return gunzipped{z, f}, nil
}

// ReadSchedule reads the bundle's i-th host schedule (Schedules).
func (b *Bundle) ReadSchedule(i int) (*schedule.Schedule, error) {
	if i < 0 || i >= len(b.Manifest.Schedules) {
		return nil, fmt.Errorf("%s: no host schedule %d (the bundle has %d)", b.Name, i, len(b.Manifest.Schedules))
	}
	return b.readSchedule(b.Manifest.Schedules[i])
}

// readSchedule reads the host schedule file name of the bundle (gzip'ed:
// schedule.Read sniffs it).
func (b *Bundle) readSchedule(name string) (*schedule.Schedule, error) {
	f, err := b.fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name, err)
	}
	defer f.Close()
	s, err := schedule.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.file(name), err)
	}
	return s, nil
}

// MeasuredSchedule returns the index in Schedules of the host schedule of
// the process whose measured run the bundle keeps, or -1 when it has
// none.
func (b *Bundle) MeasuredSchedule() int {
	if b.Manifest.MeasuredProcess == nil {
		return -1
	}
	want := ScheduleFile(*b.Manifest.MeasuredProcess)
	for i, s := range b.Manifest.Schedules {
		if s == want {
			return i
		}
	}
	return -1
}

// gunzipped reads a gzip stream and closes its file with it.
type gunzipped struct {
	*gzip.Reader
	f io.Closer
}

func (g gunzipped) Close() error {
	err := g.Reader.Close()
	if cerr := g.f.Close(); err == nil {
		err = cerr
	}
	return err
}
