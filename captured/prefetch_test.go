package captured

import (
	"bytes"
	"io/fs"
	"maps"
	"math/rand"
	"slices"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gztest"
	"github.com/kreplay/kreplay/internal/inject"
)

// newFiles does on the host what New does with files for l primed by
// producers: for l and each producer it builds, it takes the module
// images no context has loaded (Snapshots.image, as module does) and
// marks them loaded, then fills the buffers and reads what the first
// launch is compared with (hostPrepare).
func newFiles(tb testing.TB, l *inject.Launch, producers []*inject.Producer, fsys fs.FS, c *Snapshots) {
	tb.Helper()
	kernels := []*inject.Launch{l}
	for _, p := range producers {
		if checkPrimer(l, p) == nil {
			kernels = append(kernels, p.Launch)
		}
	}
	for _, k := range kernels {
		for _, h := range moduleHashes(k) {
			if !loaded(h) {
				if _, err := c.image(fsys, h); err != nil {
					tb.Fatal(err)
				}
				fakeLoaded(tb, h)
			}
		}
		hostPrepare(tb, k, fsys, Options{Snapshots: c})
	}
}

// fakeLoaded marks modules loaded in a context, as module does, until
// the test ends.
func fakeLoaded(tb testing.TB, hashes ...string) {
	ctx := cuda.ContextKey{}
	modMu.Lock()
	defer modMu.Unlock()
	if modules[ctx] == nil {
		modules[ctx] = map[string]*cuda.Module{}
		tb.Cleanup(func() {
			modMu.Lock()
			delete(modules, ctx)
			modMu.Unlock()
		})
	}
	for _, h := range hashes {
		modules[ctx][h] = new(cuda.Module)
	}
}

// prefetchFiles is a kernels directory: module images m1, m2, mp, mc, mx
// and snapshots s1 (a 4 KiB sample), s2 (64 bytes, whole), s3, sp, sc,
// sx (1 KiB samples), of pseudo-random bytes.
func prefetchFiles(tb testing.TB) fstest.MapFS {
	rng := rand.New(rand.NewSource(1))
	random := func(n int) []byte {
		b := make([]byte, n)
		rng.Read(b)
		return b
	}
	files := fstest.MapFS{}
	for _, m := range []string{"m1", "m2", "mp", "mc", "mx"} {
		files["modules/"+m+".cubin.gz"] = gztest.MapFile(tb, random(2048))
	}
	for name, n := range map[string]int{"s1": 4096, "s2": 64, "s3": 1024, "sp": 1024, "sc": 1024, "sx": 1024} {
		files["snaps/"+name+".bin.gz"] = gztest.MapFile(tb, random(n))
	}
	return files
}

func sampled(h string, n int) inject.Snapshot { return inject.Snapshot{Snap: h, SnapLen: n} }

// prefetchLaunch points into two allocations, one of which holds an inner
// pointer into a third; its module is m1, with m2 for an alternative.
func prefetchLaunch() *inject.Launch {
	const a, b, w = 0x7f0000000000, 0x7f1000000000, 0x7f2000000000
	return &inject.Launch{
		Name: "gemm", Module: "m1", Alternatives: []string{"m2"},
		Ptrs: []inject.Pointer{
			{Off: 0, Value: a, Base: a, Range: 1 << 16, Group: 0, Snapshot: sampled("s1", 4096)},
			{Off: 8, Value: b, Base: b, Range: 64, Group: 1, Snapshot: inject.Snapshot{Snap: "s2", SnapLen: 64, Whole: true}},
		},
		Inner: []inject.Inner{{In: 0, At: 16, Value: w, Base: w, Range: 4096, Snapshot: sampled("s3", 1024)}},
	}
}

// producer is a launch of module m with one pointer, at a's allocation,
// whose snapshot is snap; alias makes it write into its consumer's.
func producer(name, m, snap string, alias bool) *inject.Producer {
	const a = 0x7f0000000000
	p := &inject.Producer{Launch: &inject.Launch{
		Name: name, Module: m,
		Ptrs: []inject.Pointer{{Off: 0, Value: a, Base: a, Range: 1 << 16, Snapshot: sampled(snap, 1024)}},
	}}
	if alias {
		p.Alias = [][3]int64{{0, 0, 0}}
	}
	return p
}

// Prefetch opens the files New opens, no other, and New then opens none:
// the module images of the launch and of the producers it builds (not a
// collective, not one sharing no memory), but those loaded already, and
// their snapshots; none of a launch whose module is missing.
func TestPrefetch(t *testing.T) {
	prods := []*inject.Producer{
		producer("elementwise", "mp", "sp", true),
		producer("ncclDevKernel_AllReduce_Sum_f16_RING_LL", "mc", "sc", true),
		producer("unaliased", "mx", "sx", false),
	}
	missing := prefetchLaunch()
	missing.Module, missing.Alternatives = "gone", nil
	for _, tc := range []struct {
		name    string
		l       *inject.Launch
		prods   []*inject.Producer
		loaded  []string // modules loaded in some context
		want    []string // files opened
		wantErr bool     // New fails too
	}{
		{name: "alone", l: prefetchLaunch(),
			want: []string{"modules/m1.cubin.gz", "modules/m2.cubin.gz", "snaps/s1.bin.gz", "snaps/s2.bin.gz", "snaps/s3.bin.gz"}},
		{name: "producers", l: prefetchLaunch(), prods: prods,
			want: []string{"modules/m1.cubin.gz", "modules/m2.cubin.gz", "modules/mp.cubin.gz",
				"snaps/s1.bin.gz", "snaps/s2.bin.gz", "snaps/s3.bin.gz", "snaps/sp.bin.gz"}},
		{name: "loaded", l: prefetchLaunch(), prods: prods, loaded: []string{"m1", "mp"},
			want: []string{"modules/m2.cubin.gz", "snaps/s1.bin.gz", "snaps/s2.bin.gz", "snaps/s3.bin.gz", "snaps/sp.bin.gz"}},
		{name: "module missing", l: missing, prods: prods, want: []string{"modules/gone.cubin.gz"}, wantErr: true},
		{name: "no module", l: &inject.Launch{Name: "k"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeLoaded(t, tc.loaded...)
			fsys := gztest.NewCountingFS(prefetchFiles(t))
			c := NewSnapshots(1 << 30)
			err := c.Prefetch(tc.l, tc.prods, fsys)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Prefetch: %v, want an error: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, slices.Sorted(maps.Keys(fsys.Opened()))); diff != "" {
				t.Errorf("files opened (-want +got):\n%s", diff)
			}
			if tc.wantErr {
				return
			}
			fsys.Reset()
			newFiles(t, tc.l, tc.prods, fsys, c)
			if len(fsys.Opened()) > 0 {
				t.Errorf("New's reads opened %v after Prefetch", fsys.Opened())
			}
			for _, h := range append(moduleHashes(tc.l), "mp") {
				if _, ok := c.get(snapKey{hash: h, kind: moduleImage}); ok {
					t.Errorf("module %s's image still kept once taken", h)
				}
			}
		})
	}
}

// A prefetch adds at most half of the bound: it stops at the snapshot
// that would go beyond, and what was read before it stays, the least
// recently used included.
func TestPrefetchBound(t *testing.T) {
	const period = scramblePeriod
	for _, tc := range []struct {
		name   string
		max    int64
		opened int // of the 4 samples
	}{
		// The module (2 KiB) and each sample (1 KiB) with its period.
		{"all fit", 10 * period, 4},
		{"two fit", 5 * period, 3}, // the third is read, not kept
		{"none fit", period, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := prefetchFiles(t)
			l := &inject.Launch{Name: "k", Module: "m1"}
			for i, h := range []string{"s3", "sp", "sc", "sx"} {
				v := uint64(0x7f0000000000 + i<<32)
				l.Ptrs = append(l.Ptrs, inject.Pointer{Off: 8 * i, Value: v, Base: v, Range: 1 << 16, Group: i, Snapshot: sampled(h, 1024)})
			}
			fsys := gztest.NewCountingFS(files)
			c := NewSnapshots(tc.max)
			cur := inject.Snapshot{Snap: "s1", SnapLen: 4096, Whole: true}
			if _, err := c.pattern(fsys, cur); err != nil { // what the last New used
				t.Fatal(err)
			}
			before := c.Bytes()
			if err := c.Prefetch(l, nil, fsys); err != nil {
				t.Fatalf("Prefetch: %v", err)
			}
			if added := c.Bytes() - before; added > tc.max/2 {
				t.Errorf("added %d bytes, over half the bound %d", added, tc.max)
			}
			opened := 0
			for _, h := range []string{"s3", "sp", "sc", "sx"} {
				opened += fsys.Count("snaps/" + h + ".bin.gz")
			}
			if opened != tc.opened {
				t.Errorf("opened %d samples, want %d", opened, tc.opened)
			}
			if _, err := c.read(fsys, cur); err != nil || fsys.Count("snaps/s1.bin.gz") != 1 {
				t.Errorf("the last New's snapshot opened %d times, %v: evicted by the prefetch", fsys.Count("snaps/s1.bin.gz"), err)
			}
		})
	}
}

// Prefetches and New's reads of the same files, at once, share one
// Snapshots safely (go test -race) and read the same bytes.
func TestPrefetchConcurrent(t *testing.T) {
	fsys := gztest.NewCountingFS(prefetchFiles(t))
	l := prefetchLaunch()
	prods := []*inject.Producer{producer("elementwise", "mp", "sp", true)}
	c := NewSnapshots(1 << 30)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 10 {
				if err := c.Prefetch(l, prods, fsys); err != nil {
					t.Error(err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 10 {
				newFiles(t, l, prods, fsys, c)
			}
		}()
	}
	wg.Wait()
	want, err := inject.ReadSnapshot(fsys, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.read(fsys, l.Ptrs[0].Snapshot); err != nil || !bytes.Equal(got, want) {
		t.Errorf("s1 kept as %d bytes, %v", len(got), err)
	}
}

// On every signature of the captured Llama prefill, in order, with one
// Snapshots for the run as a replay keeps: after the prefetch of a
// signature's kernel and its context launches, New's reads open no file.
func TestPrefetchBundle(t *testing.T) {
	cb := readCapturedBundle(t)
	files := maps.Clone(cb.snaps)
	for _, s := range cb.sigs {
		for _, l := range kernelsOf(s) {
			for _, h := range moduleHashes(l) {
				files["modules/"+h+".cubin.gz"] = gztest.MapFile(t, []byte("image of "+h))
			}
		}
	}
	fsys := gztest.NewCountingFS(files)
	c := NewSnapshots(1 << 30)
	for _, s := range cb.sigs {
		l, prods := s.Binary.Launch, s.Binary.Context
		if len(prods) == 0 {
			prods = s.Binary.Producers
		}
		if err := c.Prefetch(l, prods, fsys); err != nil {
			t.Fatalf("%s: Prefetch: %v", s.ID, err)
		}
		fsys.Reset()
		newFiles(t, l, prods, fsys, c)
		if len(fsys.Opened()) > 0 {
			t.Errorf("%s: New's reads opened %v after Prefetch", s.ID, fsys.Opened())
		}
	}
}
