package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/bench"
)

// rankRunFlags are predict's flags that kreplay run takes too, with the
// same meaning: a multi-rank bundle's prediction passes them on.
var rankRunFlags = []string{"budget", "pause", "pause-above", "cache", "energy-share", "energywarmup", "energy-duty", "binaries", "resume", "skip", "families", causalFlag}

// rankIgnoredFlags are predict's flags that a multi-rank bundle's
// prediction does not have yet: given, they are named in a warning. Its
// ranks' runs (kreplay run) have no paced timeline to put the energy in
// place, so each signature's energy window is measured there as with
// -signature-energy on.
var rankIgnoredFlags = []string{"o", "model", "model-ticks", "no-model", "no-timeline", "inference", "plots", "top", "memset-arrival", "device", "shared-energy", "signature-energy"}

// predictRanks predicts a bundle of several ranks (a tensor-parallel
// capture) as kreplay run -devices does: each rank's signatures on its
// own GPU, the collectives across the GPUs, a line per rank against its
// busy time less waiting and its measured energy, and the group's whole
// inference from the ranks' host schedules against the measured run.
// devices are the GPUs (default 0 to ranks-1); workload names the
// default progress file.
func predictRanks(arg string, ranks int, devices []int, workload string, flags *flag.FlagSet, stdout, stderr io.Writer) error {
	args, ignored := rankRunArgs(flags, ranks, devices, workload)
	if len(ignored) > 0 {
		fmt.Fprintf(stderr, "kreplay predict: %s: not used for a bundle of %d ranks (no benchmark output, timeline or model run yet)\n",
			strings.Join(ignored, ", "), ranks)
	}
	fmt.Fprintf(stderr, "kreplay predict: %s holds %d ranks: kreplay run %s\n", arg, ranks, strings.Join(args, " "))
	return cmdRun(append(args, arg), stdout, stderr)
}

// rankRunArgs are kreplay run's arguments for predict's flags: the
// devices, energy as predict measures it (on by default, its ticks), the
// progress file, and every flag of rankRunFlags the user set. ignored
// names the flags set that run does not take here.
func rankRunArgs(flags *flag.FlagSet, ranks int, devices []int, workload string) (args, ignored []string) {
	if len(devices) == 0 {
		for r := range ranks {
			devices = append(devices, r)
		}
	}
	ds := make([]string, len(devices))
	for i, d := range devices {
		ds[i] = strconv.Itoa(d)
	}
	get := func(name string) string { return flags.Lookup(name).Value.String() }
	args = []string{"-devices", strings.Join(ds, ","), "-energy=" + get("energy"), "-ticks", get("ticks")}
	prog := get("progress")
	if prog == "" {
		prog = workload + ".progress.jsonl"
	}
	args = append(args, "-out", prog)
	flags.Visit(func(f *flag.Flag) {
		switch {
		case slices.Contains(rankRunFlags, f.Name):
			args = append(args, "-"+f.Name+"="+f.Value.String())
		case slices.Contains(rankIgnoredFlags, f.Name):
			ignored = append(ignored, "-"+f.Name)
		}
	})
	return args, ignored
}

// rankWorkload is the workload name a multi-rank bundle's progress file
// takes by default: its first rank's, without the rank.
func rankWorkload(in *input) string {
	src := in.sets[0].Source
	src.Rank, src.WorldSize = 0, 1
	return bench.Workload(src)
}
