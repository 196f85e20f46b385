package captured

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"math/rand"
	"os"
	"testing"
	"testing/fstest"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/signatures"
)

// capturedBundle is the compiled Llama prefill's bundle as captured on an
// H100 (its index.json and trace). It keeps no module images nor
// snapshots: snaps is a kernels directory with every snapshot the index
// names made of pseudo-random bytes of the recorded length.
type capturedBundle struct {
	sigs  []*signatures.Signature // those with a binary
	snaps fstest.MapFS
}

func readCapturedBundle(tb testing.TB) *capturedBundle {
	tb.Helper()
	const dir = "../workload/testdata/l1b-compiled_prefill"
	x, err := inject.ReadIndex(os.DirFS(dir + "/kernels"))
	if err != nil {
		tb.Fatal(err)
	}
	f, err := os.Open(dir + "/trace.json.gz")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	set, err := signatures.Import(f, "l1b-compiled_prefill", signatures.Options{Kernels: x})
	if err != nil {
		tb.Fatal(err)
	}
	cb := &capturedBundle{snaps: fstest.MapFS{}}
	for _, s := range set.Signatures {
		if s.Binary != nil {
			cb.sigs = append(cb.sigs, s)
		}
	}
	rng := rand.New(rand.NewSource(1))
	add := func(sn inject.Snapshot) {
		name := "snaps/" + sn.Snap + ".bin.gz"
		if sn.Snap == "" || cb.snaps[name] != nil {
			return
		}
		data := make([]byte, sn.SnapLen)
		rng.Read(data)
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(data)
		zw.Close()
		cb.snaps[name] = &fstest.MapFile{Data: buf.Bytes()}
	}
	for _, l := range x.Launches {
		for _, p := range l.Ptrs {
			add(p.Snapshot)
		}
		for _, q := range l.Inner {
			add(q.Snapshot)
		}
	}
	return cb
}

// kernels are the launches a context-mode prepare of s makes: its own and
// its context's (else its producers').
func kernelsOf(s *signatures.Signature) []*inject.Launch {
	ls := []*inject.Launch{s.Binary.Launch}
	prods := s.Binary.Context
	if len(prods) == 0 {
		prods = s.Binary.Producers
	}
	for _, p := range prods {
		ls = append(ls, p.Launch)
	}
	return ls
}

// hostPrepare does what New does on the host for l with one buffer set,
// the device's work left out: group its pointers, fill each group's
// buffer from its snapshots, read what the first launch is compared
// with. It returns the bytes it would upload.
func hostPrepare(tb testing.TB, l *inject.Launch, fsys fs.FS, o Options) int64 {
	k := &Kernel{l: l, timing: o.Timing, snaps: o.Snapshots}
	k.layout()
	var up int64
	w := bufWriter{
		zero:   func(int64) error { return nil },
		upload: func(_ int64, b []byte) error { up += int64(len(b)); return nil },
		dup:    func(int64, int64, int64) error { return nil },
	}
	for i, g := range k.groups {
		g.bufs = []cuda.DevicePtr{cuda.DevicePtr(1+i) << 40}
		if _, err := fill(fsys, g, k.views(g), w, o.Snapshots, o.Timing); err != nil {
			tb.Fatal(err)
		}
	}
	for _, g := range k.groups {
		for _, pi := range g.ptrs {
			if p := l.Ptrs[pi]; p.Snap != "" {
				if _, err := k.pristine(fsys, g, p); err != nil {
					tb.Fatal(err)
				}
			}
		}
	}
	return up
}

// BenchmarkHostPrepare is the host side of preparing every signature of
// the compiled Llama prefill by its captured binary in the context cache
// mode, one buffer set each (a GEMM's energy sets repeat its own fills):
// with no Snapshots, and with a fresh one per run over the signatures,
// as a replay.Device keeps one, of two bounds.
func BenchmarkHostPrepare(b *testing.B) {
	cb := readCapturedBundle(b)
	for _, bc := range []struct {
		name  string
		bound int64
	}{{"no snapshots kept", 0}, {"snapshots kept up to 1GiB", 1 << 30}, {"snapshots kept up to 64MiB", 64 << 20}} {
		b.Run(bc.name, func(b *testing.B) {
			var kernels, up int64
			for i := 0; i < b.N; i++ {
				var o Options
				if bc.bound > 0 {
					o.Snapshots = NewSnapshots(bc.bound)
				}
				for _, s := range cb.sigs {
					for _, l := range kernelsOf(s) {
						up += hostPrepare(b, l, cb.snaps, o)
						kernels++
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(cb.sigs))/1e6, "ms/signature")
			b.ReportMetric(float64(kernels)/float64(b.N*len(cb.sigs)), "kernels/signature")
			b.ReportMetric(float64(up)/float64(b.N*len(cb.sigs))/1e6, "MB-uploaded/signature")
		})
	}
}
