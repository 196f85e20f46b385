package inject

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The recorder builds with the system C compiler from its two sources,
// exports the entry points the driver and the runner call and nothing
// else, and is reused once built.
func TestBuild(t *testing.T) {
	lib, _, syms := buildReused(t, Build)
	have := map[string]bool{}
	for _, s := range syms {
		have[s.Name] = true
	}
	for _, want := range []string{"InitializeInjection", "kr_inject_arm", "kr_inject_flush", "kr_inject_detach"} {
		if !have[want] {
			t.Errorf("%s does not export %s", lib, want)
		}
	}
	// What its two sources share stays inside (a process that loads it
	// has names of its own).
	for _, internal := range []string{"mu", "events", "seq", "seen_add", "snapshot", "capture_of", "graph_launch"} {
		if have[internal] {
			t.Errorf("%s exports %s", lib, internal)
		}
	}
}

// kr_inject_types.h agrees with cuda.h and CUPTI's headers, where they are
// installed (the GPU machines): kr_inject_check.c compiles only if it does.
func TestTypesAgainstHeaders(t *testing.T) {
	compileCheck(t, "kr_inject_check.c", map[string][]byte{"kr_inject_types.h": TypesHeader()})
}

// writeModule writes an ELF object defining the functions names into the
// capture's modules directory and returns its hash.
func writeModule(t *testing.T, dir string, names ...string) string {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no cc to make an ELF module")
	}
	var src strings.Builder
	for _, n := range names {
		fmt.Fprintf(&src, "void %s(void) {}\n", n)
	}
	c := filepath.Join(t.TempDir(), "m.c")
	o := c + ".o"
	os.WriteFile(c, []byte(src.String()), 0o644)
	if out, err := exec.Command("cc", "-c", "-o", o, c).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v %s", err, out)
	}
	data, _ := os.ReadFile(o)
	h := fnv.New64a()
	h.Write(data)
	hash := fmt.Sprintf("%016x", h.Sum64())
	os.MkdirAll(filepath.Join(dir, "modules"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "modules", hash+".cubin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return hash
}

type line map[string]any

func writeEvents(t *testing.T, dir string, lines ...line) {
	t.Helper()
	var b bytes.Buffer
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(append(j, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, "events-1.jsonl"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func launchLine(key string, seq int, name string, ptrs ...line) line {
	return line{"t": "K", "key": key, "seq": seq, "api": "cuLaunchKernel", "name": name,
		"grid": []int{4, 1, 1}, "block": []int{128, 1, 1}, "smem": 0, "regs": 16,
		"params": [][2]int{{0, 8}, {8, 4}}, "blob": "0010000000000000" + "2a000000", "ptrs": ptrs}
}

// A launch takes the module loaded last before it that defines its
// function; Pack keeps the modules and launches the calls use, and the
// snapshots after the policy.
func TestPackResolvesModules(t *testing.T) {
	dir := t.TempDir()
	old := writeModule(t, dir, "triton_poi_fused_add_0", "other")
	newer := writeModule(t, dir, "triton_poi_fused_add_0")
	unused := writeModule(t, dir, "unused_kernel")
	os.MkdirAll(filepath.Join(dir, "snaps"), 0o755)
	zeros := make([]byte, 64<<10)
	random := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	snap := func(b []byte) string {
		h := fnv.New64a()
		h.Write(b)
		s := fmt.Sprintf("%016x", h.Sum64())
		os.WriteFile(filepath.Join(dir, "snaps", s+".bin"), b, 0o644)
		return s
	}
	zs, rs := snap(zeros), snap(random)
	// A 1 MiB mask, past the recorder's limit: extended, as its first
	// bytes are runs.
	mask := make([]byte, 1<<20)
	for i := 0; i < 1024; i++ {
		for j := 0; j <= i; j++ {
			mask[i*1024+j] = 1
		}
	}
	ms := snap(mask)
	ptr := func(snap string, n int) line {
		return line{"off": 0, "value": 4096, "base": 4096, "range": 1 << 20, "group": 0, "snap": snap, "snap_len": n}
	}
	writeEvents(t, dir,
		line{"t": "I", "snap_bytes": 262144},
		line{"t": "M", "seq": 1, "id": 1, "hash": old, "size": 1},
		line{"t": "M", "seq": 2, "id": 2, "hash": unused, "size": 1},
		line{"t": "A", "seq": 3, "on": 1},
		launchLine("aaaa", 4, "triton_poi_fused_add_0", ptr(zs, len(zeros))),
		line{"t": "L", "seq": 4, "key": "aaaa", "stream": 7, "p": []uint64{4096}},
		line{"t": "M", "seq": 5, "id": 3, "hash": newer, "size": 1},
		launchLine("bbbb", 6, "triton_poi_fused_add_0", ptr(rs, len(random))),
		line{"t": "L", "seq": 6, "key": "bbbb", "stream": 7, "p": []uint64{4096}},
		line{"t": "L", "seq": 7, "key": "aaaa", "stream": 7, "p": []uint64{8192}},
		line{"t": "L", "seq": 8, "key": "", "stream": 7, "error": "function has no name"},
		launchLine("cccc", 9, "nobody_defines_me"),
		line{"t": "L", "seq": 9, "key": "cccc", "stream": 7},
		launchLine("dddd", 10, "triton_poi_fused_add_0", ptr(ms, len(mask))),
		line{"t": "L", "seq": 10, "key": "dddd", "stream": 7, "p": []uint64{4096}},
	)
	c, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Calls) != 6 || c.SnapBytes != 262144 || len(c.Modules) != 3 {
		t.Fatalf("read %d calls, %d modules, snap bytes %d", len(c.Calls), len(c.Modules), c.SnapBytes)
	}
	dst := filepath.Join(t.TempDir(), "kernels")
	x, err := Pack(c, dst)
	if err != nil {
		t.Fatal(err)
	}
	if got := x.Launch("aaaa").Module; got != old {
		t.Errorf("launch before the newer module took %s, want %s", got, old)
	}
	if got := x.Launch("bbbb"); got.Module != newer || !reflect.DeepEqual(got.Alternatives, []string{old}) {
		t.Errorf("launch after the newer module took %s, alternatives %v; want %s, [%s]", got.Module, got.Alternatives, newer, old)
	}
	if want := [][]uint64{{4096}, {4096}, {8192}, nil, nil, {4096}}; !reflect.DeepEqual(x.CallPtrs, want) {
		t.Errorf("call pointers %v, want %v", x.CallPtrs, want)
	}
	if x.Launch("cccc").Module != "" || !strings.Contains(strings.Join(x.Notes, "\n"), "no loaded module defines nobody_defines_me") {
		t.Errorf("unresolved launch: module %q, notes %v", x.Launch("cccc").Module, x.Notes)
	}
	if want := []string{"aaaa", "bbbb", "aaaa", "", "cccc", "dddd"}; strings.Join(x.Calls, ",") != strings.Join(want, ",") {
		t.Errorf("calls %v, want %v", x.Calls, want)
	}
	// Zeros compress: kept whole. Random bytes do not: a 4 KiB sample.
	if p := x.Launch("aaaa").Ptrs[0]; p.SnapLen != len(zeros) || p.Snap != zs || !p.Whole {
		t.Errorf("zeros snapshot packed as %s/%d", p.Snap, p.SnapLen)
	}
	p := x.Launch("bbbb").Ptrs[0]
	got, err := ReadSnapshot(os.DirFS(dst), p.Snap)
	if err != nil || p.SnapLen != sampleBytes || p.Whole || !bytes.Equal(got, random[:sampleBytes]) {
		t.Errorf("random snapshot packed as %s/%d (%d bytes read, %v)", p.Snap, p.SnapLen, len(got), err)
	}
	// The extended mask deflates: kept whole, every byte.
	if p := x.Launch("dddd").Ptrs[0]; p.SnapLen != len(mask) || p.Snap != ms || !p.Whole {
		t.Errorf("extended mask snapshot packed as %s/%d, whole %v", p.Snap, p.SnapLen, p.Whole)
	}
	// Only the modules the launches use are kept, and they read back.
	for _, h := range []string{old, newer} {
		if _, err := ReadModule(os.DirFS(dst), h); err != nil {
			t.Error(err)
		}
	}
	if _, err := ReadModule(os.DirFS(dst), unused); err == nil {
		t.Error("the unused module was packed")
	}
	back, err := ReadIndex(os.DirFS(dst))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Launches) != 4 || !bytes.Equal(back.Launch("aaaa").Blob, x.Launch("aaaa").Blob) || !reflect.DeepEqual(back.CallPtrs, x.CallPtrs) {
		t.Errorf("index read back with %d launches", len(back.Launches))
	}
}

// Bad recorder output is an error naming the file and line.
func TestReadDirErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []line
		want  string
	}{
		{"unknown event", []line{{"t": "Z"}}, `events-1.jsonl:1: unknown event "Z"`},
		{"call of unknown key", []line{{"t": "L", "seq": 1, "key": "feed"}}, "events-1.jsonl:1: launch of unknown key feed"},
		{"pointer outside", []line{launchLine("k", 1, "f", line{"off": 100, "value": 1, "base": 1, "range": 1, "group": 0})}, "events-1.jsonl:1: launch k: pointer at 100"},
		{"param outside", []line{{"t": "K", "key": "k", "name": "f", "params": [][2]int{{0, 64}}, "blob": "00"}}, "parameter (0, 64) outside its 1-byte buffer"},
		{"inner in no pointer", []line{line{"t": "K", "key": "k", "name": "f", "params": [][2]int{{0, 8}}, "blob": "0000000000000000",
			"ptrs": []line{{"off": 0, "value": 4096, "base": 4096, "range": 64, "group": 0}}, "inner": []line{{"in": 1, "at": 8, "value": 8192, "base": 8192, "range": 64}}}}, "inner pointer 0 in pointer 1 at 8: no such pointer"},
		{"inner outside its allocation", []line{line{"t": "K", "key": "k", "name": "f", "params": [][2]int{{0, 8}}, "blob": "0000000000000000",
			"ptrs": []line{{"off": 0, "value": 4096, "base": 4096, "range": 64, "group": 0}}, "inner": []line{{"in": 0, "at": 8, "value": 12288, "base": 4096, "range": 4096}}}}, "inner pointer 0 (0x3000) outside its allocation [0x1000, +4096)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeEvents(t, dir, tc.lines...)
			_, err := ReadDir(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "events-2.jsonl"), []byte("{\"t\":\"I\"}\n{\"t\":\"M\",\"se"), 0o644)
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "events-2.jsonl:2:") {
		t.Errorf("truncated line: %v", err)
	}
}

// An inner pointer's snapshot is packed by the policy as a parameter's, and
// the launch reads back with it.
func TestPackInner(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "snaps"), 0o755)
	random := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	h := fnv.New64a()
	h.Write(random)
	rs := fmt.Sprintf("%016x", h.Sum64())
	os.WriteFile(filepath.Join(dir, "snaps", rs+".bin"), random, 0o644)
	k := launchLine("aaaa", 2, "grouped_gemm", line{"off": 0, "value": 4096, "base": 4096, "range": 1 << 20, "group": 0})
	k["inner"] = []line{{"in": 0, "at": 16, "value": 1 << 40, "base": 1 << 40, "range": 1 << 20, "snap": rs, "snap_len": len(random)}}
	writeEvents(t, dir, line{"t": "A", "seq": 1, "on": 1}, k, line{"t": "L", "seq": 2, "key": "aaaa", "stream": 7, "p": []uint64{4096}})
	c, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "kernels")
	if _, err := Pack(c, dst); err != nil {
		t.Fatal(err)
	}
	back, err := ReadIndex(os.DirFS(dst))
	if err != nil {
		t.Fatal(err)
	}
	in := back.Launch("aaaa").Inner
	if len(in) != 1 || in[0].In != 0 || in[0].At != 16 || in[0].Value != 1<<40 || in[0].SnapLen != sampleBytes || in[0].Whole {
		t.Fatalf("inner pointers read back as %+v", in)
	}
	if got, err := ReadSnapshot(os.DirFS(dst), in[0].Snap); err != nil || !bytes.Equal(got, random[:sampleBytes]) {
		t.Errorf("inner snapshot: %d bytes, %v", len(got), err)
	}
}

// Only the process that armed the recorder counts; none or two is an error.
func TestReadDirArmedProcess(t *testing.T) {
	dir := t.TempDir()
	write := func(pid int, lines ...line) {
		var b bytes.Buffer
		for _, l := range lines {
			j, _ := json.Marshal(l)
			b.Write(append(j, '\n'))
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("events-%d.jsonl", pid)), b.Bytes(), 0o644)
	}
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "no events file") {
		t.Errorf("empty dir: %v", err)
	}
	write(10, line{"t": "I"}, line{"t": "M", "seq": 1, "hash": "aa", "size": 1})
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "no process armed") {
		t.Errorf("unarmed: %v", err)
	}
	write(11, line{"t": "A", "seq": 1, "on": 1}, launchLine("k", 2, "f"), line{"t": "L", "seq": 2, "key": "k"}, line{"t": "A", "seq": 3, "on": 0})
	c, err := ReadDir(dir)
	if err != nil || len(c.Calls) != 1 {
		t.Fatalf("armed process: %v, %+v", err, c)
	}
	write(12, line{"t": "A", "seq": 1, "on": 1})
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "2 processes armed") {
		t.Errorf("two armed: %v", err)
	}
}

// A corrupt index is refused with the reason.
func TestReadIndexErrors(t *testing.T) {
	for _, tc := range []struct{ index, want string }{
		{`{"version": 9}`, "version 9"},
		{`{"version": 1, "launches": [{"key": "b"}, {"key": "a"}]}`, "not sorted"},
		{`{"version": 1, "launches": [{"key": "a"}], "calls": ["a", "b"]}`, "unknown launch b"},
		{`{"version": 1, "launches": [{"key": "a", "blob": "zz"}]}`, "index.json:"},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "index.json"), []byte(tc.index), 0o644)
		if _, err := ReadIndex(os.DirFS(dir)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.index, err, tc.want)
		}
	}
}

// FuzzReadEvents: no recorder line makes the reader panic.
func FuzzReadEvents(f *testing.F) {
	for _, s := range []string{
		`{"t":"K","key":"k","name":"f","params":[[0,8]],"blob":"0000000000000000","ptrs":[{"off":0,"value":1,"base":1,"range":8,"group":0}]}`,
		`{"t":"L","seq":1,"key":"","error":"x"}`, `{"t":"M","seq":1,"hash":"ab","size":3}`, `{"t":"K","key":"k","name":"f","ptrs":[{"off":-8,"group":5}]}`,
		`{"t":"K","key":"k","name":"f","params":[[0,8]],"blob":"0000000000000000","ptrs":[{"off":0,"value":4096,"base":4096,"range":64,"group":0}],"inner":[{"in":0,"at":8,"value":8192,"base":8192,"range":64}],"inner_dropped":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "events-1.jsonl"), append([]byte(`{"t":"A","on":1}`+"\n"), data...), 0o644)
		c, err := ReadDir(dir)
		if err != nil {
			return
		}
		for _, l := range c.Launches {
			for _, p := range l.Ptrs {
				_ = l.Blob[p.Off : p.Off+8]
			}
			for _, q := range l.Inner {
				_ = l.Ptrs[q.In]
			}
		}
	})
}

// A launch whose recorded image (module_hash) defines its function with
// other registers than the launch's is matched as one without: the image
// whose registers match comes first, the recorded one after it. Real
// Triton cubins: two autotuning configurations of one kernel, 10 and 8
// registers.
func TestResolveLoadedRegisters(t *testing.T) {
	const name = "triton_poi_fused__to_copy_add_arange_unsqueeze_2"
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "modules"), 0o755)
	ten, eight := "5170c6bc6be513ac", "f99d54e889a331f2"
	for _, h := range []string{ten, eight} {
		image, err := ReadModule(os.DirFS("testdata"), h)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "modules", h+".cubin"), image, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	launch := func(key string, seq, regs int, loaded string) line {
		l := launchLine(key, seq, name)
		l["regs"], l["module_hash"] = regs, loaded
		return l
	}
	writeEvents(t, dir,
		line{"t": "M", "seq": 1, "id": 1, "hash": ten, "size": 1},
		line{"t": "M", "seq": 2, "id": 2, "hash": eight, "size": 1},
		line{"t": "A", "seq": 3, "on": 1},
		launch("aaaa", 4, 10, eight), // recorded with the 8-register image
		line{"t": "L", "seq": 4, "key": "aaaa", "stream": 7},
		launch("bbbb", 5, 8, eight),
		line{"t": "L", "seq": 5, "key": "bbbb", "stream": 7},
	)
	c, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := c.ResolveModules()
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]*Launch{}
	for _, l := range c.Launches {
		byKey[l.Key] = l
	}
	if a := byKey["aaaa"]; a == nil || a.Module != ten || !reflect.DeepEqual(a.Alternatives, []string{eight}) {
		t.Errorf("launch of 10 registers recorded with the 8-register image: %+v", a)
	}
	if b := byKey["bbbb"]; b == nil || b.Module != eight || b.Alternatives != nil {
		t.Errorf("launch of 8 registers: %+v", b)
	}
	if j := strings.Join(notes, "\n"); !strings.Contains(j, "has 8 registers, the launch 10") || !strings.Contains(j, "1 of 2 unique launches name the very image") {
		t.Errorf("notes:\n%s", j)
	}
}

// The snapshot policy keeps whole what steers a kernel, and the token
// ids a snapshot begins with, not random floats past a sample.
func TestSnapshotPolicy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ints := func(n, size int, below uint64) []byte {
		b := make([]byte, n*size)
		for i := 0; i < n; i++ {
			v := r.Uint64N(below)
			for j := 0; j < size; j++ {
				b[i*size+j] = byte(v >> (8 * j))
			}
		}
		return b
	}
	floats := func(n int) []byte { // f32 N(0, 1)
		b := make([]byte, 4*n)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(r.NormFloat64())))
		}
		return b
	}
	f16 := make([]byte, 32<<10)
	for i := 0; i < len(f16); i += 2 {
		// Half-precision values of magnitude 2^-8 to 2^7: exponent bits set.
		binary.LittleEndian.PutUint16(f16[i:], uint16(r.Uint32N(0x7800-0x1c00)+0x1c00)|uint16(r.Uint32N(2))<<15)
	}
	cat := func(b ...[]byte) []byte { return bytes.Join(b, nil) }
	for _, tc := range []struct {
		name string
		data []byte
		keep int
	}{
		{"small", floats(4096), 16 << 10},
		{"zeros", make([]byte, 64<<10), 64 << 10},
		{"int64 token ids under 128256 (2 x 2048), alone", ints(4096, 8, 128256), 32 << 10},
		{"int64 token ids, then f32 activations", cat(ints(4096, 8, 128256), floats(8192)), 32 << 10},
		{"int32 block table under 2^20, then f16", cat(ints(6000, 4, 1<<20), f16), 24000},
		{"int32 ids alone, an odd count", ints(5001, 4, 1<<20), 20004},
		{"a few ids, then f32: the sample", cat(ints(64, 8, 128256), floats(16384)), 4 << 10},
		{"f32 activations", floats(16384), 4 << 10},
		{"f16 activations", f16, 4 << 10},
		{"int32 values of 2^24 and more", ints(8192, 4, 1<<31), 4 << 10},
	} {
		if got := len(keep(tc.data)); got != tc.keep {
			t.Errorf("%s (%d bytes): keeps %d, want %d", tc.name, len(tc.data), got, tc.keep)
		}
	}
}

// The recorder extends a snapshot of runs as far as Pack expects.
func TestRunsCapIsRecorders(t *testing.T) {
	h, err := sources.ReadFile("csrc/kr_inject.h")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("#define KR_RUNS_CAP (%d << 20)", runsCap>>20); !strings.Contains(string(h), want) {
		t.Errorf("kr_inject.h does not say %q", want)
	}
}

// A snapshot the recorder extended (its first bytes mostly runs) is kept
// whole when it is a mask; causally masked scores, which do not deflate
// to a quarter, give a sample of all of them, with their share of mask,
// where their first bytes are almost all mask.
func TestKeepRuns(t *testing.T) {
	const low = 0xfbff // f16's lowest value, the mask GPT-2 writes
	const s = 512      // keys per row; rows of one head
	r := rand.New(rand.NewPCG(7, 8))
	mask := make([]byte, 1024*1024) // a causal bool mask, 1024 x 1024
	for i := 0; i < 1024; i++ {
		for j := 0; j <= i; j++ {
			mask[i*1024+j] = 1
		}
	}
	if got := keepRuns(mask); len(got) != len(mask) {
		t.Errorf("a causal mask keeps %d of %d bytes, want all", len(got), len(mask))
	}
	scores := make([]byte, runsCap) // 16 heads of masked f16 scores
	for k := 0; k < len(scores)/2; k++ {
		i, j := k/s%s, k%s
		v := uint16(low)
		if j <= i {
			v = uint16(r.Uint32N(0x7800-0x1c00)+0x1c00) | uint16(r.Uint32N(2))<<15
		}
		binary.LittleEndian.PutUint16(scores[2*k:], v)
	}
	share := func(b []byte) float64 {
		n := 0
		for k := 0; k+2 <= len(b); k += 2 {
			if binary.LittleEndian.Uint16(b[k:]) == low {
				n++
			}
		}
		return float64(n) / float64(len(b)/2)
	}
	got := keepRuns(scores)
	if len(got) != sampleBytes || share(got) < 0.4 || share(got) > 0.6 {
		t.Errorf("masked scores keep %d bytes, %.0f%% mask; want %d, about half", len(got), 100*share(got), sampleBytes)
	}
	if head := share(scores[:sampleBytes]); head < 0.95 {
		t.Errorf("the scores' first bytes are %.0f%% mask, want almost all (the case this is for)", 100*head)
	}
}

// The recorder searches for inner pointers in as many bytes of each buffer
// as Pack keeps whole: beyond them a bundle keeps a sample, and stale
// pointers there were never the kernel's.
func TestInnerScanIsSmallSnap(t *testing.T) {
	h, err := sources.ReadFile("csrc/kr_inject.h")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("#define KR_INNER_SCAN (%d << 10)", smallSnap>>10)
	if !strings.Contains(string(h), want) || smallSnap%(1<<10) != 0 {
		t.Errorf("kr_inject.h does not say %q", want)
	}
}
