package tier3

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kreplay/kreplay/gpu"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// Instance is one buffer set of an op, ready to launch.
type Instance struct {
	// Launch enqueues the op on s.
	Launch func(s *gpu.Stream) error
	// Inputs and Outputs are the op's tensors (for tests and footprints).
	Inputs  []*Tensor
	Outputs []*Tensor
	// FLOPs of one launch, when the op computes (0 otherwise).
	FLOPs int64
	// Strategy is the traced PyTorch code path the launch follows (see
	// Config.NoFaithful), or "" for kreplay's fast kernel.
	Strategy string
}

// Builder builds one buffer set of an op from its signature. It returns
// an error wrapping ErrUnsupported for traced cases it does not handle, so
// that the op falls back to the approximate kernel.
type Builder func(e *Env, sig *signatures.Signature) (*Instance, error)

// ErrUnsupported marks a traced case a builder does not replay exactly.
var ErrUnsupported = errors.New("not supported by kreplay's kernels")

var builders = map[string]Builder{}

// Register makes b the builder of the given aten ops. Op families call it
// from init functions.
func Register(b Builder, ops ...string) {
	for _, op := range ops {
		if _, dup := builders[op]; dup {
			panic("tier3: two builders for " + op)
		}
		builders[op] = b
	}
}

// Kernel is a tier-3 signature made launchable.
type Kernel struct {
	sig    *signatures.Signature
	sets   []*Instance
	envs   []*Env
	approx string // why the replay is approximate; "" when exact
	sms    int
	l2     int64
	touch  *cuda.Function // kr_touch, once Prime has run
	twins  [][]primeCopy  // per set: where Prime writes each input from, once it has run
}

// primeCopy is one input Prime writes: n bytes at dst from src, a twin
// holding the same bytes (src == dst where no twin could be allocated).
type primeCopy struct {
	dst, src cuda.DevicePtr
	n        int64
}

var _ launch.Primer = (*Kernel)(nil)

// Device describes what a tier-3 kernel is built for.
type Device struct {
	Compiler *Compiler
	SMs      int
	L2       int64 // L2 cache bytes (0: unknown; Prime then writes every input from a twin)
	// Config chooses the replay where a choice is a guess (the zero
	// value: the defaults).
	Config Config
}

// Has reports whether kreplay has its own kernel for op (which may still
// fall back to the stand-in for inputs it does not handle).
func Has(op string) bool { return builders[op] != nil }

// faithfulChecks say, per op, whether a signature replays with the
// kernel PyTorch ran (registerFaithful).
var faithfulChecks = map[string]func(*signatures.Signature, Config) bool{}

// registerFaithful makes check the test of FaithfulFor for the given
// ops. Op families that reproduce PyTorch's kernels call it from init.
func registerFaithful(check func(*signatures.Signature, Config) bool, ops ...string) {
	for _, op := range ops {
		if _, dup := faithfulChecks[op]; dup {
			panic("tier3: two faithful checks for " + op)
		}
		faithfulChecks[op] = check
	}
}

// FaithfulFor reports, without a GPU, whether sig's replay reproduces the
// kernel PyTorch ran, its code path and traced launch shape (c.NoFaithful unset,
// and the op's family recognises the traced kernel); false where the
// family does not say (the replay may still follow PyTorch's strategy:
// Instance.Strategy tells once built).
func FaithfulFor(sig *signatures.Signature, c Config) bool {
	check := faithfulChecks[sig.Op]
	return c.faithful() && check != nil && sig.Unreplayable == "" && check(sig, c)
}

// New builds the buffer sets of a tier-3 signature. A signature with no
// exact kernel gets the approximate one (see Approximate) rather than an
// error; errors are for what cannot run at all (no memory, a CUDA error).
func New(sig *signatures.Signature, dev Device, opt gpu.Options, s *gpu.Stream) (*Kernel, error) {
	if sig.Tier != signatures.TierKernel {
		return nil, fmt.Errorf("%s: tier %d is not tier 3", sig.ID, sig.Tier)
	}
	k := &Kernel{sig: sig, sms: dev.SMs, l2: dev.L2}
	b := builders[sig.Op]
	switch {
	case sig.Unreplayable != "":
		k.approx = sig.Unreplayable
	case b == nil:
		k.approx = signatures.TritonStandIn(sig)
		if k.approx == "" {
			k.approx = fmt.Sprintf("no kreplay kernel for %s yet", opName(sig))
		}
	}
	return k.buildSets(dev, opt, s, func(e *Env, i int) (*Instance, error) {
		if k.approx == "" {
			inst, err := b(e, sig)
			if !errors.Is(err, ErrUnsupported) || i > 0 {
				return inst, err
			}
			k.approx = err.Error()
			e.free()
		}
		return approximate(e, sig)
	})
}

// buildSets builds k's buffer sets, opt.Sets of them (at least one), each
// with build on an Env of its own (seeded from opt.Seed and the set's
// index) that starts from the memory budget the sets before it left. On
// the first error it closes k and returns the error.
func (k *Kernel) buildSets(dev Device, opt gpu.Options, s *gpu.Stream, build func(e *Env, i int) (*Instance, error)) (*Kernel, error) {
	budget := opt.FreeBytes
	for i := 0; i < max(opt.Sets, 1); i++ {
		e := &Env{Compiler: dev.Compiler, Stream: s, SMs: dev.SMs, cfg: dev.Config, seed: opt.Seed + uint64(i)<<32, budget: budget}
		k.envs = append(k.envs, e)
		inst, err := build(e, i)
		if err != nil {
			k.Close()
			return nil, err
		}
		budget = e.budget
		k.sets = append(k.sets, inst)
	}
	return k, nil
}

// NewWith builds the buffer sets of sig with b instead of the builder
// registered for its op: a kernel kreplay does not have, such as a
// what-if's fused kernel (package whatif), with the buffer sets, priming
// and footprint of a tier-3 kernel. sig may be of any tier and op. An
// error from b, ErrUnsupported included, is returned: there is no
// stand-in for a kernel given this way.
func NewWith(sig *signatures.Signature, b Builder, dev Device, opt gpu.Options, s *gpu.Stream) (*Kernel, error) {
	if b == nil {
		return nil, fmt.Errorf("%s: no builder", sig.ID)
	}
	k := &Kernel{sig: sig, sms: dev.SMs, l2: dev.L2}
	return k.buildSets(dev, opt, s, func(e *Env, _ int) (*Instance, error) {
		inst, err := b(e, sig)
		if err == nil && (inst == nil || inst.Launch == nil) {
			err = fmt.Errorf("%s: the builder made no launch", sig.ID)
		}
		return inst, err
	})
}

func opName(sig *signatures.Signature) string {
	if sig.Op == "" {
		return "kernel " + sig.Kernel
	}
	return sig.Op
}

// Approximate returns why the replay only moves the op's bytes, or "" when
// it computes the real op.
func (k *Kernel) Approximate() string { return k.approx }

// Instance returns buffer set i, for tests.
func (k *Kernel) Instance(i int) *Instance { return k.sets[i] }

// Launch enqueues buffer set set's op on s.
func (k *Kernel) Launch(s *gpu.Stream, set int) error { return k.sets[set].Launch(s) }

// TouchKernel names the kernel Prime runs, so that its activity records
// can be told from the op's.
const TouchKernel = "kr_touch"

// Prime leaves buffer set set's input tensors as the kernels that produced
// them leave them in a real forward pass: each is written, in argument
// order, from a twin that holds the same bytes, so that it is just written
// and in L2 as far as the L2 holds it (for a tensor larger than the L2,
// its tail), beside the lines its producer read. A producer reads at least
// what it writes: rewriting the inputs in place instead leaves more of
// them in L2, and on an H100 PyTorch's own mean over Llama-7B's
// f32[4,512,4096] took 17.0 µs after an in-place rewrite, 20.5 after a
// copy and 20.1 after its real producer (pow), 21.06 traced
// (scripts/gpu/context_probe3.py, results/h100/tier3-producer). The twins
// are allocated and filled on the first call for each set (by the same
// kernel); an input whose twin does not fit in the memory budget is
// rewritten in place. It is enqueued on s, before Launch; its kernels
// (TouchKernel) are not the op's.
//
// An input smaller than 1/32 of the L2 is rewritten in place instead: the
// lines left resident are the same either way, and on an H100 the twin
// made BLOOM-560M decode's 8 KB scalar adds and muls 0.13 µs slower
// (1.18 to 1.31 µs against 1.12 traced) for no reason in the cache state
// that could be found.
func (k *Kernel) Prime(s *gpu.Stream, set int) error {
	if k.touch == nil {
		f, err := k.envs[0].Function(Util, TouchKernel)
		if err != nil {
			return err
		}
		k.touch = f
		k.twins = make([][]primeCopy, len(k.sets))
	}
	if k.twins[set] == nil {
		var done []cuda.DevicePtr
		cps := []primeCopy{}
		for _, t := range k.sets[set].Inputs {
			if t.Ptr == 0 || slices.Contains(done, t.Ptr) {
				continue
			}
			done = append(done, t.Ptr)
			c := primeCopy{dst: t.Ptr, src: t.Ptr, n: t.Bytes()}
			if c.n < k.l2/32 {
				cps = append(cps, c)
				continue
			}
			if p, err := k.envs[len(k.envs)-1].alloc(c.n); err == nil { // the last set's env holds what is left of the budget
				if err := k.copyBytes(s, p, t.Ptr, c.n); err != nil {
					return fmt.Errorf("filling the twin of an input of %d bytes: %w", c.n, err)
				}
				c.src = p
			}
			cps = append(cps, c)
		}
		k.twins[set] = cps
	}
	for _, c := range k.twins[set] {
		if err := k.copyBytes(s, c.dst, c.src, c.n); err != nil {
			return fmt.Errorf("priming input of %d bytes: %w", c.n, err)
		}
	}
	return nil
}

// copyBytes enqueues kr_touch from src to dst on s.
func (k *Kernel) copyBytes(s *cuda.Stream, dst, src cuda.DevicePtr, n int64) error {
	blocks := max(1, min((n/16+255)/256, int64(max(k.sms, 1))*8))
	return k.touch.Launch([3]uint32{uint32(blocks), 1, 1}, [3]uint32{256, 1, 1}, 0, s, dst, src, uint64(n), uint32(0))
}

// PrimeKernels returns TouchKernel.
func (k *Kernel) PrimeKernels() []string { return []string{TouchKernel} }

// Sets returns the number of buffer sets.
func (k *Kernel) Sets() int { return len(k.sets) }

// Footprint is the bytes of one set's tensors.
func (k *Kernel) Footprint() int64 {
	var n int64
	for _, t := range append(k.sets[0].Inputs, k.sets[0].Outputs...) {
		n += t.Bytes()
	}
	return n
}

// Work counts the tensors' bytes (each read or written once) and FLOPs.
func (k *Kernel) Work() gpu.Work {
	return launch.Work{Bytes: k.Footprint(), FLOPs: k.sets[0].FLOPs}
}

// Capturable is true: tier-3 kernels are plain launches.
func (k *Kernel) Capturable() bool { return true }

// Close frees every buffer set.
func (k *Kernel) Close() error {
	var errs []error
	for _, e := range k.envs {
		errs = append(errs, e.free())
	}
	k.envs, k.sets = nil, nil
	return errors.Join(errs...)
}

// approximate builds the stand-in: read the op's input bytes and write its
// output bytes with the traced launch shape (or a default one).
func approximate(e *Env, sig *signatures.Signature) (*Instance, error) {
	var in, out int64
	if p := sig.Tensor; p != nil {
		out = p.Numel * max(signatures.DTypeSize(firstDType(p.DTypes)), 2)
		in = max(p.Bytes-out, 0)
	}
	if in == 0 && out == 0 {
		// Nothing known of the op's tensors: move as many bytes as its
		// threads, 16 each, as a floor.
		l := sig.Launch
		threads := int64(1)
		if l != nil {
			threads = l.Grid[0] * l.Grid[1] * l.Grid[2] * l.Block[0] * l.Block[1] * l.Block[2]
		}
		in, out = 16*threads, 16*threads
	}
	in, out = (in+15)&^15, (out+15)&^15
	src, err := e.NewTensor([]int64{in}, []int64{1}, "u8")
	if err != nil {
		return nil, err
	}
	dst, err := e.NewTensor([]int64{out}, []int64{1}, "u8")
	if err != nil {
		return nil, err
	}
	fns, elems := approxMath(sig.Tensor)
	name := "kr_approx"
	switch {
	case sig.Tensor != nil && sig.Tensor.Passes == 2:
		name = "kr_approx_2pass"
	case fns != 0:
		name = "kr_approx_math"
	}
	f, err := e.Function(Util, name)
	if err != nil {
		return nil, err
	}
	grid, block := [3]uint32{uint32(max(1, min(in+out, 1<<16)/4096)), 1, 1}, [3]uint32{256, 1, 1}
	if l := sig.Launch; l != nil {
		for i := 0; i < 3; i++ {
			grid[i], block[i] = uint32(l.Grid[i]), uint32(l.Block[i])
		}
	}
	return &Instance{
		Inputs: []*Tensor{src}, Outputs: []*Tensor{dst},
		Launch: func(s *cuda.Stream) error {
			if name != "kr_approx" {
				return f.Launch(grid, block, 0, s, src.Ptr, uint64(in/16), dst.Ptr, uint64(out/16), uint64(elems), fns)
			}
			return f.Launch(grid, block, 0, s, src.Ptr, uint64(in/16), dst.Ptr, uint64(out/16))
		},
	}, nil
}

// approxMath returns kr_approx_math's function mask for the
// transcendentals p names (signatures.TensorParams.Math) and the elements
// they are evaluated on, the product of p's shape; 0 when there are none.
func approxMath(p *signatures.TensorParams) (uint32, int64) {
	if p == nil || len(p.Math) == 0 {
		return 0, 0
	}
	var fns uint32
	for _, m := range p.Math {
		fns |= approxMathBits[m]
	}
	n := int64(1)
	for _, d := range p.Shape {
		n *= d
	}
	return fns, n
}

// approxMathBits are kr_approx_math's function bits.
var approxMathBits = map[string]uint32{"sin": 1, "cos": 2, "exp": 4, "log": 8, "tanh": 16, "erf": 32}

func firstDType(d []string) string {
	if len(d) == 0 {
		return "f16"
	}
	return d[0]
}
