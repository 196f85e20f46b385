package captured

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/kreplay/kreplay/internal/cuda"
)

// Census counts what a Shared's buffers hold, read back from the device:
// a probe of the values the data flow leaves there, since kernels that
// compute on what other replays wrote may drift to values the real
// inference never holds (all zeros, NaN, infinities), which draw less
// power than real data.
type Census struct {
	// Bytes is how many bytes were read (up to the limit asked, from
	// each buffer's start).
	Bytes int64 `json:"bytes"`
	// Zero is the share of 4-byte words that are 0.
	Zero float64 `json:"zero"`
	// NonFiniteBF16 is the share of 2-byte halves whose exponent bits
	// are all ones (NaN or infinity read as bf16: about 1/256 of random
	// bits), and NonFiniteF32 the share of 4-byte words read as f32.
	NonFiniteBF16 float64 `json:"nonfinite_bf16"`
	NonFiniteF32  float64 `json:"nonfinite_f32"`
}

// String formats c on one line.
func (c Census) String() string {
	return fmt.Sprintf("%.3g MB read: %.1f%% zero words, %.2f%% non-finite as bf16, %.2f%% as f32",
		float64(c.Bytes)/1e6, 100*c.Zero, 100*c.NonFiniteBF16, 100*c.NonFiniteF32)
}

// Census reads up to limit bytes from the start of each of s's buffers
// (in the order of their recorded addresses) on stream st and counts
// their values. Call it inside the context, with no kernel running on
// the buffers.
func (s *Shared) Census(limit int64, st *cuda.Stream) (Census, error) {
	keys := make([]sharedKey, 0, len(s.bufs))
	for k := range s.bufs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].base < keys[j].base })
	var words, zero, nanHalf, nanWord int64
	for _, k := range keys {
		n := min(k.size, limit) &^ 3
		if n <= 0 {
			continue
		}
		data := make([]byte, n)
		if err := cuda.CopyDtoH(data, s.bufs[k], st); err != nil {
			return Census{}, fmt.Errorf("census of the allocation at %#x: %w", k.base, err)
		}
		z, h, w := countValues(data)
		words, zero, nanHalf, nanWord = words+n/4, zero+z, nanHalf+h, nanWord+w
	}
	if words == 0 {
		return Census{}, nil
	}
	return Census{Bytes: 4 * words, Zero: float64(zero) / float64(words),
		NonFiniteBF16: float64(nanHalf) / float64(2*words), NonFiniteF32: float64(nanWord) / float64(words)}, nil
}

// countValues counts data's zero 4-byte words, its 2-byte halves whose
// bf16 exponent is all ones and its 4-byte words whose f32 exponent is.
func countValues(data []byte) (zero, nanHalf, nanWord int64) {
	const bf16Exp, f32Exp = 0x7f80, 0x7f800000
	for i := 0; i+4 <= len(data); i += 4 {
		w := binary.LittleEndian.Uint32(data[i:])
		if w == 0 {
			zero++
		}
		if w&f32Exp == f32Exp {
			nanWord++
		}
		for _, h := range [2]uint32{w & 0xffff, w >> 16} {
			if h&bf16Exp == bf16Exp {
				nanHalf++
			}
		}
	}
	return zero, nanHalf, nanWord
}
