package captured

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/internal/launch"
)

// ErrNoBinary is wrapped by New's error when the launch's module image is
// missing from the bundle.
var ErrNoBinary = errors.New("captured binary missing")

// passAttrs are the launch attributes a replay passes on; the others hold
// handles (events, access windows) of the capturing process.
var passAttrs = map[int]bool{
	cuda.LaunchAttrCooperative: true, cuda.LaunchAttrClusterDimension: true,
	cuda.LaunchAttrClusterSchedulingPolicy: true, cuda.LaunchAttrProgrammaticStreamSerialization: true,
	cuda.LaunchAttrPriority: true, cuda.LaunchAttrMemSyncDomainMap: true, cuda.LaunchAttrMemSyncDomain: true,
	cuda.LaunchAttrPreferredClusterDimension: true,
}

// group is one allocation the launch points into.
type group struct {
	base  uint64
	size  int64
	ptrs  []int // indexes into Launch.Ptrs, by increasing value
	inner []int // indexes into Launch.Inner
	// patches are the inner pointers this group's buffer holds.
	patches []patch
	bufs    []cuda.DevicePtr
	// shared is set where bufs[0] is Options.Shared's, not the group's
	// own: Close leaves it to the Shared.
	shared bool
}

// Kernel is a captured launch made launchable. It implements
// launch.Kernel.
type Kernel struct {
	l         *inject.Launch
	fn        *cuda.Function
	cfg       cuda.LaunchConfig
	groups    []*group
	blocks    []*cuda.ParamBlock // one per buffer set
	work      launch.Work
	fp        int64
	zeroed    int // groups filled with zeros for want of a snapshot
	restores  []*restore
	producers []*Kernel // run by Prime, in order
	// dropped says which producers could not be made launchable, and why.
	dropped []string
	// suspect are the indexes in l.Ptrs of the words kept as recorded
	// (suspects for consumerAlign); kept says why, one line each.
	suspect map[int]bool
	kept    []string
	timing  *Timing
	snaps   *Snapshots
	shared  *Shared
}

// Options are what New needs besides the launch.
type Options struct {
	launch.Options
	// Work is the signature's work, for throughput figures.
	Work launch.Work
	// Producers, when set, run before each launch in the primed cache
	// mode (Prime), in order; the kernel then has one buffer set, which
	// they write into and read.
	Producers []*inject.Producer
	// EnergySets keeps Options.Sets buffer sets even with Producers: the
	// producers and the timed launches use set 0, and the energy windows
	// rotate through them all (Kernel.Sets), as a GEMM that reads its
	// weights once per inference streams them from device memory.
	EnergySets bool
	// Timing, when set, gets the host time New spends, by kind of work,
	// its producers' included.
	Timing *Timing
	// Snapshots, when set, keeps the snapshots New reads (and what it
	// makes of them) for the kernels made after it.
	Snapshots *Snapshots
	// Shared, when set, gives the kernel the buffers of the allocations
	// it points into that it shares with the other kernels made with it
	// (see Shared); the kernel then has one buffer set, and no producers
	// run.
	Shared *Shared
}

// New loads l's function from the module images in fsys (a bundle's
// kernels directory) and allocates and fills its buffers. Call it inside
// the device's context (Context.Do).
func New(l *inject.Launch, fsys fs.FS, o Options, s *cuda.Stream) (*Kernel, error) {
	if err := checkLaunch(l); err != nil {
		return nil, err
	}
	if o.Timing != nil {
		o.Timing.Kernels++
	}
	if o.Shared != nil {
		o.Producers = nil // a kernel on shared buffers runs without primers
	}
	fns, err := functions(fsys, l, o.Snapshots, o.Timing)
	if err != nil {
		return nil, err
	}
	k := &Kernel{l: l, fn: fns[0], work: o.Work, timing: o.Timing, snaps: o.Snapshots, shared: o.Shared}
	if err := k.configure(); err != nil {
		return nil, err
	}
	k.layout()
	if o.FreeBytes > 0 && k.fp*int64(max(1, o.Sets)) > o.FreeBytes {
		return nil, fmt.Errorf("captured %s: %d buffer sets of %d bytes do not fit in %d bytes of free device memory",
			l.Name, max(1, o.Sets), k.fp, o.FreeBytes)
	}
	sets := max(1, o.Sets)
	if (len(o.Producers) > 0 && !o.EnergySets) || o.Shared != nil {
		sets = 1
	}
	if err := k.allocate(fsys, sets, s); err != nil {
		k.Close()
		return nil, err
	}
	if err := k.findRestores(fsys, s); err != nil {
		k.Close()
		return nil, err
	}
	if len(fns) > 1 {
		if err := k.launchable(fns, s); err != nil {
			k.Close()
			return nil, err
		}
	}
	for _, p := range o.Producers {
		pk, err := k.newProducer(p, fsys, s)
		if producerFatal(err) {
			k.Close()
			return nil, err
		}
		if err != nil {
			// The kernel still replays, primed by the others: a producer
			// whose binary is missing or not the launched one costs its
			// context, not the signature (a compiled Llama prefill's cuDNN
			// attention, 7.9% of its time, was lost to its norm
			// reduction's wrong image). Out of device memory is the
			// signature's error, and so is a producer that faulted on its
			// first launch: the CUDA context is lost, and the error names
			// the producer (a MoE's masked_fill_ whose context producer,
			// a grouped GEMM with stale addresses, faulted: dropped, it
			// surfaced only at the next call, a cuMemFree).
			k.dropped = append(k.dropped, err.Error())
			continue
		}
		k.producers = append(k.producers, pk)
	}
	return k, nil
}

// checkLaunch is nil when New may build l: l names its module, and its
// inner pointers lie inside their buffers.
func checkLaunch(l *inject.Launch) error {
	if l.Module == "" {
		return fmt.Errorf("%w: no recorded module defines %s", ErrNoBinary, l.Name)
	}
	if err := l.InnerOverflow(); err != nil {
		// Launched, it would fault on an illegal address and lose the
		// CUDA context for every signature after it.
		return fmt.Errorf("%s: %w", l.Name, err)
	}
	return nil
}

// snapshots are the snapshots New fills l's buffers with (fill), in the
// order it reads them; the restores (pristine) read some of them again.
func snapshots(l *inject.Launch) []inject.Snapshot {
	k := &Kernel{l: l}
	k.layout()
	var out []inject.Snapshot
	for _, g := range k.groups {
		for _, v := range k.views(g) {
			if v.Snap != "" {
				out = append(out, v.Snapshot)
			}
		}
	}
	return out
}

// layout groups the launch's pointers into the allocations its buffers
// stand for and sums their sizes into the footprint.
func (k *Kernel) layout() {
	k.keepSuspects()
	k.groupPointers()
	k.groupInner()
	for _, g := range k.groups {
		k.fp += g.size
	}
}

// Footprint is the Footprint of the kernel New makes of l, its producers
// left out, known before New: the sizes of the allocations it points
// into, those its suspect words would point to left out. A caller
// choosing how many buffer sets to ask New for needs no kernel built
// first.
func Footprint(l *inject.Launch) int64 {
	k := &Kernel{l: l}
	k.layout()
	return k.fp
}

// producerFatal tells whether a producer's error is the signature's: out
// of device memory, or a fault on its first launch that lost the CUDA
// context (cuda.IsSticky). Other errors drop the producer.
func producerFatal(err error) bool {
	return cuda.IsCode(err, cuda.CodeOutOfMemory) || cuda.IsSticky(err)
}

// Kept says, one line each, which words of the launch's parameters the
// recorder took for device pointers but the replay keeps as recorded,
// since they are likely packed fields (see suspects); nil when none is.
func (k *Kernel) Kept() []string { return k.kept }

// Note says what the replay of k leaves out or keeps as recorded: the
// producers left out of its priming, the parameter words not re-pointed;
// "" when none.
func (k *Kernel) Note() string {
	var parts []string
	if dr := k.dropped; len(dr) > 0 {
		parts = append(parts, fmt.Sprintf("primed without %d of its %d producers (%s)", len(dr), len(dr)+len(k.producers), dr[0]))
	}
	if kw := k.kept; len(kw) > 0 {
		parts = append(parts, fmt.Sprintf("%d parameter words kept as recorded (%s)", len(kw), kw[0]))
	}
	return strings.Join(parts, "; ")
}

// Dropped says, one line each, which producers were left out of the
// priming because they could not be made launchable; nil when none was.
func (k *Kernel) Dropped() []string { return k.dropped }

// configure sets the function's attributes and the launch configuration.
func (k *Kernel) configure() error {
	defer k.timing.enter(k.timing.enter(workModules))
	l := k.l
	if l.MaxDynSmem > 0 && l.Smem > 48<<10 {
		if err := k.fn.SetAttribute(cuda.FuncAttrMaxDynamicSharedSizeBytes, l.MaxDynSmem); err != nil {
			return fmt.Errorf("%s: dynamic shared memory %d: %w", l.Name, l.MaxDynSmem, err)
		}
	}
	if l.NonPortableCluster != 0 {
		if err := k.fn.SetAttribute(cuda.FuncAttribute(14), 1); err != nil {
			return fmt.Errorf("%s: non-portable cluster size: %w", l.Name, err)
		}
	}
	k.cfg = cuda.LaunchConfig{Grid: l.Grid, Block: l.Block, SharedMem: l.Smem}
	for _, a := range l.Attrs {
		if !passAttrs[a.ID] {
			continue
		}
		var v [64]byte
		copy(v[:], a.Value)
		k.cfg.Attrs = append(k.cfg.Attrs, cuda.LaunchAttr{ID: a.ID, Value: v})
	}
	return nil
}

// launchable keeps the first of fns that the driver launches with the
// recorded configuration, and launches it once: a module whose launch the
// driver refuses is not the launched binary (a Triton kernel built for
// other arguments that no attribute tells apart).
func (k *Kernel) launchable(fns []*cuda.Function, s *cuda.Stream) error {
	defer k.timing.enter(k.timing.enter(workLaunches))
	var first error
	for _, fn := range fns {
		k.fn = fn
		err := k.configure()
		if err == nil {
			if err = k.Launch(s, 0); err == nil {
				if err := s.Synchronize(); err != nil {
					return &FirstLaunchError{Kernel: k.l.Name, Err: err} // the kernel's own
				}
				return nil
			}
		}
		if first == nil {
			first = err
		}
	}
	return fmt.Errorf("%s: none of the %d modules that define it launches as recorded: %w", k.l.Name, len(fns), first)
}

// groupPointers groups the launch's pointers by allocation, leaving out
// the suspect words, which no buffer backs.
func (k *Kernel) groupPointers() {
	byGroup := map[int]*group{}
	for i, p := range k.l.Ptrs {
		if k.suspect[i] {
			continue
		}
		g := byGroup[p.Group]
		if g == nil {
			g = &group{base: p.Base, size: p.Range}
			byGroup[p.Group] = g
			k.groups = append(k.groups, g)
		}
		g.ptrs = append(g.ptrs, i)
	}
	for _, g := range k.groups {
		slices.SortStableFunc(g.ptrs, func(a, b int) int { return cmp.Compare(k.l.Ptrs[a].Value, k.l.Ptrs[b].Value) })
	}
}

// allocate allocates and fills sets copies of every group and builds a
// parameter block for each set.
func (k *Kernel) allocate(fsys fs.FS, sets int, s *cuda.Stream) error {
	defer k.timing.enter(k.timing.enter(workMemory))
	offsets := make([]int, len(k.l.Params))
	for i, p := range k.l.Params {
		offsets[i] = p[0]
	}
	for set := 0; set < sets; set++ {
		for _, g := range k.groups {
			buf, fresh, err := k.buffer(g)
			if err != nil {
				return err
			}
			g.bufs = append(g.bufs, buf)
			write := fill
			if !fresh {
				write = writeViews
			}
			filled, err := write(fsys, g, k.views(g), deviceBuf(buf, s), k.snaps, k.timing)
			if err != nil {
				return fmt.Errorf("%s: %w", k.l.Name, err)
			}
			if !filled && set == 0 && fresh {
				k.zeroed++
			}
		}
		if err := k.repoint(set, s); err != nil {
			return fmt.Errorf("%s: inner pointers: %w", k.l.Name, err)
		}
		pb, err := cuda.NewParamBlock(k.paramBlob(set), offsets)
		if err != nil {
			return err
		}
		k.blocks = append(k.blocks, pb)
	}
	return s.Synchronize()
}

// buffer is a buffer for g: the Shared's, where the kernel has one (fresh
// the first time the Shared gives it), else one of its own (fresh).
func (k *Kernel) buffer(g *group) (cuda.DevicePtr, bool, error) {
	if k.shared != nil {
		buf, fresh, err := k.shared.buffer(g.base, g.size)
		if err != nil {
			return 0, false, fmt.Errorf("%s: %w", k.l.Name, err)
		}
		g.shared = true
		return buf, fresh, nil
	}
	buf, err := cuda.MemAlloc(int(max(g.size, 1)))
	if err != nil {
		return 0, false, fmt.Errorf("%s: allocating %d bytes: %w", k.l.Name, g.size, err)
	}
	return buf, true, nil
}

// paramBlob is the launch's parameter buffer for buffer set set: each
// grouped pointer re-pointed into its group's buffer, at the same offset
// from the allocation's start; every other byte as recorded.
func (k *Kernel) paramBlob(set int) []byte {
	blob := slices.Clone([]byte(k.l.Blob))
	for _, g := range k.groups {
		for _, i := range g.ptrs {
			p := k.l.Ptrs[i]
			binary.LittleEndian.PutUint64(blob[p.Off:], uint64(g.bufs[set])+(p.Value-g.base))
		}
	}
	return blob
}

// Launch implements launch.Kernel: the restores, then the kernel.
func (k *Kernel) Launch(s *cuda.Stream, set int) error {
	set %= len(k.blocks)
	for _, r := range k.restores {
		if err := cuda.MemcpyDtoDAsync(r.g.bufs[set].Add(int(r.off)), r.pristine, r.n, s); err != nil {
			return err
		}
	}
	return k.fn.LaunchBlock(k.cfg, s, k.blocks[set])
}

// Sets implements launch.Kernel.
func (k *Kernel) Sets() int { return len(k.blocks) }

// Footprint implements launch.Kernel: the allocations the launch points
// into, whole (an upper bound of what it touches).
func (k *Kernel) Footprint() int64 { return k.fp }

// Work implements launch.Kernel.
func (k *Kernel) Work() launch.Work { return k.work }

// Capturable implements launch.Kernel.
func (k *Kernel) Capturable() bool { return true }

// Zeroed is the number of buffers filled with zeros because the capture
// kept none of their bytes.
func (k *Kernel) Zeroed() int { return k.zeroed }

// Close implements launch.Kernel.
func (k *Kernel) Close() error {
	var first error
	for _, p := range k.producers {
		if err := p.Close(); err != nil && first == nil {
			first = err
		}
	}
	k.producers = nil
	for _, r := range k.restores {
		if err := r.pristine.Free(); err != nil && first == nil {
			first = err
		}
	}
	k.restores = nil
	for _, pb := range k.blocks {
		pb.Free()
	}
	k.blocks = nil
	for _, g := range k.groups {
		for _, b := range g.bufs {
			if g.shared {
				break // the Shared's to free
			}
			if err := b.Free(); err != nil && first == nil {
				first = err
			}
		}
		g.bufs = nil
	}
	return first
}
