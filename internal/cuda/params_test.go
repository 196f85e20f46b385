package cuda

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func le16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }

func TestPackParams(t *testing.T) {
	raw := RawArg{Data: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Align: 16}
	tests := []struct {
		name     string
		args     []any
		offsets  []int
		sizes    []int
		values   [][]byte
		blobSize int
	}{
		{"none", nil, []int{}, []int{}, nil, 0},
		{"saxpy", []any{int32(1000), float32(2.5), DevicePtr(0xdead0000), DevicePtr(0xbeef0000)},
			[]int{0, 4, 8, 16}, []int{4, 4, 8, 8},
			[][]byte{le32(1000), le32(math.Float32bits(2.5)), le64(0xdead0000), le64(0xbeef0000)}, 24},
		{"alignment padding", []any{int8(-1), int64(-2), uint16(3), float64(1.5)},
			[]int{0, 8, 16, 24}, []int{1, 8, 2, 8},
			[][]byte{{0xff}, le64(math.MaxUint64 - 1), le16(3), le64(math.Float64bits(1.5))}, 32},
		{"small types pack tightly", []any{uint8(7), bool(true), int16(-3), uint32(9)},
			[]int{0, 1, 2, 4}, []int{1, 1, 2, 4},
			[][]byte{{7}, {1}, le16(uint16(0xfffd)), le32(9)}, 8},
		{"raw struct aligned to 16", []any{int32(5), raw, uintptr(0x1234)},
			[]int{0, 16, 32}, []int{4, 12, 8},
			[][]byte{le32(5), raw.Data, le64(0x1234)}, 40},
		{"raw default alignment 8", []any{uint8(1), RawArg{Data: []byte{9, 9, 9}}},
			[]int{0, 8}, []int{1, 3}, [][]byte{{1}, {9, 9, 9}}, 11},
		{"uint64 and int32", []any{uint64(1 << 40), int32(-7)},
			[]int{0, 8}, []int{8, 4}, [][]byte{le64(1 << 40), le32(uint32(0xfffffff9))}, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := packParams(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.blob) != tt.blobSize {
				t.Errorf("blob is %d bytes, want %d", len(p.blob), tt.blobSize)
			}
			for i := range tt.args {
				if p.offsets[i] != tt.offsets[i] || p.sizes[i] != tt.sizes[i] {
					t.Errorf("arg %d at %d size %d, want %d size %d", i, p.offsets[i], p.sizes[i], tt.offsets[i], tt.sizes[i])
					continue
				}
				if got := p.blob[p.offsets[i] : p.offsets[i]+p.sizes[i]]; !bytes.Equal(got, tt.values[i]) {
					t.Errorf("arg %d bytes % x, want % x", i, got, tt.values[i])
				}
			}

			// The C parameter block must point at the same bytes.
			b, err := newParamBlock(p)
			if err != nil {
				t.Fatal(err)
			}
			defer b.free()
			if len(tt.args) == 0 {
				if b.params() != nil {
					t.Error("non-nil params for no arguments")
				}
				return
			}
			for i := range tt.args {
				if got := b.arg(i, tt.sizes[i]); !bytes.Equal(got, tt.values[i]) {
					t.Errorf("C block arg %d bytes % x, want % x", i, got, tt.values[i])
				}
			}
		})
	}
}

func TestPackParamsErrors(t *testing.T) {
	tests := []struct {
		name string
		args []any
		want string
	}{
		{"int has no fixed width", []any{int32(1), 5}, "argument 1: int has no fixed width"},
		{"uint has no fixed width", []any{uint(5)}, "argument 0: uint has no fixed width"},
		{"nil", []any{nil}, "argument 0 is nil"},
		{"string", []any{"x"}, "unsupported type string"},
		{"go pointer", []any{&[]int{1}}, "unsupported type *[]int"},
		{"empty raw", []any{RawArg{}}, "empty RawArg"},
		{"bad alignment", []any{RawArg{Data: []byte{1}, Align: 3}}, "alignment 3"},
		{"alignment too big", []any{RawArg{Data: []byte{1}, Align: 32}}, "alignment 32"},
	}
	for _, tt := range tests {
		_, err := packParams(tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestMatchParams(t *testing.T) {
	p, err := packParams([]any{int32(1), float32(2), DevicePtr(3)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		params []ParamInfo
		want   string
	}{
		{"match", []ParamInfo{{0, 4}, {4, 4}, {8, 8}}, ""},
		{"too few args", []ParamInfo{{0, 4}, {4, 4}, {8, 8}, {16, 8}}, "takes 4 parameters, got 3"},
		{"too many args", []ParamInfo{{0, 4}}, "takes 1 parameters, got 3"},
		{"wrong width", []ParamInfo{{0, 8}, {8, 4}, {16, 8}}, "argument 0 has 4 bytes, kernel parameter 0 has 8"},
	}
	for _, tt := range tests {
		err := matchParams(tt.params, p)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestDevicePtrAdd(t *testing.T) {
	if got := DevicePtr(0x7f0000000000).Add(256); got != 0x7f0000000100 {
		t.Errorf("Add = %#x", uintptr(got))
	}
}

func TestPageableAlloc(t *testing.T) {
	b, err := PageableAlloc(1000)
	if err != nil {
		t.Fatal(err)
	}
	if b.Pinned() || b.Len() != 1000 || len(b.Bytes()) != 1000 {
		t.Fatalf("PageableAlloc(1000) = pinned %v len %d", b.Pinned(), b.Len())
	}
	for i, v := range b.Bytes() {
		if v != 0 {
			t.Fatalf("byte %d = %d, want zeroed memory", i, v)
		}
	}
	copy(b.Bytes(), "kreplay")
	if string(b.Bytes()[:7]) != "kreplay" {
		t.Error("buffer does not hold what was written")
	}
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
	if b.Ptr() != nil || b.Bytes() != nil {
		t.Error("buffer still usable after Free")
	}
	if err := b.Free(); err != nil {
		t.Errorf("second Free: %v", err)
	}
	if _, err := PageableAlloc(-1); err == nil {
		t.Error("PageableAlloc(-1) succeeded")
	}
}
