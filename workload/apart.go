package workload

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kreplay/kreplay/internal/runner"
)

// DefaultProcesses is how many processes the capture measures the
// workload in, by default.
//
// Why more than one: a launch-bound workload's median inference moves by
// several percent from one process to the next, and the first process on
// a freshly started machine runs slower (see
// results/h100/capture/README.md). The median of three processes is the
// capture's counterpart of BenchmarkModel's median over -count runs.
const DefaultProcesses = 3

// measureApart measures the workload in processes of their own, without
// the kernel recorder (which slows the launches of the process it was
// loaded into, even after it let go of CUPTI). It returns the run of the process whose median inference
// is the median, and every process's median inference in run order; nil
// when the workload is to be measured in the process that is traced (one
// process asked for, and no recorder). Both are per rank, in rank order
// (a process being a group of ranks); rank 0's medians pick the process.
func (c *capture) measureApart() ([]*runner.Result, [][]float64, error) {
	n := c.o.Processes
	if n == 0 {
		n = DefaultProcesses
	}
	if n <= 1 && c.o.Kernels == nil {
		return nil, nil, nil
	}
	n = max(n, 1)
	p := c.o.Progress
	var runs [][]*runner.Result
	var medians []float64 // rank 0's
	rankMedians := make([][]float64, c.spec.World())
	for i := range n {
		fmt.Fprintf(p, "capture: loading, to measure it in process %d of %d, without the profiler or the kernel recorder (%s)\n", i+1, n, c.where())
		r, _, err := c.start(c.schedEnv, nil, "capture")
		if err != nil {
			return nil, nil, err
		}
		res, err := c.measure(r, i)
		c.closeRunners()
		if err != nil {
			return nil, nil, err
		}
		runs = append(runs, res)
		for r, rr := range res {
			m, _ := rr.MedianMS()
			rankMedians[r] = append(rankMedians[r], m)
		}
		medians = append(medians, rankMedians[0][i])
	}
	pick := medianIndex(medians)
	c.measuredProcess = pick
	if n > 1 {
		ms := make([]string, n)
		for i, m := range medians {
			ms[i] = fmt.Sprintf("%.4g", m)
		}
		fmt.Fprintf(p, "capture: median inference per process %s ms: the measured run is process %d's\n", strings.Join(ms, ", "), pick+1)
		if w := spreadWarning(medians); w != "" {
			fmt.Fprintf(p, "capture: warning: %s\n", w)
		}
	}
	return runs[pick], rankMedians, nil
}

// spreadWarn is the spread of the processes' median inferences, max over
// min - 1, above which the capture warns that this host does not repeat
// the workload's wall time: issue 13's bound on BenchmarkModel against the
// capture is 5%. A launch-bound workload's processes can differ by far
// more than that in a machine's first minutes, and later ones on the same
// machine differ again (see results/h100/capture/README.md).
const spreadWarn = 0.05

// spreadWarning says, when the processes' median inferences spread by more
// than spreadWarn, that a later run may differ by as much; "" otherwise.
func spreadWarning(medians []float64) string {
	if len(medians) < 2 {
		return ""
	}
	lo, hi := slices.Min(medians), slices.Max(medians)
	if lo <= 0 || hi/lo-1 <= spreadWarn {
		return ""
	}
	return fmt.Sprintf("the processes' median inferences spread by %.0f%% (%.4g to %.4g ms): this host's speed moved "+
		"between them, and a later run of the workload (BenchmarkModel) may differ from the measured run by as much", 100*(hi/lo-1), lo, hi)
}

// medianIndex returns the index of the median of v (the lower median of
// an even count; equal values in run order).
func medianIndex(v []float64) int {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(v[a], v[b]) })
	return idx[(len(v)-1)/2]
}
