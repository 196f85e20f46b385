package inject

import (
	"embed"
	"fmt"
	"os"
	"strings"
)

// scheduleSources is the schedule recorder's C source (kr_sched.c), the
// CUDA and CUPTI declarations it uses (kr_sched_types.h, which includes
// kr_inject_types.h) and the opening of libcuda and libcupti it shares
// with the kernel recorder (kr_open.h).
//
//go:embed csrc/kr_sched.c csrc/kr_sched_hook.c csrc/kr_sched.h csrc/kr_sched_calls.h csrc/kr_sched_types.h csrc/kr_inject_types.h csrc/kr_open.h
var scheduleSources embed.FS

// ScheduleSource returns a file of the schedule recorder's C source
// (kr_sched.c, kr_sched_types.h, kr_inject_types.h, kr_open.h), or nil for
// another.
func ScheduleSource(name string) []byte {
	b, err := scheduleSources.ReadFile("csrc/" + name)
	if err != nil {
		return nil
	}
	return b
}

// BuildSchedule compiles the schedule recorder, the light CUPTI injection
// library that records the host's schedule of an inference
// (csrc/kr_sched.c; docs/whole-inference.md), into dir as Build does the
// kernel recorder: with the system C compiler (ErrNoCompiler without
// one), named by its sources' hash and reused once built. It returns the
// library's path.
func BuildSchedule(dir string) (string, error) {
	return build(scheduleSources, "libkr_sched", []string{"kr_sched.c", "kr_sched_hook.c"}, dir, "the schedule recorder")
}

// ScheduleEnv returns the environment that loads the schedule recorder at
// lib into the measured process: LD_PRELOAD, lib before the libraries
// this process's LD_PRELOAD names (so that the recorder interposes the
// driver's entry points: hook mode, docs/whole-inference.md), and
// KREPLAY_SCHED_LIB, which tells kreplay's runner where it is, with a
// buffer of records calls (0: the library's default, 4M; 64 bytes each).
// A process recorded by the kernel recorder (Env) must not get it.
func ScheduleEnv(lib string, records int) []string {
	env := []string{"LD_PRELOAD=" + Preload(lib, os.Getenv("LD_PRELOAD")), "KREPLAY_SCHED_LIB=" + lib}
	if records > 0 {
		env = append(env, fmt.Sprintf("KREPLAY_SCHED_RECORDS=%d", records))
	}
	return env
}

// Preload returns the LD_PRELOAD value that loads lib first, then the
// libraries of existing (colon- or space-separated, as the dynamic
// loader reads it), lib itself not twice.
func Preload(lib, existing string) string {
	list := []string{lib}
	for _, f := range strings.FieldsFunc(existing, func(r rune) bool { return r == ':' || r == ' ' }) {
		if f != lib {
			list = append(list, f)
		}
	}
	return strings.Join(list, ":")
}
