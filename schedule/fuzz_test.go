package schedule

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

// FuzzRead: Read never panics, and whatever it accepts, Write then Read
// gives back the same value.
func FuzzRead(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("kreplay-schedule 1\nsource trace\nname 0 a b\ninference 0 start 5\nL 0 1 0xff 0 1,1,1 2,2,2\nend 0 1\n"))
	f.Add([]byte("kreplay-schedule 1\ninference 0 start 0\nQ 0 0 e 0x0 notready\nW 0 9 c 0x0\nend 0 9\ninference 1 start 9\nM 0 0 2\nend 1 0\n"))
	f.Add([]byte("kreplay-schedule 1\nprocess 0 overhead_ns_per_inference -0 armed_wall_ns 0 measured_wall_ns 0\n"))
	f.Add([]byte("kreplay-schedule 1\ninference 0 start 0\nC 0 1 0x0 1 PtoP sync\nS 1 2 0x1 0 sync\nend 0 2\n"))
	f.Add([]byte("kreplay-schedule 1\ninference 0 start 0 fresh\nM 0 1 1\nend 0 1\ninference 1 start 90 fresh\nM 0 1 3\nend 1 1\n"))
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(sample))
	zw.Close()
	f.Add(z.Bytes())
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := Read(bytes.NewReader(in))
		if err != nil {
			if s != nil {
				t.Fatal("a schedule with an error")
			}
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, s); err != nil {
			t.Fatalf("Read accepted what Write rejects: %v", err)
		}
		back, err := Read(strings.NewReader(buf.String()))
		if err != nil {
			t.Fatalf("Write's output does not read: %v\n%s", err, buf.String())
		}
		if !sameSchedule(back, s) {
			t.Fatalf("Write then Read changed the schedule:\n%s", buf.String())
		}
	})
}

// FuzzWhatIfs: for whatever Read accepts, FasterHost and UnderGraphs give
// schedules Validate accepts (a faster host always; a slower one and
// graph launches unless a time passes 2^62), GraphGroups numbers the GPU
// ops in order, one group per GPU op of UnderGraphs' schedule, and the
// what-ifs simulate with GraphOps' ops.
func FuzzWhatIfs(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("kreplay-schedule 1\nname 0 a\ninference 0 start 5\nL 0 9 0x1 0 1,1,1 2,2,2\nend 0 9\ninference 1 start 9000 fresh\nL 0 9 0x1 0 1,1,1 2,2,2\nend 1 9\n"))
	f.Add([]byte("kreplay-schedule 1\nname 0 a\ninference 0 start 5\nL 0 9 0x1 0 1,1,1 2,2,2\nQ 3 4 s 0x1 notready\nR 5 6 0xe 0x1\nW 8 20 e 0xe\nE 21 22 0x2 0xe\nG 23 24 0x2 0x7\nend 0 30\ninference 1 start 40\nC 0 5 0x2 8 DtoH sync\nM 6 7 3\nend 1 9\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := Read(bytes.NewReader(in))
		if err != nil {
			return
		}
		ops := make([][]Op, len(s.Inferences))
		for i := range s.Inferences {
			for _, c := range s.Inferences[i].Calls {
				if c.Kind.GPU() {
					ops[i] = append(ops[i], Op{DurNS: []int64{1000}})
				}
			}
		}
		for _, factor := range []float64{2, 0.5} {
			fast, err := FasterHost(s, factor)
			if err != nil {
				if factor > 1 || !strings.Contains(err.Error(), "the result") {
					t.Fatalf("faster host x%g: %v", factor, err)
				}
				continue
			}
			if _, err := Simulate(fast, ops, Constants{WakeNS: 10}); err != nil {
				t.Fatalf("faster host x%g does not simulate: %v", factor, err)
			}
		}
		graphs, err := UnderGraphs(s, 1000)
		if err != nil {
			if !strings.Contains(err.Error(), "the result") {
				t.Fatalf("under graphs: %v", err)
			}
			return
		}
		groups, err := GraphGroups(s)
		if err != nil {
			t.Fatal(err)
		}
		for i, inf := range groups {
			next := 0
			for _, g := range inf {
				for _, j := range g {
					if j != next {
						t.Fatalf("inference %d: groups %v do not number the ops in order", i, inf)
					}
					next++
				}
			}
			if next != s.Inferences[i].GPUOps() || len(inf) != graphs.Inferences[i].GPUOps() {
				t.Fatalf("inference %d: groups %v for %d GPU ops; the what-if has %d", i, inf, s.Inferences[i].GPUOps(), graphs.Inferences[i].GPUOps())
			}
		}
		gops, err := GraphOps(s, ops)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Simulate(graphs, gops, Constants{WakeNS: 10}); err != nil {
			t.Fatalf("under graphs does not simulate: %v", err)
		}
	})
}
