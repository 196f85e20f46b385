package roofline

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// synthID is a SYNTHETIC identity, not a real device's.
var synthID = Identity{GPU: "NVIDIA H100 80GB HBM3", UUID: "GPU-00000000-1111-2222-3333-444444444444", Driver: "580.65.06",
	CUDADriver: "13.0", CUBLAS: "12.9.1", CUBLASLt: "12.9.1", Method: MethodVersion}

// cachedPeaks are SYNTHETIC peaks of synthID as Measure would return them.
func cachedPeaks() *Peaks {
	p := synthPeaks()
	p.Identity = synthID
	p.MeasuredAt = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	p.Missing = map[string]string{"f8e4m3": "cublasLtMatmulAlgoGetHeuristic found no algorithm"}
	p.Runs = []Run{{Peak: "copy", Call: "cuMemcpyDtoDAsync 1024 MiB, device to device", Repeats: 10, BestNS: 1e6, MedianNS: 1.01e6, Rate: 2000}}
	p.HW = h100HW()
	return p
}

func TestCacheRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet")
	path := CacheFile(dir, synthID)
	if _, err := ReadCache(path, synthID); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no cache yet: %v, want fs.ErrNotExist", err)
	}
	want := cachedPeaks()
	if err := WriteCache(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCache(path, synthID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Identity != want.Identity || !got.MeasuredAt.Equal(want.MeasuredAt) || got.CopyGBps != want.CopyGBps ||
		len(got.TFLOPs) != 3 || got.TFLOPs["bf16"] != 800 || got.Missing["f8e4m3"] == "" || len(got.Runs) != 1 || got.Runs[0] != want.Runs[0] ||
		got.HW == nil || *got.HW != *want.HW {
		t.Errorf("read back %+v, want %+v", got, want)
	}
	if use, note := cached(path, got, nil); use != got || note != "cached in "+path {
		t.Errorf("cached: %v %q", use, note)
	}
	// Another identity: stale, measured again.
	other := synthID
	other.Driver = "590.10"
	_, err = ReadCache(path, other)
	if !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), path) {
		t.Errorf("other driver: %v, want ErrStale naming %s", err, path)
	}
	if use, note := cached(path, nil, err); use != nil || !strings.Contains(note, "another device identity") {
		t.Errorf("cached after a stale read: %v %q", use, note)
	}
}

// A corrupt cache file is an error that names the file and says what is
// wrong, never a panic; ForDevice then measures again (cached says so).
func TestCacheCorrupt(t *testing.T) {
	dir := t.TempDir()
	path := CacheFile(dir, synthID)
	good, err := os.ReadFile(writeGood(t, path))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, data, want string }{
		{"empty", "", "EOF"},
		{"garbage", "\x00\x01peaks", "invalid character"},
		{"truncated", string(good[:len(good)/2]), "unexpected EOF"},
		{"not an object", "[1, 2]", "cannot unmarshal array"},
		{"unknown field", `{"version": 1, "copy_gb": 3}`, "unknown field"},
		{"wrong type", strings.Replace(string(good), `"copy_gbps": 2000`, `"copy_gbps": "fast"`, 1), "cannot unmarshal string"},
		{"other version", strings.Replace(string(good), `"version": 1`, `"version": 2`, 1), "format version 2, want 1"},
		{"negative rate", strings.Replace(string(good), `"bf16": 800`, `"bf16": -800`, 1), `tflops["bf16"] -800`},
		{"no copy", strings.Replace(string(good), `"copy_gbps": 2000`, `"copy_gbps": 0`, 1), "copy_gbps 0"},
		{"no time", strings.Replace(string(good), `"measured_at": "2026-11-25T10:00:00Z"`, `"measured_at": "0001-01-01T00:00:00Z"`, 1), "no measured_at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := ReadCache(path, synthID)
			if p != nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadCache: %v, %v; want ErrCorrupt naming %s and saying %q", p, err, path, tc.want)
			}
			if use, note := cached(path, p, err); use != nil || !strings.Contains(note, "not a valid peaks cache") {
				t.Errorf("cached: %v %q, want to measure again", use, note)
			}
		})
	}
}

func writeGood(t *testing.T, path string) string {
	t.Helper()
	if err := WriteCache(path, cachedPeaks()); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestWriteCacheErrors(t *testing.T) {
	dir := t.TempDir()
	bad := cachedPeaks()
	bad.CopyGBps = 0
	if err := WriteCache(filepath.Join(dir, "p.json"), bad); err == nil || !strings.Contains(err.Error(), "p.json") {
		t.Errorf("invalid peaks: %v, want an error naming the file", err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	path := filepath.Join(file, "peaks.json") // a directory that is a file
	if err := WriteCache(path, cachedPeaks()); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("under a file: %v, want an error naming it", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "p.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("invalid peaks left a file: %v", err)
	}
}

func TestCacheFile(t *testing.T) {
	if got := CacheFile("/c", synthID); got != "/c/peaks-GPU-00000000-1111-2222-3333-444444444444.json" {
		t.Errorf("with a UUID: %s", got)
	}
	id := synthID
	id.UUID = ""
	if got := CacheFile("/c", id); got != "/c/peaks-NVIDIA_H100_80GB_HBM3-580.65.06.json" {
		t.Errorf("without a UUID: %s", got)
	}
	id.Driver = ""
	if got := CacheFile("/c", id); got != "/c/peaks-NVIDIA_H100_80GB_HBM3-cuda13.0.json" {
		t.Errorf("without NVML: %s", got)
	}
	id.GPU = "../../etc/x"
	if got := CacheFile("/c", id); filepath.Dir(got) != "/c" {
		t.Errorf("a name with slashes leaves the directory: %s", got)
	}
}

func TestModeFromEnv(t *testing.T) {
	for v, want := range map[string]Mode{"": Cached, "cache": Cached, "refresh": Refresh, "off": Off} {
		t.Setenv(EnvPeaks, v)
		if m, err := ModeFromEnv(); err != nil || m != want {
			t.Errorf("%s=%q: %v %v, want %v", EnvPeaks, v, m, err, want)
		}
	}
	t.Setenv(EnvPeaks, "always")
	if _, err := ModeFromEnv(); err == nil || !strings.Contains(err.Error(), `KREPLAY_PEAKS="always": want cache, refresh or off`) {
		t.Errorf("bad mode: %v", err)
	}
	if o, err := OptionsFromEnv(); err == nil || o.Mode != Cached {
		t.Errorf("OptionsFromEnv with a bad mode: %+v %v", o, err)
	}
}
