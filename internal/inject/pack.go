package inject

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// IndexVersion is the version of the kernels index format.
const IndexVersion = 1

// Index is a bundle's record of its kernel binaries (kernels/index.json):
// the unique launches of one inference, and the order of its launches.
// Module images lie beside it in modules/HASH.cubin.gz and buffer
// snapshots in snaps/HASH.bin.
type Index struct {
	Version int `json:"version"`
	// Launches are the unique launches, sorted by key.
	Launches []*Launch `json:"launches"`
	// Calls are the keys of the inference's launches in order ("" for a
	// launch that could not be recorded).
	Calls []string `json:"calls"`
	// CallPtrs, where recorded, are the pointer values of each call
	// (parallel to Calls, each in the order of its launch's Ptrs): which
	// calls' buffers were the same memory.
	CallPtrs [][]uint64 `json:"call_ptrs,omitempty"`
	// Notes are what the recorder and the module resolution reported.
	Notes []string `json:"notes,omitempty"`
}

// Launch returns the launch of key, or nil.
func (x *Index) Launch(key string) *Launch {
	i, ok := slices.BinarySearchFunc(x.Launches, key, func(l *Launch, k string) int { return strings.Compare(l.Key, k) })
	if !ok {
		return nil
	}
	return x.Launches[i]
}

// Snapshot policy (a guess, labelled as one): a buffer whose first bytes
// are small (16 KiB or less), deflate to at most a quarter (masks, zeros,
// positions, counters), data that steers a kernel, is kept whole, up to
// the recorder's limit. Otherwise its first sampleBytes are kept, or the
// run of small non-negative integers it begins with (token ids, block
// tables: intPrefix) where that is longer, and the replay tiles them over
// the buffer so that it holds the real run's values. Weights and activations of random or real models
// deflate to a third or more, so they are sampled: keeping them whole
// made a 1B-parameter FP8 prefill's bundle 117 MB. Snapshots are stored
// gzip'ed (snaps/HASH.bin.gz).
//
// A buffer whose first bytes are mostly runs is recorded up to runsCap
// bytes (kr_inject.h), until the process has read 512 MiB for such
// extensions. Pack keeps such a snapshot whole when all of it
// deflates to a quarter (a mask, zeros), else a sample of sampleBytes
// drawn evenly from all of it (spreadSample): causally masked scores
// begin with rows almost all mask, and their first bytes are not their
// mix.
const (
	smallSnap   = 16 << 10
	sampleBytes = 4 << 10
	runsCap     = 8 << 20
)

// Pack writes into dst (created; must not exist) what a bundle keeps of a
// capture: the launches of the recorded calls, their modules (gzip) and
// their snapshots after the snapshot policy. It resolves the modules
// first (ResolveModules).
func Pack(c *Capture, dst string) (*Index, error) {
	notes, err := c.ResolveModules()
	if err != nil {
		return nil, err
	}
	x := &Index{Version: IndexVersion, Notes: append(slices.Clone(c.Errors), notes...)}
	used := map[string]bool{}
	havePtrs := false
	for _, call := range c.Calls {
		havePtrs = havePtrs || call.Ptrs != nil
	}
	for _, call := range c.Calls {
		x.Calls = append(x.Calls, call.Key)
		if havePtrs {
			x.CallPtrs = append(x.CallPtrs, call.Ptrs)
		}
		if call.Key != "" && !used[call.Key] {
			used[call.Key] = true
			x.Launches = append(x.Launches, c.Launches[call.Key])
		}
	}
	slices.SortFunc(x.Launches, func(a, b *Launch) int { return strings.Compare(a.Key, b.Key) })
	if err := os.Mkdir(dst, 0o755); err != nil {
		return nil, err
	}
	for _, sub := range []string{"modules", "snaps"} {
		if err := os.Mkdir(filepath.Join(dst, sub), 0o755); err != nil {
			return nil, err
		}
	}
	done := map[string]bool{}
	packed := map[string]Snapshot{} // by recorded snapshot: what packSnap made of it
	for _, l := range x.Launches {
		for _, m := range append([]string{l.Module}, l.Alternatives...) {
			if m != "" && !done["m"+m] {
				done["m"+m] = true
				if err := copyModule(c.Dir, dst, m); err != nil {
					return nil, err
				}
			}
		}
		for i := range l.Ptrs {
			if err := packSnap(c.Dir, dst, &l.Ptrs[i].Snapshot, c.SnapBytes, packed); err != nil {
				return nil, fmt.Errorf("launch %s: %w", l.Key, err)
			}
		}
		for i := range l.Inner {
			if err := packSnap(c.Dir, dst, &l.Inner[i].Snapshot, c.SnapBytes, packed); err != nil {
				return nil, fmt.Errorf("launch %s: inner pointer %d: %w", l.Key, i, err)
			}
		}
	}
	b, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	return x, os.WriteFile(filepath.Join(dst, "index.json"), append(b, '\n'), 0o644)
}

func copyModule(src, dst, hash string) error {
	data, err := os.ReadFile(filepath.Join(src, "modules", hash+".cubin"))
	if err != nil {
		return err
	}
	return writeGzip(filepath.Join(dst, "modules", hash+".cubin.gz"), data)
}

// packSnap applies the snapshot policy to one pointer's snapshot, once per
// recorded snapshot (packed remembers the outcome: a decode's launches
// share most of theirs).
func packSnap(src, dst string, p *Snapshot, capBytes int, packed map[string]Snapshot) error {
	if p.Snap == "" {
		return nil
	}
	if q, ok := packed[p.Snap]; ok {
		*p = q
		return nil
	}
	rec := p.Snap
	data, err := os.ReadFile(filepath.Join(src, "snaps", p.Snap+".bin"))
	if err != nil {
		return err
	}
	if len(data) != p.SnapLen {
		return fmt.Errorf("snapshot %s has %d bytes, the record says %d", p.Snap, len(data), p.SnapLen)
	}
	var kept []byte
	if capBytes > 0 && len(data) > capBytes {
		kept = keepRuns(data) // the recorder extended it: its first bytes are runs
	} else {
		kept = keep(data)
	}
	if len(kept) < len(data) {
		h := fnv.New64a()
		h.Write(kept)
		p.Snap, p.SnapLen, p.Whole = fmt.Sprintf("%016x", h.Sum64()), len(kept), false
		data = kept
	} else {
		p.Whole = true
	}
	packed[rec] = *p
	name := filepath.Join(dst, "snaps", p.Snap+".bin.gz")
	if _, err := os.Stat(name); err == nil {
		return nil // another recorded snapshot sampled to the same bytes
	}
	return writeGzip(name, data)
}

// keep is what the snapshot policy keeps of a snapshot: all of it, or
// its first sampleBytes, or more where it begins with a longer run of
// small non-negative integers (intPrefix).
func keep(data []byte) []byte {
	if len(data) <= smallSnap || steering(data) {
		return data
	}
	return data[:max(sampleBytes, intPrefix(data))]
}

// keepRuns is what the snapshot policy keeps of a snapshot the recorder
// extended past its limit (its first bytes mostly runs): all of it when it
// deflates to a quarter, else spreadSample of it.
func keepRuns(data []byte) []byte {
	if deflatesToQuarter(data) {
		return data
	}
	return spreadSample(data)
}

// spreadSample draws sampleBytes of data in 64-byte pieces at evenly
// spaced, 8-byte aligned offsets.
func spreadSample(data []byte) []byte {
	const piece = 64
	n := sampleBytes / piece
	if len(data) <= sampleBytes {
		return data
	}
	out := make([]byte, 0, sampleBytes)
	step := (len(data) - piece) / (n - 1)
	for i := 0; i < n; i++ {
		off := (i * step) &^ 7
		out = append(out, data[off:off+piece]...)
	}
	return out
}

// deflatesToQuarter reports whether all of data deflates to at most a
// quarter of its size.
func deflatesToQuarter(data []byte) bool {
	var n countWriter
	zw, _ := flate.NewWriter(&n, flate.BestSpeed)
	zw.Write(data)
	zw.Close()
	return int(n) <= len(data)/4
}

// steering reports whether data deflates to at most a quarter of its
// size (judged on its first 64 KiB).
func steering(data []byte) bool {
	return deflatesToQuarter(data[:min(len(data), 64<<10)])
}

// writeGzip writes data gzip'ed to path.
func writeGzip(path string, data []byte) error {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

// ReadIndex reads kernels/index.json from fsys (a bundle's kernels
// directory).
func ReadIndex(fsys fs.FS) (*Index, error) {
	b, err := fs.ReadFile(fsys, "index.json")
	if err != nil {
		return nil, err
	}
	var x Index
	if err := json.Unmarshal(b, &x); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	if x.Version != IndexVersion {
		return nil, fmt.Errorf("index.json: version %d, this kreplay reads %d", x.Version, IndexVersion)
	}
	if !slices.IsSortedFunc(x.Launches, func(a, b *Launch) int { return strings.Compare(a.Key, b.Key) }) {
		return nil, errors.New("index.json: launches not sorted by key")
	}
	if x.CallPtrs != nil && len(x.CallPtrs) != len(x.Calls) {
		return nil, fmt.Errorf("index.json: %d calls, %d lists of call pointers", len(x.Calls), len(x.CallPtrs))
	}
	for i, k := range x.Calls {
		if k == "" {
			continue
		}
		l := x.Launch(k)
		if l == nil {
			return nil, fmt.Errorf("index.json: call of unknown launch %s", k)
		}
		if x.CallPtrs != nil && x.CallPtrs[i] != nil && len(x.CallPtrs[i]) != len(l.Ptrs) {
			return nil, fmt.Errorf("index.json: call %d of %s has %d pointers, the launch %d", i, k, len(x.CallPtrs[i]), len(l.Ptrs))
		}
	}
	for _, l := range x.Launches {
		if err := l.Check(); err != nil {
			return nil, fmt.Errorf("index.json: %w", err)
		}
	}
	return &x, nil
}

// ReadModule returns the module image of hash from fsys.
func ReadModule(fsys fs.FS, hash string) ([]byte, error) {
	data, err := readGzip(fsys, path.Join("modules", hash+".cubin.gz"))
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", hash, err)
	}
	return data, nil
}

// ReadSnapshot returns the snapshot of hash from fsys.
func ReadSnapshot(fsys fs.FS, hash string) ([]byte, error) {
	data, err := readGzip(fsys, path.Join("snaps", hash+".bin.gz"))
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", hash, err)
	}
	return data, nil
}

func readGzip(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

func sortedLaunches(m map[string]*Launch) []*Launch {
	out := make([]*Launch, 0, len(m))
	for _, l := range m {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b *Launch) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// intPrefix is the length of the run of small non-negative integers data
// begins with, in whole 8-byte words: aligned 4-byte little-endian words
// whose top byte is zero, as int32 or int64 values under 2^24 are (token
// ids, positions, block tables, expert indices; float data has sign and
// exponent bits there; zeros count, so a run may reach the recorder's
// limit, as a snapshot that deflates does). A snapshot runs from the
// pointer to the end of its allocation, so an index tensor is often
// followed by other tensors.
// Random token ids do not deflate to a quarter (int64 ids under 128256:
// 38%), and a 4 KiB sample tiled over them repeats 512 ids: a 2 x 2048
// prefill's embedding gather read an eighth of its rows and replayed at
// about half its traced time.
func intPrefix(data []byte) int {
	n := 0
	for n+4 <= len(data) && data[n+3] == 0 {
		n += 4
	}
	if n == len(data) {
		return n
	}
	return n &^ 7
}
