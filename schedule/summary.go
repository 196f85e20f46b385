package schedule

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Summary describes a recorded schedule for a reader: its inferences,
// their calls by kind, and the host's own time per call and gaps between
// calls, which the recorder's cost inflates.
type Summary struct {
	Source string
	// Recorder is the schedule's recorder line: RecorderHook,
	// RecorderCUPTI, or "" (a file from before the line, CUPTI's).
	Recorder   string
	CPU        string
	Process    *Process
	Inferences int
	// Fresh counts the inferences that follow a synchronize (a recorded
	// block's first).
	Fresh int
	// SpanNS is the inferences' spans (first call to end): median and
	// 90th percentile.
	SpanNS Quantiles
	// Kinds are the calls per inference, by kind, in the order Kind's
	// constants list them.
	Kinds []KindSummary
}

// KindSummary is one kind of call in a schedule.
type KindSummary struct {
	Kind Kind
	// PerInference is the mean count per inference.
	PerInference float64
	// OwnNS is the calls' own duration (exit less enter) and GapNS the
	// host's time before each since the call before it (within an
	// inference): medians and 90th percentiles.
	OwnNS, GapNS Quantiles
}

// summaryKinds is the order Summary lists kinds in.
var summaryKinds = []Kind{Launch, Copy, Memset, Graph, Wait, Query, Record, StreamWait, Mark}

// Summarize describes s.
func Summarize(s *Schedule) Summary {
	out := Summary{Source: s.Source, Recorder: s.Recorder, CPU: s.CPU, Process: s.Process, Inferences: len(s.Inferences)}
	own, gap := map[Kind][]float64{}, map[Kind][]float64{}
	var spans []float64
	for _, inf := range s.Inferences {
		if inf.Fresh {
			out.Fresh++
		}
		spans = append(spans, float64(inf.End))
		for k, c := range inf.Calls {
			own[c.Kind] = append(own[c.Kind], float64(c.Exit-c.Enter))
			if k > 0 {
				gap[c.Kind] = append(gap[c.Kind], float64(c.Enter-inf.Calls[k-1].Exit))
			}
		}
	}
	out.SpanNS = quantiles(spans)
	for _, k := range summaryKinds {
		if len(own[k]) == 0 {
			continue
		}
		out.Kinds = append(out.Kinds, KindSummary{Kind: k, PerInference: float64(len(own[k])) / float64(max(len(s.Inferences), 1)),
			OwnNS: quantiles(slices.Clone(own[k])), GapNS: quantiles(slices.Clone(gap[k]))})
	}
	return out
}

// WriteText prints the summary, a line for the schedule and one per kind.
func (u Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d inferences (%d after a synchronize), span median %.4g ms (p90 %.4g); from the %s",
		u.Inferences, u.Fresh, u.SpanNS.Median/1e6, u.SpanNS.P90/1e6, u.Source)
	if u.CPU != "" {
		fmt.Fprintf(&b, " on %s", u.CPU)
	}
	if u.Recorder == RecorderHook {
		b.WriteString(" (driver entry points interposed: the measured inferences themselves)")
	}
	if p := u.Process; p != nil {
		what := "recorded %.4g ms against %.4g ms measured per inference"
		if u.Recorder == RecorderHook {
			what = "the recorder's cost: single inferences %.4g ms armed against %.4g ms disarmed (medians)"
		}
		fmt.Fprintf(&b, "; "+what+", the recorder's probe %d ns a call",
			float64(p.ArmedWallNS)/1e6, float64(p.MeasuredWallNS)/1e6, p.CallOverheadNS)
	}
	b.WriteString("\n")
	for _, k := range u.Kinds {
		fmt.Fprintf(&b, "  %s %8.1f a inference  own %8.2f µs (p90 %8.2f)  gap before %8.2f µs (p90 %8.2f)\n", k.Kind,
			k.PerInference, k.OwnNS.Median/1e3, k.OwnNS.P90/1e3, k.GapNS.Median/1e3, k.GapNS.P90/1e3)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
