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
