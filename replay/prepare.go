package replay

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kreplay/kreplay/captured"
	"github.com/kreplay/kreplay/gpu"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier1"
	"github.com/kreplay/kreplay/tier2"
	"github.com/kreplay/kreplay/tier3"
)

// memoryReserve is device memory Prepare leaves free for libraries and
// the L2 flush buffer.
const memoryReserve = 1 << 30

// maxSets caps rotating buffer sets for tiny signatures.
const maxSets = 64

// snapshotsKept bounds the host memory a Device keeps captured binaries'
// snapshots in (a Group's GPUs share one store of this times their
// number), and the periods made of them (captured.Snapshots): a
// compiled Llama prefill's 164 recorded launches name 308 snapshots,
// whose 265 samples scramble into 1 MiB periods each. A run's prefetch
// of the next signature's files (captured.Snapshots.Prefetch) takes at
// most half of it, and evicts nothing the signature before used as long
// as that fits in the other half, as one signature's snapshots, periods
// and module images are expected to (the periods of all the compiled
// Llama prefill's signatures take about 270 MiB).
const snapshotsKept = 1 << 30

// Prepared is a signature made launchable on a device.
type Prepared struct {
	Sig *signatures.Signature
	// Path says how the signature replays: "memcpy", "memset", a library
	// call ("cublasGemmEx", ...).
	Path   string
	Kernel gpu.Kernel
	// Approximate says why the replay only moves the op's bytes instead of
	// computing it (tier 3 without a kernel for the op); "" when exact.
	Approximate string
	// Fallback says why a signature planned for a vendor library (cuDNN
	// SDPA) replays with kreplay's own kernel instead; "" when it did not
	// fall back.
	Fallback string
	// Note says what else the replay left out, such as producers of a
	// captured kernel that could not be made launchable; "" when none.
	Note string
	// Cache is the cache mode the buffers were allocated for.
	Cache CacheMode
	dev   *Device
}

// Close frees the prepared signature's buffers.
func (p *Prepared) Close() error {
	if p.Kernel == nil {
		return nil
	}
	err := p.dev.do(p.Kernel.Close)
	p.Kernel = nil
	return err
}

// Prepare makes a signature launchable with buffers for the rotating cache
// mode (enough buffer sets to exceed the L2 cache twice over). See
// PrepareFor.
func (d *Device) Prepare(sig *signatures.Signature) (*Prepared, error) {
	return d.PrepareFor(sig, Rotating)
}

// PrepareFor makes a signature launchable, dispatching by its tier, with
// random input data and as many buffer sets as the cache mode needs (Auto
// resolves to the signature's own mode, see CacheMode.For; CacheDefault to
// DefaultCacheMode). A
// signature that cannot be replayed, or does not fit in device memory,
// gets a *SignatureError naming it.
func (d *Device) PrepareFor(sig *signatures.Signature, cache CacheMode) (*Prepared, error) {
	return d.prepareFor(sig, cache, nil, nil)
}

// prepareFor is PrepareFor, charging a captured binary's host time to t
// (when not nil) by kind of work; with shared (not nil), a captured
// binary gets the buffers of the allocations it points into from it
// (captured.Options.Shared: the timeline's recorded data flow).
func (d *Device) prepareFor(sig *signatures.Signature, cache CacheMode, t *captured.Timing, shared *captured.Shared) (*Prepared, error) {
	if err := unpreparable(sig); err != nil {
		return nil, sigErr(sig, "prepare", err)
	}
	prods, cache, energySets := primers(sig, cache.Resolve())
	var sets func(budget int64) int
	if sig.Binary != nil && sig.Binary.Launch != nil {
		sets = func(budget int64) int {
			return setsFor(sig, captured.Footprint(sig.Binary.Launch), true, cache == Rotating, d.L2Bytes, budget)
		}
	}
	return d.prepare(sig, cache, sets, func(opt launch.Options) (launch.Kernel, string, error) {
		return d.build(sig, opt, captured.Options{Producers: prods, EnergySets: energySets, Timing: t, Shared: shared})
	})
}

// unpreparable is why PrepareFor refuses sig; nil when it does not.
func unpreparable(sig *signatures.Signature) error {
	switch {
	case sig.Unreplayable != "":
		return fmt.Errorf("%w: %s", ErrUnreplayable, sig.Unreplayable)
	case sig.PartOf != "":
		return fmt.Errorf("%w %s", ErrPartOf, sig.PartOf)
	}
	return nil
}

// primers is what PrepareFor makes of a resolved cache mode for sig: the
// launches that prime its captured binary (nil for another signature),
// the cache mode it is prepared for, and whether a captured binary's
// energy windows rotate buffer sets (captured.Options.EnergySets).
func primers(sig *signatures.Signature, cache CacheMode) (prods []*inject.Producer, _ CacheMode, energySets bool) {
	c := cache.For(sig)
	switch {
	case sig.Binary == nil:
		return nil, c, false
	case cache == Context && c == Primed:
		// The launches recorded just before it. A memory-bound GEMM
		// reads its weights once per inference: its energy windows
		// rotate buffer sets, so that they stream them from device
		// memory as the real run does, not from the L2, where one set
		// would charge them far too little energy.
		return sig.Binary.Context, Primed, sig.Class == signatures.ClassGEMM
	case (cache == Auto || cache == Context) && c != Rotating:
		return sig.Binary.Producers, Primed, false // its producer, if any, primes it
	case c == Primed:
		return sig.Binary.Producers, c, false
	}
	return nil, c, false
}

// PathWith prefixes the Path of a signature prepared with a kernel given
// by the caller (PrepareWith): "with:" and the signature's kernel name.
const PathWith = "with:"

// PrepareWith makes sig launchable with the kernel b builds instead of
// its tier's: a kernel kreplay does not have, such as a what-if's fused
// kernel (package whatif). It gets what a tier-3 kernel gets (see
// tier3.NewWith): buffer sets for the cache mode (Auto resolves by
// CacheMode.For, Primed for a tier-3 signature), priming, footprint and
// work from b's tensors. Its Path is PathWith and sig.Kernel; its
// fidelity is the same kernel when CUPTI saw sig.Kernel run.
func (d *Device) PrepareWith(sig *signatures.Signature, cache CacheMode, b tier3.Builder) (*Prepared, error) {
	if b == nil {
		return nil, sigErr(sig, "prepare", errors.New("no builder"))
	}
	cache = cache.For(sig)
	return d.prepare(sig, cache, nil, func(opt launch.Options) (launch.Kernel, string, error) {
		comp, err := d.compiler()
		if err != nil {
			return nil, "", err
		}
		k, err := tier3.NewWith(sig, b, tier3.Device{Compiler: comp, SMs: d.SMs, L2: d.L2Bytes, Config: d.Tier3}, opt, d.stream)
		if err != nil {
			return nil, "", err
		}
		return k, PathWith + sig.Kernel, nil
	})
}

// prepare builds sig's kernel with build, with as many buffer sets as the
// cache mode needs: those sets gives for a budget of bytes, where it is
// not nil (a captured binary's footprint is known before it is built),
// else as rotationSets counts them on a kernel built with one set, built
// again with them. Call outside Do.
func (d *Device) prepare(sig *signatures.Signature, cache CacheMode, sets func(budget int64) int, build func(launch.Options) (launch.Kernel, string, error)) (*Prepared, error) {
	p := &Prepared{Sig: sig, Cache: cache, dev: d}
	err := d.do(func() error {
		d.fallback = ""
		free, _, err := cuda.MemGetInfo()
		if err != nil {
			return err
		}
		opt := launch.Options{Sets: 1, Seed: seedOf(sig.ID), FreeBytes: int64(free) - memoryReserve}
		rotates := cache == Rotating || cache == Primed
		if rotates && sets != nil {
			opt.Sets = sets(opt.FreeBytes / 2)
		}
		k, path, err := build(opt)
		if err != nil {
			return err
		}
		if rotates && sets == nil {
			if n := rotationSets(sig, k, d.L2Bytes, opt.FreeBytes/2); n > 1 {
				if err := k.Close(); err != nil {
					return err
				}
				opt.Sets = n
				if k, path, err = build(opt); err != nil {
					return err
				}
			}
		}
		p.Kernel, p.Path, p.Fallback = k, path, d.fallback
		if c, ok := k.(*captured.Kernel); ok {
			p.Note = c.Note()
		}
		if t3, ok := k.(*tier3.Kernel); ok {
			p.Approximate = t3.Approximate()
		}
		if g := sig.GEMM; g != nil && g.Grouped != nil && sig.Binary == nil {
			p.Approximate = g.Grouped.Guess(g.M)
		}
		return nil
	})
	if err != nil {
		return nil, sigErr(sig, "prepare", err)
	}
	return p, nil
}

// PathCaptured is the Path of a signature replayed by its captured
// binary (package captured).
const PathCaptured = "captured"

// build dispatches: a signature with a captured binary replays it with co
// (its primers in the primed cache mode, energy sets, timing) and opt, the
// others by tier. Call inside Do.
func (d *Device) build(sig *signatures.Signature, opt launch.Options, co captured.Options) (launch.Kernel, string, error) {
	if b := sig.Binary; b != nil {
		if b.FS == nil {
			return nil, "", fmt.Errorf("captured binary of %s: the set was read without its kernels directory", sig.ID)
		}
		co.Options, co.Work, co.Snapshots = opt, d.work(sig), d.snaps
		k, err := captured.New(b.Launch, b.FS, co, d.stream)
		if err != nil {
			return nil, "", err
		}
		return k, PathCaptured, nil
	}
	switch {
	case sig.Tier == signatures.TierMemory:
		k, err := tier1.New(sig, opt, d.stream)
		if err != nil {
			return nil, "", err
		}
		return k, string(sig.Class), nil
	case sig.Class == signatures.ClassGEMM && sig.Tier == signatures.TierLibrary:
		libs, err := d.libraries()
		if err != nil {
			return nil, "", err
		}
		k, err := tier2.NewGEMM(sig, libs, opt, d.stream)
		if err != nil {
			return nil, "", err
		}
		return k, string(k.API()), nil
	case sig.Class == signatures.ClassCollective:
		return nil, "", errCollectiveOnDevice
	case sig.Tier == signatures.TierKernel && tier2.PlanCuDNNSDPA(sig):
		k, err := d.buildCuDNNSDPA(sig, opt)
		if err == nil {
			return k, string(tier2.APICuDNNSDPA), nil
		}
		// kreplay's flash kernel replays it; the result says why.
		d.fallback = "cuDNN SDPA: " + err.Error()
		return d.buildTier3(sig, opt)
	case sig.Tier == signatures.TierKernel:
		return d.buildTier3(sig, opt)
	}
	return nil, "", fmt.Errorf("%w: tier %d class %s", ErrNotImplemented, sig.Tier, sig.Class)
}

// buildCuDNNSDPA builds a cuDNN SDPA signature's tier-2 replay. Call
// inside Do.
func (d *Device) buildCuDNNSDPA(sig *signatures.Signature, opt launch.Options) (launch.Kernel, error) {
	libs, err := d.libraries()
	if err != nil {
		return nil, err
	}
	return tier2.NewAttention(sig, libs, opt, d.stream)
}

// buildTier3 builds a tier-3 signature's kernel. Call inside Do.
func (d *Device) buildTier3(sig *signatures.Signature, opt launch.Options) (launch.Kernel, string, error) {
	comp, err := d.compiler()
	if err != nil {
		return nil, "", err
	}
	k, err := tier3.New(sig, tier3.Device{Compiler: comp, SMs: d.SMs, L2: d.L2Bytes, Config: d.Tier3}, opt, d.stream)
	if err != nil {
		return nil, "", err
	}
	path := "kreplay:" + strings.TrimPrefix(sig.Op, "aten::")
	if k.Approximate() != "" {
		path = "approximate"
	}
	return k, path, nil
}

// seedOf derives the random-data seed from a signature ID, so that a
// signature gets the same inputs in every run.
func seedOf(id string) uint64 {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * 1099511628211
	}
	return h
}

// rotationSets is how many buffer sets a rotating replay of k cycles
// through: enough to exceed the L2 twice over, within budget bytes. A
// captured GEMM's buffers are the allocator segments it pointed into,
// often far larger than what it reads (a decode step's 8 MB weight in a
// 526 MB segment of weights): counted by the segments, it would get one
// set and find its weight in the L2 at every launch but the first, where
// the real model, with every layer's weights in between, reads it from
// device memory. Its count therefore follows the operands' bytes (the
// signature's GEMM shapes); the budget still bounds the segments.
func rotationSets(sig *signatures.Signature, k launch.Kernel, l2, budget int64) int {
	_, isCaptured := k.(*captured.Kernel)
	return setsFor(sig, k.Footprint(), isCaptured, false, l2, budget)
}

// setsFor is rotationSets for a kernel of footprint fp bytes. With
// tensors (the Rotating cache mode), a captured kernel that is not a GEMM
// counts its sets by its op's tensors (TensorParams.Bytes, an estimate)
// as a GEMM does by its operands: counted by its segments, an RMSNorm's
// mean over a 12.6 MB activation in a 600 MB segment would get one set
// and read its input from the L2 at every launch. The other modes that
// rotate (Primed) keep the segments' count.
func setsFor(sig *signatures.Signature, fp int64, isCaptured, tensors bool, l2, budget int64) int {
	if b := touchedBytes(sig, isCaptured, tensors); b > 0 && b < fp {
		n := launch.SetsFor(b, l2, 0, maxSets)
		if budget > 0 {
			n = min(n, int(budget/fp))
		}
		return max(1, n)
	}
	return launch.SetsFor(fp, l2, budget, maxSets)
}

// touchedBytes is what one launch of a captured kernel reads and writes,
// where the signature says: a GEMM's operands and output, and with
// tensors another op's tensors; 0 for a kernel that is not captured (its
// buffers are its operands) or where it is unknown.
func touchedBytes(sig *signatures.Signature, isCaptured, tensors bool) int64 {
	switch {
	case !isCaptured:
		return 0
	case sig.GEMM != nil:
		return gemmBytes(sig.GEMM)
	case tensors && sig.Tensor != nil:
		return sig.Tensor.Bytes
	}
	return 0
}

// gemmWork is a GEMM's FLOPs and the bytes of its operands and result.
func gemmWork(g *signatures.GEMM) launch.Work {
	return launch.Work{FLOPs: 2 * g.M * g.N * g.K * max(g.Batch, 1), Bytes: gemmBytes(g)}
}

// gemmBytes is the bytes of a GEMM's operands and output, 0 where a dtype
// is unknown.
func gemmBytes(g *signatures.GEMM) int64 {
	a, b, c := signatures.DTypeSize(g.AType), signatures.DTypeSize(g.BType), signatures.DTypeSize(g.OutType)
	if a == 0 || b == 0 || c == 0 {
		return 0
	}
	return (g.M*g.K*a + g.K*g.N*b + g.M*g.N*c) * max(g.Batch, 1)
}

// work is what a captured binary's invocation does, where the signature
// says: a GEMM's FLOPs and its operands' and output's bytes, as tier 2
// counts them for the same GEMM (so that the roofline places it). Other
// kernels' bytes are left unknown (0): the allocations a binary points
// into bound them only loosely.
func (d *Device) work(sig *signatures.Signature) launch.Work {
	if g := sig.GEMM; g != nil {
		return gemmWork(g)
	}
	return launch.Work{}
}
