package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/internal/atomicfile"
	"github.com/kreplay/kreplay/predict"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/tier3"
)

// cmdTimeline exports a trace's timeline, with the replayed times of a
// benchmark output beside it, for Perfetto's UI or chrome://tracing.
func cmdTimeline(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("timeline")
	out := fs.String("o", "", "write the export to `FILE` (default WORKLOAD.timeline.json)")
	benchFiles := fs.String("bench", "", "draw the replayed times of these go test -bench outputs `BENCH,...` (comma-separated; kreplay predict's output or a generated package's) beside the trace")
	pos, err := parseArgs(fs, args, 1, 1, defaultInput)
	if err != nil {
		return err
	}
	set, _, err := load(pos[0])
	if err != nil {
		return err
	}
	workload := bench.Workload(set.Source)
	view := predict.TimelineView{}
	_, view.Path = replay.PlanPaths(set, tier3.Config{})
	if *benchFiles != "" {
		in, err := predict.ReadFiles(strings.Split(*benchFiles, ","))
		if err != nil {
			return err
		}
		rs, err := predict.ReadResults(in)
		if err != nil {
			return err
		}
		view.ReplayNS = predict.ReplayTimes(rs, workload)
		if len(view.ReplayNS) == 0 {
			return fmt.Errorf("%s: no replay results of workload %s", *benchFiles, workload)
		}
	}
	if *out == "" {
		*out = workload + ".timeline.json"
	}
	if err := atomicfile.Write(*out, func(w io.Writer) error { return predict.WriteTimeline(w, set, view) }); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d invocations of %s, %d signatures with a replayed time; open it in https://ui.perfetto.dev or chrome://tracing\n",
		*out, len(set.Timeline), workload, len(view.ReplayNS))
	return nil
}
