// Package inject records the kernel binaries a process launches, so that
// kreplay can replay the very kernels that ran.
//
// The recorder is a small C library (csrc/kr_inject.c and, for the kernels
// CUDA graphs run, csrc/kr_inject_graph.c; embedded) that the
// CUDA driver loads at cuInit through CUDA_INJECTION64_PATH. It subscribes
// to CUPTI's driver-API and resource callbacks and writes, into a
// directory: every module image the process loads, and for each launch
// made while armed (kr_inject_arm, called by the runner around one
// inference) its function, launch shape and attributes, its parameter
// buffer as launched (layout from cuFuncGetParamInfo), the device pointers
// in it with the allocation each points into, and the first bytes of each
// such buffer as the kernel found them, each process in a file of its own.
// CUPTI takes one subscriber per
// process, and the PyTorch profiler is one: the recorder runs in a process
// of its own, and its launches are matched to the profiled trace's kernels
// by order, name and launch shape (package signatures).
//
// Build compiles the library with the system C compiler; ReadDir parses
// what it wrote; Pack keeps what a bundle needs.
//
// The schedule recorder (csrc/kr_sched.c, csrc/kr_sched_hook.c;
// BuildSchedule, ScheduleEnv) is a second, light library, preloaded into
// the processes that measure a workload: it interposes dlsym and, through
// it and cuGetProcAddress, the driver's entry points, and while the runner
// arms it records the host's driver calls that launch, copy, set,
// synchronize, query, record and wait (their times, streams and
// arguments) and the runner's marks into a preallocated buffer, and
// flushes them as the text file of docs/whole-inference.md. Loaded only
// through CUDA_INJECTION64_PATH, it records through CUPTI's callbacks
// instead, subscribing only while it records.
package inject
