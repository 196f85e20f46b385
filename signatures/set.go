package signatures

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/kreplay/kreplay/internal/atomicfile"
	"io"
	"os"
)

// FormatVersion is the version of the signature-set JSON this package
// writes. ReadSet rejects other versions.
const FormatVersion = 1

// Set is the signature set of one trace (one rank of a multi-rank run).
type Set struct {
	Version    int             `json:"version"`
	Source     Source          `json:"source"`
	Summary    []DeviceSummary `json:"timeline_summary"`
	Links      LinkStats       `json:"links"`
	Signatures []*Signature    `json:"signatures"`
	// Kernels says how the trace's kernels matched the launches a capture
	// recorded; nil for a plain trace.
	Kernels  *KernelMatch `json:"kernels,omitempty"`
	Timeline Timeline     `json:"timeline"`
}

// Source describes the trace a set was imported from, as the trace states it.
type Source struct {
	File     string `json:"file"`
	Workload string `json:"workload"`
	// Rank and WorldSize of a multi-rank run (0 and 1 otherwise).
	Rank      int                `json:"rank"`
	WorldSize int                `json:"world_size"`
	GPUs      []DeviceProperties `json:"gpus,omitempty"`
	// CUDADriver and CUDARuntime are the CUDA API versions ("13.0").
	CUDADriver  string `json:"cuda_driver,omitempty"`
	CUDARuntime string `json:"cuda_runtime,omitempty"`
	CUPTI       int    `json:"cupti,omitempty"`
	TraceID     string `json:"trace_id,omitempty"`
	// Events and Bytes count the trace events and uncompressed JSON bytes.
	Events int   `json:"events"`
	Bytes  int64 `json:"bytes"`
}

// GPU returns the name of the trace's first GPU, or "" if it names none.
func (s Source) GPU() string {
	if len(s.GPUs) == 0 {
		return ""
	}
	return s.GPUs[0].Name
}

// LinkStats counts how GPU activities were linked to CPU ops.
type LinkStats struct {
	Activities    int `json:"activities"`
	ByExternalID  int `json:"by_external_id"`
	ByCorrelation int `json:"by_correlation"`
	Unlinked      int `json:"unlinked"`
}

// ByID returns the signature with the given ID, or nil.
func (s *Set) ByID(id string) *Signature {
	for _, sig := range s.Signatures {
		if sig.ID == id {
			return sig
		}
	}
	return nil
}

// WriteSet writes s as indented JSON.
func WriteSet(w io.Writer, s *Set) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetIndent("", " ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteSetFile writes s to path, replacing it only once fully written,
// with the mode a plain create gives (0666 less the umask).
func WriteSetFile(path string, s *Set) error {
	return atomicfile.Write(path, func(w io.Writer) error { return WriteSet(w, s) })
}

// ReadSet reads a signature set written by WriteSet and checks it
// (Set.Validate); its errors start with name.
func ReadSet(r io.Reader, name string) (*Set, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var s Set
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &s, nil
}

// IsSetFile reports whether the file at path looks like a signature set
// rather than a trace: JSON whose first key is "version".
func IsSetFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	head = bytes.TrimLeft(head[:n], " \t\r\n{")
	return bytes.HasPrefix(head, []byte(`"version"`))
}

// Load reads path as a signature set if it is one, else imports it as a
// trace.
func Load(path string, opt Options) (*Set, error) {
	if IsSetFile(path) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return ReadSet(f, path)
	}
	return ImportFile(path, opt)
}
