// Package traces embeds the real inference workloads kreplay ships with,
// as bundles (see package workload): one directory per workload, holding
// bundle.json, the workload spec, the PyTorch-profiler (Kineto) trace, the
// wall time and NVML energy of the same workload run without the profiler
// (measured.json) and what is known of the machine (env.json):
//
//	h100_bloom-560m_prefill     BLOOM-560M prefill on an H100
//	h100_bloom-560m_generate    BLOOM-560M greedy generate on an H100
//	h100_llama-7b_prefill       Llama-7B prefill on an H100
//	2xh200_llama-7b-tp2_prefill the Llama-7B tensor-parallel prefill on two H200s, one trace per rank
//
// They serve as the default workload of the kreplay command and as test
// data. See README.md in this directory for their provenance.
//
// The traces keep the names they had as files before they became bundles
// (Names, Open, ReadFile): a bundle's trace.json.gz is BUNDLE.trace.json.gz,
// its rankN.trace.json.gz is BUNDLE.rankN.trace.json.gz.
package traces

import (
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

//go:embed */bundle.json */spec.json */measured.json */env.json */*trace.json.gz
var files embed.FS

// Default is the trace kreplay uses when none is given, by its old name:
// the trace of DefaultBundle.
const Default = "h100_bloom-560m_prefill.trace.json.gz"

// DefaultBundle is the bundle kreplay uses when none is given.
const DefaultBundle = "h100_bloom-560m_prefill"

// Bundles lists the embedded bundles by directory name, sorted.
func Bundles() []string {
	entries, _ := fs.ReadDir(files, ".")
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// Bundle returns the files of an embedded bundle, rooted at its directory.
func Bundle(name string) (fs.FS, error) {
	if !slices.Contains(Bundles(), name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return fs.Sub(files, name)
}

// Locate returns the bundle and the file in it of a trace named by its old
// name ("h100_bloom-560m_prefill.trace.json.gz" is
// h100_bloom-560m_prefill/trace.json.gz).
func Locate(name string) (bundle, trace string, ok bool) {
	for _, b := range Bundles() {
		rest, ok := strings.CutPrefix(name, b+".")
		if !ok || !strings.HasSuffix(rest, "trace.json.gz") {
			continue
		}
		if rest == "trace.json.gz" {
			return b, rest, true
		}
		if _, err := fs.Stat(files, path.Join(b, rest)); err == nil {
			return b, rest, true
		}
	}
	return "", "", false
}

// Names lists the embedded traces by their old names, sorted.
func Names() []string {
	var names []string
	for _, b := range Bundles() {
		m, _ := fs.Glob(files, b+"/*trace.json.gz")
		for _, t := range m {
			if t = path.Base(t); t == "trace.json.gz" {
				names = append(names, b+".trace.json.gz")
			} else {
				names = append(names, b+"."+t)
			}
		}
	}
	slices.Sort(names)
	return names
}

// Open opens an embedded trace by its old name, or any embedded file by
// its path ("h100_bloom-560m_prefill/measured.json").
func Open(name string) (fs.File, error) {
	if b, t, ok := Locate(name); ok {
		name = path.Join(b, t)
	}
	return files.Open(name)
}

// ReadFile returns the contents of an embedded trace by its old name, or
// of any embedded file by its path.
func ReadFile(name string) ([]byte, error) {
	if b, t, ok := Locate(name); ok {
		name = path.Join(b, t)
	}
	return files.ReadFile(name)
}

// FS returns the embedded files as a file system: a directory per bundle.
func FS() fs.FS { return files }

// WriteGunzipped writes the embedded trace name, gunzipped, to
// dir/trace.json and returns that path: a plain trace file, as a user's
// profiler writes one.
func WriteGunzipped(name, dir string) (string, error) {
	f, err := Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	path := filepath.Join(dir, "trace.json")
	out, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, z); err != nil {
		out.Close()
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return path, out.Close()
}
