// Package traces embeds the real inference traces kreplay ships with: the
// PyTorch-profiler (Kineto) traces of BLOOM-560M decode and prefill and
// Llama-7B prefill on an H100, the Llama-7B tensor-parallel prefill on two
// H200s (one trace per rank), and measured.json, the wall time and NVML
// energy of the same workloads run without the profiler.
//
// They serve as the default workload of the kreplay command and as test
// data. See README.md in this directory for their provenance.
package traces

import (
	"embed"
	"io/fs"
	"strings"
)

//go:embed *.trace.json.gz measured.json
var files embed.FS

// Default is the trace kreplay uses when none is given.
const Default = "h100_bloom-560m_prefill.trace.json.gz"

// Names lists the embedded traces, sorted.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".trace.json.gz") {
			names = append(names, e.Name())
		}
	}
	return names
}

// Open opens an embedded file by name.
func Open(name string) (fs.File, error) { return files.Open(name) }

// ReadFile returns the contents of an embedded file.
func ReadFile(name string) ([]byte, error) { return files.ReadFile(name) }
