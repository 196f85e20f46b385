package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kreplay/kreplay/internal/runner"
	"github.com/kreplay/kreplay/workload"
)

// recordKernels records the binaries of the kernels a workload runs, for
// kreplay capture (workload.CaptureOptions.Kernels); tests replace it.
var recordKernels = workload.RecordKernels

// captureWarmupTime is kreplay capture's workload.CaptureOptions.WarmupTime
// (0: the default); tests shorten it.
var captureWarmupTime time.Duration

// cmdCapture runs a workload spec and writes its bundle.
func cmdCapture(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("capture")
	out := fs.String("o", "", "write the bundle into `DIR` (required)")
	force := fs.Bool("force", false, "replace DIR when it is a bundle already")
	ticks := fs.Int("ticks", workload.DefaultTicks, "NVML energy-counter `TICKS` of the measured run's energy window (about 0.1 s each)")
	noBinaries := fs.Bool("no-binaries", false, "do not record the kernels' binaries")
	procs := fs.Int("processes", workload.DefaultProcesses, "measure the workload in `N` processes of its own and keep the median one's run (1 without binaries: in the traced process)")
	python := fs.String("python", "python3", "run kreplay's runner with `PYTHON`")
	noSchedule := fs.Bool("no-schedule", false, "do not record the host's schedule in the measured processes (docs/whole-inference.md)")
	schedN := fs.Int("schedule-inferences", runner.DefaultScheduleInferences, "record the host's schedule of `N` inferences in each measured process, between its measured blocks")
	warm := fs.Int("profile-warmup", workload.DefaultProfileWarmup, "profile `N` inferences and discard them before the traced one (the first after the profiler's start is disturbed)")
	pos, err := parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	switch {
	case *out == "":
		return usagef("-o DIR is required: the bundle's directory")
	case *ticks < 2:
		return usagef("-ticks %d: want 2 or more", *ticks)
	case *procs < 1:
		return usagef("-processes %d: want 1 or more", *procs)
	case *schedN < 1:
		return usagef("-schedule-inferences %d: want 1 or more", *schedN)
	case *warm < 0:
		return usagef("-profile-warmup %d: want 0 or more", *warm)
	case *python == "":
		return usagef("-python: want a command")
	}
	spec, err := workload.ReadSpec(pos[0])
	if err != nil {
		return err
	}
	if err := spec.Capturable(); err != nil {
		return err // bad input first, whether or not there is a GPU
	}
	if err := probeGPU(); err != nil {
		return noGPU(err)
	}
	opt := workload.CaptureOptions{Force: *force, Ticks: *ticks, Processes: *procs, Python: *python, Progress: workload.Elapsed(stderr),
		ProfileWarmup: *warm, NoSchedule: *noSchedule, ScheduleInferences: *schedN,
		WarmupTime: captureWarmupTime}
	if *warm == 0 {
		opt.ProfileWarmup = -1
	}
	switch {
	case *noBinaries:
		fmt.Fprintln(stderr, "capture: the kernels' binaries are not recorded (-no-binaries)")
	case recordKernels == nil:
		fmt.Fprintln(stderr, "capture: the kernels' binaries are not recorded: this kreplay has no kernel recorder")
	default:
		opt.Kernels = recordKernels
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b, err := workload.Capture(ctx, spec, *out, opt)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: bundle of workload %s (%s)\n", *out, b.Manifest.Workload, spec.Summary())
	return nil
}
