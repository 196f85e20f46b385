package inject

import (
	"reflect"
	"testing"
)

// FindAlias pairs the producer's pointers with the consumer's allocation
// they fall into at one pair of calls, placing each consumer allocation as
// its launch recorded it.
func TestFindAlias(t *testing.T) {
	// The consumer's record: pointer 0 at 256 bytes into a 4096-byte
	// allocation, pointer 1 at the start of a 1024-byte one.
	cons := &Launch{Ptrs: []Pointer{{Value: 0x10100, Base: 0x10000, Range: 4096}, {Value: 0x20000, Base: 0x20000, Range: 1024}}}
	prod := &Launch{Ptrs: []Pointer{{}, {}, {}}}
	for _, tc := range []struct {
		name   string
		pp, cp []uint64
		want   [][3]int64
	}{
		// At this pair of calls the consumer's buffers lie elsewhere than
		// in its record: its first allocation spans [0x90000, 0x91000).
		{"output into the consumer's input", []uint64{0x5000, 0x90100, 0x70000}, []uint64{0x90100, 0xa0000}, [][3]int64{{1, 0, 0}}},
		{"before the pointer, inside the allocation", []uint64{0x90000}, []uint64{0x90100, 0xa0000}, [][3]int64{{0, 0, -0x100}}},
		{"past the allocation's end", []uint64{0x91000}, []uint64{0x90100, 0xa0000}, nil},
		{"two consumer buffers", []uint64{0xa03ff, 0x90fff}, []uint64{0x90100, 0xa0000}, [][3]int64{{0, 1, 0x3ff}, {1, 0, 0xeff}}},
		{"no shared memory", []uint64{0x1000, 0x2000, 0x3000}, []uint64{0x90100, 0xa0000}, nil},
		{"pointer counts differ from the records", []uint64{0x90100}, []uint64{0x90100}, nil},
	} {
		p := prod
		if len(tc.pp) != len(prod.Ptrs) {
			p = &Launch{Ptrs: make([]Pointer, len(tc.pp))}
		}
		c := cons
		if tc.name == "pointer counts differ from the records" {
			p = prod // 3 records, 1 value
		}
		if got := FindAlias(p, tc.pp, c, tc.cp); !reflect.DeepEqual(got, tc.want) {
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
