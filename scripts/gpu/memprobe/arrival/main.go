// Command arrival fits and checks the memsets' arrival term of kreplay
// predict (predict/arrival.go) on traces. For each trace it takes the
// memset signatures that are not part of another (the ones predict
// charges): their invocations, those that arrived in the window
// (signatures.WindowArrivals) and their traced time, against a paced
// replay time per memset, with and without the term. With -fit it prints,
// over the window arrivals of all the traces, their mean excess over the
// paced time, that excess per 100 ns of arrival, and the least-squares
// slope of the excess on the time left to the window's end.
//
//	go run ./scripts/gpu/memprobe/arrival [-paced 768] [-slope 0.53] [-fit] TRACE...
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kreplay/kreplay/predict"
	"github.com/kreplay/kreplay/signatures"
)

// fit accumulates the window arrivals' excess over the paced time.
type fit struct {
	n, excess, xy, xx float64
	bins              [8][2]float64 // per 100 ns from the window's start: count, excess
}

func (f *fit) add(idle, dur int64, paced float64) {
	e, x := float64(dur)-paced, float64(signatures.ArrivalWindowHiNS-idle)
	f.n++
	f.excess += e
	f.xy += e * x
	f.xx += x * x
	if b := (idle - signatures.ArrivalWindowLoNS) / 100; b >= 0 && int(b) < len(f.bins) {
		f.bins[b][0]++
		f.bins[b][1] += e
	}
}

func (f *fit) print() {
	fmt.Printf("window arrivals: %.0f; mean excess %.0f ns; slope on the time left to the window's end %.3f\n", f.n, f.excess/f.n, f.xy/f.xx)
	for i, b := range f.bins {
		if b[0] > 0 {
			fmt.Printf("  arrived %d-%d ns after idle: %.0f, mean excess %.0f ns\n",
				signatures.ArrivalWindowLoNS+100*i, signatures.ArrivalWindowLoNS+100*(i+1), b[0], b[1]/b[0])
		}
	}
}

// check prints one trace's memset class, paced and with the term.
func check(p string, set *signatures.Set, paced, slope float64) {
	win := set.WindowArrivals()
	var traced, n, w, early float64
	for i, s := range set.Signatures {
		if s.Class == signatures.ClassMemset && s.PartOf == "" {
			traced += float64(s.TracedNS.Total)
			n += float64(s.Count)
			w += float64(win[i].N)
			early += float64(win[i].EarlyNS)
		}
	}
	if n == 0 {
		return
	}
	a := paced * n
	fmt.Printf("%s\tmemsets %.0f\twindow %.0f\ttraced %.1f µs\tpaced %+.1f%%\twith the term %+.1f%%\n",
		p, n, w, traced/1e3, 100*(a/traced-1), 100*((a+slope*early)/traced-1))
}

func main() {
	paced := flag.Float64("paced", 768, "a paced memset's replay time, ns (the H100's in kreplay predict)")
	slope := flag.Float64("slope", predict.MemsetArrivalSlope, "the arrival term's slope on the time left to the window's end")
	doFit := flag.Bool("fit", false, "fit the window arrivals' excess over the paced time")
	flag.Parse()
	var f fit
	bad := 0
	for _, p := range flag.Args() {
		set, err := signatures.ImportFile(p, signatures.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			bad++
			continue
		}
		for i, idle := range signatures.IdleBefore(set.Timeline) {
			v := set.Timeline[i]
			if s := set.Signatures[v.Sig]; s.PartOf == "" && signatures.ArrivesInWindow(s, idle) {
				f.add(idle, v.Dur, *paced)
			}
		}
		check(p, set, *paced, *slope)
	}
	if *doFit && f.n > 0 {
		f.print()
	}
	if bad > 0 {
		os.Exit(1)
	}
}
