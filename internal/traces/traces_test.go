package traces

import (
	"bytes"
	"io/fs"
	"os"
	"slices"
	"testing"
)

// The traces keep their old names, and every bundle has its files.
func TestNames(t *testing.T) {
	want := []string{
		"2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz",
		"2xh200_llama-7b-tp2_prefill.rank1.trace.json.gz",
		"h100_bloom-560m_generate.trace.json.gz",
		"h100_bloom-560m_prefill.trace.json.gz",
		"h100_llama-7b_prefill.trace.json.gz",
	}
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v", got)
	}
	if !slices.Contains(Names(), Default) || !slices.Contains(Bundles(), DefaultBundle) {
		t.Errorf("Default %s or DefaultBundle %s is not embedded", Default, DefaultBundle)
	}
	for _, name := range want {
		b, tr, ok := Locate(name)
		if !ok {
			t.Errorf("Locate(%s): not found", name)
			continue
		}
		f, err := Open(name)
		if err != nil {
			t.Errorf("Open(%s): %v", name, err)
			continue
		}
		f.Close()
		if data, err := ReadFile(b + "/" + tr); err != nil || len(data) < 1000 {
			t.Errorf("ReadFile(%s/%s): %d bytes, %v", b, tr, len(data), err)
		}
	}
	for _, name := range []string{"h100_bloom-560m_prefill", "h100_bloom-560m_prefill.rank0.trace.json.gz", "nope.trace.json.gz", "measured.json"} {
		if _, _, ok := Locate(name); ok {
			t.Errorf("Locate(%s): found", name)
		}
	}
	for _, b := range Bundles() {
		fsys, err := Bundle(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"bundle.json", "spec.json", "measured.json", "env.json"} {
			if _, err := fs.Stat(fsys, f); err != nil {
				t.Errorf("%s: %v", b, err)
			}
		}
	}
	if _, err := Bundle("nope"); err == nil {
		t.Error("Bundle(nope): no error")
	}
}

// WriteGunzipped writes the trace as plain JSON; an unknown name is an
// error and writes nothing.
func TestWriteGunzipped(t *testing.T) {
	dir := t.TempDir()
	path, err := WriteGunzipped(Default, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 1<<20 || bytes.TrimSpace(b)[0] != '{' || !bytes.Contains(b, []byte(`"traceEvents"`)) {
		t.Errorf("%s: %d bytes, starting %q", path, len(b), b[:min(len(b), 40)])
	}
	if _, err := WriteGunzipped("no-such.trace.json.gz", t.TempDir()); err == nil {
		t.Error("an unknown trace: no error")
	}
}
