package captured

import (
	"encoding/binary"
	"math"
	"testing"
)

func TestCountValues(t *testing.T) {
	word := func(ws ...uint32) []byte {
		b := make([]byte, 4*len(ws))
		for i, w := range ws {
			binary.LittleEndian.PutUint32(b[4*i:], w)
		}
		return b
	}
	for _, tc := range []struct {
		name                   string
		data                   []byte
		zero, nanHalf, nanWord int64
	}{
		{"finite f32", word(math.Float32bits(1.5), math.Float32bits(-2e-3)), 0, 0, 0},
		{"zeros", word(0, 0, 7), 2, 0, 0},
		{"f32 NaN and infinity", word(math.Float32bits(float32(math.NaN())), math.Float32bits(float32(math.Inf(-1)))), 0, 2, 2},
		{"a bf16 NaN in the lower half", word(0x3f807fc0), 0, 1, 0},
		{"two bf16 infinities", word(0x7f80ff80), 0, 2, 1},
		{"a trailing partial word is left out", append(word(0), 0xff, 0xff), 1, 0, 0},
	} {
		z, h, w := countValues(tc.data)
		if z != tc.zero || h != tc.nanHalf || w != tc.nanWord {
			t.Errorf("%s: zero %d, bf16 non-finite %d, f32 non-finite %d; want %d, %d, %d", tc.name, z, h, w, tc.zero, tc.nanHalf, tc.nanWord)
		}
	}
}
