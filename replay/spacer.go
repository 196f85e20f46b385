package replay

import (
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier3"
)

// A model runs a memset right before or after a kernel: PyTorch zeroes a
// reduction's accumulator before the reduction, a library its workspace
// before its GEMM. A batch of a memset signature would run its memsets
// back to back, where they take a tail the model's do not have (4-byte
// memsets on an H100, scripts/gpu/memset_probe.py: median 0.768 µs and
// upper quartile 0.928 µs queued back to back; 0.705 and 0.736 µs each
// right after an add; 0.768 µs inside w.abs().max(), where the FP8
// prefill traced 0.77 µs). So each of its launches follows a spacer, an
// empty one-thread kernel whose CUPTI record the replay time leaves out.
const (
	spacerName   = "kr_spacer"
	spacerSource = `extern "C" __global__ void kr_spacer() {}`
)

// spacedCopy is the largest memcpy that follows a spacer: small copies
// (a step's position or token ids, 8 bytes host to device) run between
// kernels in a model as memsets do. A guess, not yet probed as memsets
// were.
const spacedCopy = 64 << 10

// spaced reports whether sig's launches each follow a spacer: memsets,
// and memcpys of at most spacedCopy bytes.
func spaced(sig *signatures.Signature) bool {
	if sig.Tier != signatures.TierMemory {
		return false
	}
	switch sig.Class {
	case signatures.ClassMemset:
		return true
	case signatures.ClassMemcpy:
		return sig.Memory != nil && sig.Memory.Bytes <= spacedCopy
	}
	return false
}

// spacer returns the spacer kernel, compiled on first use. Call inside Do.
func (d *Device) spacer() (*cuda.Function, error) {
	if d.spacerFn != nil {
		return d.spacerFn, nil
	}
	comp, err := d.compiler()
	if err != nil {
		return nil, err
	}
	fn, err := comp.Function(tier3.Source{Name: "kr_spacer.cu", Code: spacerSource}, spacerName)
	if err != nil {
		return nil, err
	}
	d.spacerFn = fn
	return fn, nil
}

// launchSpacer enqueues one spacer launch on s.
func launchSpacer(fn *cuda.Function, s *cuda.Stream) error {
	one := [3]uint32{1, 1, 1}
	return fn.Launch(one, one, 0, s)
}
