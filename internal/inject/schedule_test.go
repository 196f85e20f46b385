package inject

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The schedule recorder builds with the system C compiler, exports the
// entry points the driver and the runner call and nothing else, is reused
// once built, and is a library of its own beside the kernel recorder.
func TestBuildSchedule(t *testing.T) {
	lib, dir, syms := buildReused(t, BuildSchedule)
	var funcs []string
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			funcs = append(funcs, s.Name)
		}
	}
	want := "InitializeInjection dlsym kr_sched_arm kr_sched_detach kr_sched_flush kr_sched_hooked kr_sched_mark kr_sched_pause kr_sched_stats"
	if got := strings.Join(sorted(funcs), " "); got != want {
		t.Errorf("%s exports functions %s, want %s", lib, got, want)
	}
	kernels, err := Build(dir)
	if err != nil || kernels == lib || !strings.HasPrefix(filepath.Base(kernels), "libkr_inject-") || !strings.HasPrefix(filepath.Base(lib), "libkr_sched-") {
		t.Errorf("kernel recorder %q (%v) beside the schedule recorder %q", kernels, err, lib)
	}
	t.Setenv("LD_PRELOAD", "/x/libother.so")
	env := strings.Join(ScheduleEnv(lib, 1000), " ")
	if env != "LD_PRELOAD="+lib+":/x/libother.so KREPLAY_SCHED_LIB="+lib+" KREPLAY_SCHED_RECORDS=1000" {
		t.Errorf("ScheduleEnv: %s", env)
	}
}

// Preload puts the recorder first, before what LD_PRELOAD named, once.
func TestPreload(t *testing.T) {
	for _, tc := range []struct{ existing, want string }{
		{"", "/k/lib.so"},
		{"/a.so", "/k/lib.so:/a.so"},
		{"/a.so /b.so", "/k/lib.so:/a.so:/b.so"},
		{"/a.so::/k/lib.so:/b.so", "/k/lib.so:/a.so:/b.so"},
	} {
		if got := Preload("/k/lib.so", tc.existing); got != tc.want {
			t.Errorf("Preload(%q) = %q, want %q", tc.existing, got, tc.want)
		}
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// runDriver compiles testdata/sched_driver.c, which includes the recorder
// with a clock that advances 100 ns a reading and stands in for CUPTI
// and the driver, runs its case and returns the file it flushed and what
// it printed.
func runDriver(t *testing.T, which string) (string, string) {
	t.Helper()
	cc, err := compiler()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "driver")
	if out, err := exec.Command(cc, "-O2", "-Wall", "-Werror", "-I", "csrc", "-o", bin, filepath.Join("testdata", "sched_driver.c"), "-ldl", "-lpthread").CombinedOutput(); err != nil {
		t.Fatalf("compiling the driver: %v\n%s", err, out)
	}
	path := filepath.Join(dir, "schedule.txt")
	out, err := exec.Command(bin, which, path).CombinedOutput()
	if err != nil {
		t.Fatalf("driver %s: %v\n%s", which, err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".tmp"); err == nil {
		t.Error("the flush left its temporary file")
	}
	return string(data), strings.TrimSpace(string(out))
}

const schedHeader = "kreplay-schedule 1\ncpu Fake CPU @ 2.00GHz\nclock CLOCK_MONOTONIC\nrecorder cupti\n" +
	"process 2 overhead_ns_per_inference 1000 armed_wall_ns 5000 measured_wall_ns 4000 overhead_ns_per_call 300\n"

// checkSchedule checks the file's form (docs/whole-inference.md): the
// header; name lines before the first use of their id; inferences
// numbered from 0, each from a mark 1 to a mark 3, with times from 0,
// each record's exit at or after its entry, and the end the last mark's
// exit. It returns the records of each inference.
func checkSchedule(t *testing.T, s string) [][]string {
	t.Helper()
	if !strings.HasPrefix(s, schedHeader) {
		t.Fatalf("header:\n%s", s)
	}
	names := map[string]bool{}
	var blocks [][]string
	in := false
	var last []string
	for i, line := range strings.Split(strings.TrimSuffix(s[len(schedHeader):], "\n"), "\n") {
		f := strings.Split(line, " ")
		bad := func(why string) { t.Errorf("line %d %q: %s", i+6, line, why) }
		switch f[0] {
		case "name":
			if in || len(f) < 3 || names[f[1]] {
				bad("a name line inside an inference, without a name, or again")
			}
			names[f[1]] = true
		case "inference":
			if in || len(f) != 4 && (len(f) != 5 || f[4] != "fresh") || f[1] != strconv.Itoa(len(blocks)) || f[2] != "start" {
				bad("not the next inference's start")
			}
			in = true
			blocks = append(blocks, nil)
		case "end":
			if !in || len(f) != 3 || f[1] != strconv.Itoa(len(blocks)-1) || len(last) < 4 || f[2] != last[2] || last[0] != "M" || last[3] != "3" {
				bad("an end not after its inference's mark 3, or not at its exit")
			}
			in = false
		default:
			if !in {
				bad("a record outside an inference")
				continue
			}
			t0, err0 := strconv.ParseUint(f[1], 10, 64)
			t1, err1 := strconv.ParseUint(f[2], 10, 64)
			if err0 != nil || err1 != nil || t1 < t0 {
				bad("times")
			}
			b := &blocks[len(blocks)-1]
			if len(*b) == 0 && (line != "M 0 100 1") {
				bad("an inference that does not start with its mark 1 at 0")
			}
			if f[0] == "L" && !names[f[4]] {
				bad("a launch before its name line")
			}
			*b = append(*b, line)
			last = f
		}
	}
	if in {
		t.Error("the last inference has no end")
	}
	return blocks
}

// The flushed file of every kind of call recorded, in two inferences,
// with calls outside them, an inference without its end, calls neither
// armed nor recorded, is the design's format, line for line as
// testdata/schedule_calls.golden holds it.
func TestScheduleFlush(t *testing.T) {
	s, out := runDriver(t, "calls")
	if out != "flush 2 stats 5: records 29 lost 0 outside 4 incomplete 1 other 0" {
		t.Errorf("driver: %s", out)
	}
	blocks := checkSchedule(t, s)
	if len(blocks) != 2 || len(blocks[0]) != 21 || len(blocks[1]) != 4 {
		t.Errorf("inferences of %v records", blocks)
	}
	kinds := ""
	for _, b := range blocks {
		for _, l := range b {
			kinds += l[:1]
		}
	}
	if kinds != "MLLLCCCCCSSGREMQQWWWM"+"MLLM" {
		t.Errorf("kinds in order %s", kinds)
	}
	for _, want := range []string{
		"name 0 _Z4gemmPfS_\n", "name 2 _Z6kernelv\n", "name 3 ?\n", // a CUkernel's name through its function; none
		"L 200 300 0x0 0 80,2,1 128,1,1\n",  // CU_STREAM_LEGACY is stream 0
		"L 400 500 0x2 1 4,2,1 128,1,1\n",   // a _ptsz call's stream 0 is the per-thread one
		"C 1000 1100 0x0 8 DtoH async\n",    // a unified copy's direction asked of the driver
		"C 1200 1300 0x2 16 DtoH sync\n",    // synchronous, _ptds
		"C 1400 1500 0x7a 192 DtoD async\n", // 2D, 64 x 3 bytes
		"C 1600 1700 0x0 80 HtoD sync\n",    // 3D, into an array
		"S 1800 1900 0x7a 4000 async\nS 2000 2100 0x0 300 sync\n",
		"G 2200 2300 0x7a 0xabc0\nR 2400 2500 0xe1 0x7a\nE 2600 2700 0x0 0xe1\nM 2800 2900 2\n",
		"Q 3000 3100 s 0x7a ready\nQ 3200 3300 e 0xe1 notready\nW 3400 3500 s 0x7a\nW 3600 3700 e 0xe1\nW 3800 3900 c 0x0\n",
		"end 0 4100\n", "inference 1 start 1004700\n", "end 1 700\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the file lacks %q", want)
		}
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "schedule_calls.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if s != string(golden) {
		t.Errorf("the file differs from testdata/schedule_calls.golden:\n%s", s)
	}
}

// Calls past the buffer's end are counted as lost, never written; an
// inference whose end was lost is left out.
func TestScheduleOverflow(t *testing.T) {
	s, out := runDriver(t, "small")
	if s != schedHeader {
		t.Errorf("file:\n%s", s)
	}
	if out != "flush 0 stats 5: records 3 lost 4 outside 3 incomplete 1 other 0" {
		t.Errorf("driver: %s", out)
	}
}

// Names get ids in their order of first use, one line each, however many
// functions run.
func TestScheduleManyNames(t *testing.T) {
	s, out := runDriver(t, "many")
	if out != "flush 1 stats 5: records 3005 lost 0 outside 0 incomplete 0 other 0" {
		t.Errorf("driver: %s", out)
	}
	checkSchedule(t, s)
	if n := strings.Count(s, "\nname "); n != 3000 {
		t.Errorf("%d name lines, want 3000", n)
	}
	for i := range 3000 {
		if !strings.Contains(s, fmt.Sprintf("\nname %d k%d\n", i, i)) {
			t.Fatalf("no line name %d k%d", i, i)
		}
	}
	for _, id := range []int{0, 1000, 2000} {
		if !strings.Contains(s, fmt.Sprintf(" 0x0 %d 2,2,1 128,1,1\n", id)) {
			t.Errorf("the second launch of function %d does not reuse its id", id)
		}
	}
}

// Recording paused (CUPTI let go of) and resumed with kr_sched_arm(2)
// appends: both inferences are written, nothing of the pause; the one
// after a block's mark (4) is fresh.
func TestSchedulePauseResume(t *testing.T) {
	s, out := runDriver(t, "resume")
	if out != "flush 2 stats 5: records 7 lost 0 outside 0 incomplete 0 other 0" {
		t.Errorf("driver: %s", out)
	}
	if !regexp.MustCompile(`\ninference 0 start \d+\n`).MatchString(s) || !regexp.MustCompile(`\ninference 1 start \d+ fresh\n`).MatchString(s) {
		t.Errorf("want inference 1 alone fresh (after the block's mark):\n%s", s)
	}
	blocks := checkSchedule(t, s)
	if len(blocks) != 2 || len(blocks[0]) != 3 || len(blocks[1]) != 3 {
		t.Fatalf("inferences of %v records", blocks)
	}
	if !strings.HasPrefix(blocks[0][1], "L ") || !strings.Contains(blocks[0][1], " 1,2,1 ") || !strings.Contains(blocks[1][1], " 2,2,1 ") {
		t.Errorf("launches %q, %q: want grid 1 then 2 (the paused one, grid 3, unrecorded)", blocks[0][1], blocks[1][1])
	}
}

// Only the arming thread's calls are recorded: another thread's launches
// and event polls (a watchdog's) are left out and counted, so that the
// inference's records keep their order.
func TestScheduleOtherThreads(t *testing.T) {
	s, out := runDriver(t, "threads")
	if out != "flush 1 stats 5: records 4 lost 0 outside 0 incomplete 0 other 6" {
		t.Errorf("driver: %s", out)
	}
	blocks := checkSchedule(t, s)
	if len(blocks) != 1 || len(blocks[0]) != 4 || strings.Contains(s, " 9,2,1 ") || strings.Contains(s, "0xe9") {
		t.Errorf("want the main thread's two launches alone:\n%s", s)
	}
}

// kr_sched_types.h and the parameter words kr_sched.c reads agree with
// cuda.h and CUPTI's headers, where they are installed (the GPU
// machines): kr_sched_check.c compiles only if they do.
func TestScheduleTypesAgainstHeaders(t *testing.T) {
	headers := map[string][]byte{}
	for _, h := range []string{"kr_inject_types.h", "kr_sched_types.h", "kr_sched_calls.h"} {
		headers[h] = ScheduleSource(h)
	}
	compileCheck(t, "kr_sched_check.c", headers)
}

// runHooked builds the schedule recorder, the stand-in driver
// (testdata/fake_cuda.c, as libcuda.so.1) and testdata/hook_driver.c, runs
// the driver with the recorder preloaded (LD_PRELOAD) and returns the file
// it flushed and what it printed.
func runHooked(t *testing.T) (string, string) {
	t.Helper()
	cc, err := compiler()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	lib, err := BuildSchedule(dir)
	if err != nil {
		t.Fatal(err)
	}
	cuda, bin := filepath.Join(dir, "libcuda.so.1"), filepath.Join(dir, "hook_driver")
	for _, args := range [][]string{
		{"-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", cuda, filepath.Join("testdata", "fake_cuda.c")},
		{"-O2", "-Wall", "-Werror", "-o", bin, filepath.Join("testdata", "hook_driver.c"), "-ldl", "-lpthread"},
	} {
		if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			t.Fatalf("cc %v: %v\n%s", args, err, out)
		}
	}
	path := filepath.Join(dir, "schedule.txt")
	cmd := exec.Command(bin, cuda, path)
	cmd.Env = append(os.Environ(), ScheduleEnv(lib, 1000)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hook driver: %v\n%s", err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), strings.TrimSpace(string(out))
}

// timesOut checks that each record's exit is at or after its entry and
// that records follow in time, and returns the file with the times of
// records, inferences' starts and ends as "t".
func timesOut(t *testing.T, s string) string {
	t.Helper()
	lines := strings.Split(s, "\n")
	var prev uint64
	for i, line := range lines {
		f := strings.Split(line, " ")
		switch {
		case len(f) > 2 && len(f[0]) == 1:
			t0, err0 := strconv.ParseUint(f[1], 10, 64)
			t1, err1 := strconv.ParseUint(f[2], 10, 64)
			if err0 != nil || err1 != nil || t1 < t0 || t0 < prev {
				t.Errorf("line %q: times out of order", line)
			}
			prev = t0
			f[1], f[2] = "t", "t"
		case f[0] == "inference" && len(f) > 3:
			f[3], prev = "t", 0
		case f[0] == "end" && len(f) == 3:
			f[2] = "t"
		}
		lines[i] = strings.Join(f, " ")
	}
	return strings.Join(lines, "\n")
}

// Preloaded, the recorder interposes the driver's entry points found
// through dlsym and cuGetProcAddress_v2 (for CUDA 12.0 on, or for an older
// version that gets the same function; an older ABI passes through,
// counted; a later ABI is its _v2's; a second definition of a wrapped
// call gets the wrapper, which calls the first, counted), records the
// arming thread's calls with their arguments intact, leaves another
// thread's out, counted, and passes every other lookup and every
// disarmed call through: testdata/hook_driver.c checks the calls, the
// file is testdata/schedule_hook.golden but for its times.
func TestScheduleHooked(t *testing.T) {
	s, out := runHooked(t)
	if out != "flush 1 hooked 11 stats 7: records 18 lost 0 outside 4 incomplete 0 other 2 old 1 second 1" {
		t.Errorf("driver: %s", out)
	}
	got := timesOut(t, s)
	golden, err := os.ReadFile(filepath.Join("testdata", "schedule_hook.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if got != string(golden) {
		t.Errorf("the file, times out, differs from testdata/schedule_hook.golden:\n%s", got)
	}
}
