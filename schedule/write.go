package schedule

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Write writes s in the schedule format (plain text; the capture gzips
// it). It writes only a schedule Validate accepts, and Read gives back
// the same value: the names all come before the first inference, sorted
// by id.
func Write(w io.Writer, s *Schedule) error {
	if err := s.Validate(); err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "kreplay-schedule %d\nsource %s\n", s.Version, s.Source)
	if s.CPU != "" {
		fmt.Fprintf(bw, "cpu %s\n", s.CPU)
	}
	if s.Clock != "" {
		fmt.Fprintf(bw, "clock %s\n", s.Clock)
	}
	if s.Recorder != "" {
		fmt.Fprintf(bw, "recorder %s\n", s.Recorder)
	}
	if p := s.Process; p != nil {
		fmt.Fprintf(bw, "process %d overhead_ns_per_inference %d armed_wall_ns %d measured_wall_ns %d",
			p.PID, p.OverheadNSPerInference, p.ArmedWallNS, p.MeasuredWallNS)
		if p.CallOverheadNS > 0 {
			fmt.Fprintf(bw, " overhead_ns_per_call %d", p.CallOverheadNS)
		}
		bw.WriteString("\n")
	}
	ids := make([]uint32, 0, len(s.Names))
	for id := range s.Names {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fmt.Fprintf(bw, "name %d %s\n", id, s.Names[id])
	}
	var buf []byte
	for i := range s.Inferences {
		inf := &s.Inferences[i]
		fresh := ""
		if inf.Fresh {
			fresh = " fresh"
		}
		fmt.Fprintf(bw, "inference %d start %d%s\n", i, inf.Start, fresh)
		for k := range inf.Calls {
			buf = appendCall(buf[:0], &inf.Calls[k])
			bw.Write(buf)
		}
		fmt.Fprintf(bw, "end %d %d\n", i, inf.End)
	}
	return bw.Flush()
}

// appendCall appends a record's line.
func appendCall(b []byte, c *Call) []byte {
	b = append(b, byte(c.Kind), ' ')
	b = strconv.AppendInt(b, c.Enter, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, c.Exit, 10)
	switch c.Kind {
	case Launch:
		b = appendHandle(b, c.Stream)
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(c.Name), 10)
		b = appendDim3(b, c.Grid)
		b = appendDim3(b, c.Block)
	case Copy, Memset:
		b = appendHandle(b, c.Stream)
		b = append(b, ' ')
		b = strconv.AppendInt(b, c.Bytes, 10)
		if c.Kind == Copy {
			b = append(b, ' ')
			b = append(b, c.Dir...)
		}
		if c.Sync {
			b = append(b, " sync"...)
		} else {
			b = append(b, " async"...)
		}
	case Graph:
		b = appendHandle(b, c.Stream)
		b = appendHandle(b, c.Handle)
	case Wait, Query:
		b = append(b, ' ', byte(c.Target))
		if c.Target == OnStream {
			b = appendHandle(b, c.Stream)
		} else {
			b = appendHandle(b, c.Handle)
		}
		if c.Kind == Query {
			if c.Ready {
				b = append(b, " ready"...)
			} else {
				b = append(b, " notready"...)
			}
		}
	case Record:
		b = appendHandle(b, c.Handle)
		b = appendHandle(b, c.Stream)
	case StreamWait:
		b = appendHandle(b, c.Stream)
		b = appendHandle(b, c.Handle)
	case Mark:
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(c.Mark), 10)
	}
	return append(b, '\n')
}

func appendHandle(b []byte, h uint64) []byte {
	b = append(b, " 0x"...)
	return strconv.AppendUint(b, h, 16)
}

func appendDim3(b []byte, d [3]uint32) []byte {
	for i, v := range d {
		if i == 0 {
			b = append(b, ' ')
		} else {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(v), 10)
	}
	return b
}
