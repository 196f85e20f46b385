package predict

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/kreplay/kreplay/replay"
)

// The lines of the one machine, written as machine lines ("# key:
// value", bench.WriteConfig), are read as the configuration they stand
// for: the GPU's UUID and its peaks.
func TestReadResultsMachineLines(t *testing.T) {
	out := "gpu: NVIDIA H100 80GB HBM3\n# gpu-uuid: GPU-1234\n# peak-copy-gbps: 3000.5\n# peak-f16-tflops: 750.0\n" +
		"# peaks-measured: 2026-11-25T03:23:23Z\nBenchmarkReplay/workload=w_prefill/sig=0123456789ab-4\t1\t5.0 ns/op\n"
	rs, err := ReadResults([]Input{input("m.bench", out)})
	if err != nil {
		t.Fatal(err)
	}
	w := rs.Workload("w_prefill")
	if w == nil || w.Config["gpu-uuid"] != "GPU-1234" || w.Config["gpu"] != "NVIDIA H100 80GB HBM3" {
		t.Fatalf("configuration %+v", w)
	}
	if w.Peaks == nil || w.Peaks.CopyGBps != 3000.5 || w.Peaks.TFLOPs["f16"] != 750 || w.Peaks.MeasuredAt.IsZero() {
		t.Errorf("peaks %+v", w.Peaks)
	}
}

// ReadFiles reads a gzip'ed output as the plain one.
func TestReadFilesGzip(t *testing.T) {
	plain := filepath.Join("testdata", "h100-bloom-560m_prefill.bench")
	data, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	gz := filepath.Join(t.TempDir(), "x.bench.gz")
	if err := os.WriteFile(gz, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := ReadFiles([]string{gz, plain})
	if err != nil {
		t.Fatal(err)
	}
	var got [2]bytes.Buffer
	for i := range in {
		got[i].ReadFrom(in[i].Reader)
	}
	if !bytes.Equal(got[0].Bytes(), data) || !bytes.Equal(got[1].Bytes(), data) {
		t.Errorf("read %d and %d bytes, want %d each", got[0].Len(), got[1].Len(), len(data))
	}
	bad := filepath.Join(t.TempDir(), "bad.bench.gz")
	os.WriteFile(bad, []byte{0x1f, 0x8b, 0, 1, 2}, 0o644)
	if _, err := ReadFiles([]string{bad}); err == nil || !bytes.Contains([]byte(err.Error()), []byte(bad)) {
		t.Errorf("a broken gzip file: %v", err)
	}
}

// Two runs on two GPUs of one model (their UUIDs and peaks differ) have
// the same configuration for benchstat (benchproc's .config, its default
// table), and ReadResults still reads each one's UUID.
func TestWriteBenchMachineLines(t *testing.T) {
	set := prefillSet(t)
	var outs [2]bytes.Buffer
	for i, uuid := range []string{"GPU-aaaa", "GPU-bbbb"} {
		fr := &FlowResult{Set: set, GPU: "NVIDIA H100 80GB HBM3", Config: []replay.ConfigItem{{Key: "gpu", Value: "NVIDIA H100 80GB HBM3"},
			{Key: replay.KeyGPUUUID, Value: uuid}, {Key: "peak-copy-gbps", Value: fmt.Sprint(3000 + i)}, {Key: "peaks-measured", Value: "2026-11-25T03:23:23Z"}}}
		fr.Entries = append(fr.Entries, replay.Entry{ID: set.Signatures[0].ID, Result: &replay.Result{ID: set.Signatures[0].ID, Stats: replay.Stats{MedianNS: 1000}}})
		if err := fr.WriteBench(&outs[i], "p"); err != nil {
			t.Fatal(err)
		}
		rs, err := ReadResults([]Input{{Name: uuid, Reader: bytes.NewReader(outs[i].Bytes())}})
		if err != nil {
			t.Fatal(err)
		}
		if w := rs.Workloads[0]; w.Config[replay.KeyGPUUUID] != uuid || w.Peaks == nil || w.Peaks.CopyGBps != float64(3000+i) {
			t.Errorf("read back: uuid %q, peaks %+v", w.Config[replay.KeyGPUUUID], w.Peaks)
		}
	}
	var parser benchproc.ProjectionParser
	proj, err := parser.Parse(".config", nil)
	if err != nil {
		t.Fatal(err)
	}
	configs := map[benchproc.Key]bool{}
	for i := range outs {
		r := benchfmt.NewReader(bytes.NewReader(outs[i].Bytes()), "run")
		for r.Scan() {
			if res, ok := r.Result().(*benchfmt.Result); ok {
				configs[proj.Project(res)] = true
			}
		}
	}
	if len(configs) != 1 {
		t.Errorf("%d configurations, want 1: %v", len(configs), configs)
	}
}
