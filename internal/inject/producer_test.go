package inject

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// FindAlias pairs the producer's pointers with the consumer's that point
// to the same address at one pair of calls.
func TestFindAlias(t *testing.T) {
	cons := &Launch{Ptrs: make([]Pointer, 2)}
	prod := &Launch{Ptrs: make([]Pointer, 3)}
	for _, tc := range []struct {
		name   string
		pp, cp []uint64
		want   [][3]int64
	}{
		{"output into the consumer's input", []uint64{0x5000, 0x90100, 0x70000}, []uint64{0x90100, 0xa0000}, [][3]int64{{1, 0, 0}}},
		{"two shared tensors", []uint64{0xa0000, 0x90100, 0x1}, []uint64{0x90100, 0xa0000}, [][3]int64{{0, 1, 0}, {1, 0, 0}}},
		{"same allocation, another block", []uint64{0x8fe00, 0x90400, 0xa0200}, []uint64{0x90100, 0xa0000}, nil},
		{"a view into the storage the producer read", []uint64{0x5000, 0x90000, 0x70000}, []uint64{0x90040, 0xa0000}, [][3]int64{{1, 0, -0x40}}},
		{"the producer wrote a view of the consumer's input", []uint64{0xa0100, 0x1, 0x2}, []uint64{0x90100, 0xa0000}, [][3]int64{{0, 1, 0x100}}},
		{"within a block but the lower not on its boundary", []uint64{0x90010, 0x1, 0x2}, []uint64{0x90100, 0xa0000}, nil},
		{"the nearest of two", []uint64{0x90000, 0x1, 0x2}, []uint64{0x90100, 0x90040}, [][3]int64{{0, 1, -0x40}}},
		{"pointer counts differ from the records", []uint64{0x90100}, []uint64{0x90100, 0xa0000}, nil},
	} {
		if got := FindAlias(prod, tc.pp, cons, tc.cp); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Check rejects producers that do not fit the consumer.
func TestProducerCheck(t *testing.T) {
	c := &Launch{Ptrs: make([]Pointer, 2)}
	p := &Launch{Ptrs: make([]Pointer, 1)}
	for _, tc := range []struct {
		prod *Producer
		ok   bool
	}{
		{&Producer{Launch: p, Alias: [][3]int64{{0, 1, 0}}}, true},
		{&Producer{Launch: p}, false},
		{&Producer{Alias: [][3]int64{{0, 1, 0}}}, false},
		{&Producer{Launch: p, Alias: [][3]int64{{1, 0, 0}}}, false},
		{&Producer{Launch: p, Alias: [][3]int64{{0, 2, 0}}}, false},
	} {
		if err := tc.prod.Check(c); (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.prod, err)
		}
	}
}

// FunctionResources reads registers from the .nv.info attribute of real
// Triton cubins (a compiled Llama prefill on an H100): two autotuning
// configurations of one kernel differ in their registers, and the one the
// driver reported at the launch (10 registers, recorded) is 5170c6bc.
// Triton's kernels also require their exact block (.reqntid: num_warps x
// 32 threads), which a launch of another block shape cannot have.
func TestFunctionResources(t *testing.T) {
	for _, tc := range []struct {
		file, name string
		regs       int
		req        [3]int
	}{
		{"058d7424611d4bb6.cubin.gz", "triton_poi_fused__unsafe_view_mul_silu_9", 15, [3]int{256, 1, 1}},
		{"5170c6bc6be513ac.cubin.gz", "triton_poi_fused__to_copy_add_arange_unsqueeze_2", 10, [3]int{128, 1, 1}},
		{"f99d54e889a331f2.cubin.gz", "triton_poi_fused__to_copy_add_arange_unsqueeze_2", 8, [3]int{128, 1, 1}},
	} {
		image, err := ReadModule(os.DirFS("testdata"), strings.TrimSuffix(tc.file, ".cubin.gz"))
		if err != nil {
			t.Fatal(err)
		}
		r := FunctionResources(image, tc.name)
		if !r.Ok || r.Regs != tc.regs || r.ReqThreads != tc.req {
			t.Errorf("%s: %+v, want %d registers and block %v", tc.file, r, tc.regs, tc.req)
		}
		block := [3]uint32{uint32(tc.req[0]), 1, 1}
		if !r.Admits(block) || r.Admits([3]uint32{block[0] / 2, 1, 1}) || r.Admits([3]uint32{block[0] * 2, 1, 1}) {
			t.Errorf("%s: Admits: want only the block %v", tc.file, tc.req)
		}
		if r := FunctionResources(image, "no_such_kernel"); r.Ok || r.Regs != 0 {
			t.Errorf("%s: a function it lacks: %+v", tc.file, r)
		}
	}
	if r := FunctionResources([]byte("not an ELF image"), "x"); r.Ok {
		t.Errorf("not an image: %+v", r)
	}
}
