package workload

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kreplay/kreplay/internal/runner"
)

// The files of rank r of a multi-rank capture (Spec.World > 1), beside
// the bundle's shared spec.json, measured.json and env.json; a capture of
// one rank names them as before (TraceFile, ScheduleFile, KernelsDir).

// RankTraceFile is rank's trace: "rank1.trace.json.gz".
func RankTraceFile(rank int) string { return fmt.Sprintf("rank%d.%s", rank, TraceFile) }

// RankScheduleFile is rank's host schedule in the measured process of
// index process: "schedule.rank1.p0.txt.gz".
func RankScheduleFile(rank, process int) string {
	return fmt.Sprintf("schedule.rank%d.p%d.txt.gz", rank, process)
}

// RankKernelsDir is rank's kernels directory: "kernels/rank1".
func RankKernelsDir(rank int) string { return fmt.Sprintf("%s/rank%d", KernelsDir, rank) }

// MachineKeyTP is the key of a tensor-parallel run's machine in
// measured.json: world GPUs of gpu's MachineKey, tensor-parallel world
// ("2xh200_tp2", as the shared traces name theirs).
func MachineKeyTP(gpu string, world int) string {
	return fmt.Sprintf("%dx%s_tp%d", world, MachineKey(gpu), world)
}

// devices are the CUDA devices the capture's ranks run on, in rank order.
func (c *capture) devices() []int {
	if c.spec.World() > 1 {
		return c.spec.Devices
	}
	return []int{c.spec.Device()}
}

// traceFiles are the bundle's traces, one per rank.
func (c *capture) traceFiles() []string {
	if c.spec.World() == 1 {
		return []string{TraceFile}
	}
	files := make([]string, c.spec.World())
	for r := range files {
		files[r] = RankTraceFile(r)
	}
	return files
}

// scheduleFiles are the host schedules of process, one per rank.
func (c *capture) scheduleFiles(process int) []string {
	if c.spec.World() == 1 {
		return []string{ScheduleFile(process)}
	}
	files := make([]string, c.spec.World())
	for r := range files {
		files[r] = RankScheduleFile(r, process)
	}
	return files
}

// kernelDirs are where each rank's recorded kernels are packed, relative
// to the bundle.
func (c *capture) kernelDirs() []string {
	if c.spec.World() == 1 {
		return []string{KernelsDir}
	}
	dirs := make([]string, c.spec.World())
	for r := range dirs {
		dirs[r] = RankKernelsDir(r)
	}
	return dirs
}

// startGroup starts the runners of s, one per rank (runner.StartGroup),
// with env added to every rank's environment and rankEnv(r) to rank r's.
func startGroup(s *Spec, python string, devices []int, env []string, rankEnv func(int) []string) (*runner.Group, error) {
	opt := runner.StartOptions{Python: python, Env: env}
	if c := s.Command; c != nil {
		opt.Command, opt.Dir = c.Argv, c.Dir
	}
	return runner.StartGroup(opt, devices, rankEnv)
}

// loadGroup starts the ranks of s and loads the workload on every one;
// progress lines, prefixed, go to log.
func loadGroup(s *Spec, python string, devices []int, env []string, rankEnv func(int) []string, log io.Writer, prefix string) (*runner.Group, []*runner.Info, error) {
	g, err := startGroup(s, python, devices, env, rankEnv)
	if err != nil {
		return nil, nil, err
	}
	infos, err := g.Load(s)
	if err != nil {
		g.Close()
		return nil, nil, err
	}
	for r, info := range infos {
		who := s.Name
		if len(infos) > 1 {
			who = fmt.Sprintf("%s rank %d of %d", s.Name, r, len(infos))
		}
		fmt.Fprintf(log, "%s: %s on %s, torch %s, CUDA %s, driver %s\n", prefix, who, info.GPU, info.Torch, info.CUDA, info.Driver)
		if info.Compile != "" {
			fmt.Fprintf(log, "%s: compiled %s\n", prefix, info.Compile)
		}
	}
	return g, infos, nil
}

// measuredFileRanks is measured.json of a multi-rank run: under the
// machine's key (MachineKeyTP), one object per rank ("rank0", ...) with
// its rank, the world, its GPU and device, and its run (its own GPU's
// energy); procs[r] are rank r's medians per process.
func measuredFileRanks(workload string, devices []int, infos []*runner.Info, res []*runner.Result, procs [][]float64) map[string]map[string]measuredRank {
	ranks := map[string]measuredRank{}
	for r, info := range infos {
		var p []float64
		if r < len(procs) {
			p = procs[r]
		}
		m := measuredFile(workload, info, res[r], p)[MachineKey(info.GPU)]
		ranks[fmt.Sprintf("rank%d", r)] = measuredRank{Rank: r, World: len(infos), Device: devices[r], measuredMachine: m}
	}
	return map[string]map[string]measuredRank{MachineKeyTP(infos[0].GPU, len(infos)): ranks}
}

// measuredRank is one rank's object in measured.json's per-rank form.
type measuredRank struct {
	Rank   int `json:"rank"`
	World  int `json:"world"`
	Device int `json:"device"`
	measuredMachine
}

// envFile is env.json: the one rank's environment, or rank 0's with
// every rank's under "ranks".
func envFile(envs []map[string]any) map[string]any {
	if len(envs) == 1 {
		return envs[0]
	}
	out := map[string]any{}
	for k, v := range envs[0] {
		out[k] = v
	}
	out["ranks"] = envs
	out["world_size"] = len(envs)
	return out
}

// rawKernelDir is where rank's kernel recorder writes, under raw.
func rawKernelDir(raw string, rank, world int) string {
	if world == 1 {
		return raw
	}
	return filepath.Join(raw, fmt.Sprintf("rank%d", rank))
}

// rankFiles are the manifest's Ranks: each rank's trace, kernels (where
// packed) and schedules.
func (c *capture) rankFiles() []RankFiles {
	devices, kernels := c.devices(), c.kernelDirs()
	ranks := make([]RankFiles, c.spec.World())
	for r := range ranks {
		ranks[r] = RankFiles{Rank: r, Device: devices[r], Trace: RankTraceFile(r)}
		if st, err := os.Stat(filepath.Join(c.dir, filepath.FromSlash(kernels[r]))); err == nil && st.IsDir() {
			ranks[r].Kernels = kernels[r]
		}
		prefix := fmt.Sprintf("schedule.rank%d.", r)
		for _, s := range c.schedules {
			if strings.HasPrefix(s, prefix) {
				ranks[r].Schedules = append(ranks[r].Schedules, s)
			}
		}
	}
	return ranks
}

// verifyRanks reads every rank's trace and measured run back from the
// bundle b.
func (c *capture) verifyRanks(b *Bundle) error {
	m, err := b.Measured()
	if err != nil {
		return err
	}
	world := c.spec.World()
	for r, trace := range b.Manifest.Traces {
		set, err := b.ImportTrace(trace)
		if err != nil {
			return fmt.Errorf("rank %d's captured trace does not import: %w", r, err)
		}
		if _, err := m.Lookup(c.spec.Name, r, world); err != nil {
			return err
		}
		if src := set.Source; src.WorldSize > 1 && (src.Rank != r || src.WorldSize != world) {
			fmt.Fprintf(c.o.Progress, "capture: warning: %s says rank %d of %d, not %d of %d\n", trace, src.Rank, src.WorldSize, r, world)
		}
		fmt.Fprintf(c.o.Progress, "capture: rank %d's trace: %d GPU activities, %d signatures, %s GPU busy\n",
			r, set.Links.Activities, len(set.Signatures), busy(set))
	}
	return nil
}
