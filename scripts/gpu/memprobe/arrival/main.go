// Command arrival fits and checks the memsets' arrival term of kreplay
// predict (predict/arrival.go) on traces: for each trace, the memset
// signatures that are not part of another (the ones predict charges), their
// invocations, those that arrived in the window (signatures.WindowArrivals)
// and their traced time, against a paced replay time per memset with and
// without the term. With -fit it prints the window arrivals' mean traced
// duration less the paced time, pooled over the traces.
//
//	go run ./scripts/gpu/memprobe/arrival [-paced 768] [-term 260] [-fit] TRACE...
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kreplay/kreplay/predict"
	"github.com/kreplay/kreplay/signatures"
)

func main() {
	paced := flag.Float64("paced", 768, "a paced memset's replay time, ns (the H100's in kreplay predict)")
	term := flag.Float64("term", predict.MemsetArrivalNS, "the arrival term per window arrival, ns")
	fit := flag.Bool("fit", false, "print the excess per window arrival pooled over the traces")
	flag.Parse()
	var excess, arrivals float64
	bad := 0
	for _, p := range flag.Args() {
		set, err := signatures.ImportFile(p, signatures.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			bad++
			continue
		}
		win := set.WindowArrivals()
		for i, idle := range signatures.IdleBefore(set.Timeline) {
			v := set.Timeline[i]
			if s := set.Signatures[v.Sig]; s.Class == signatures.ClassMemset && s.PartOf == "" && !s.Graph &&
				idle >= signatures.ArrivalWindowLoNS && idle < signatures.ArrivalWindowHiNS {
				excess += float64(v.Dur) - *paced
				arrivals++
			}
		}
		var traced, n, w float64
		for i, s := range set.Signatures {
			if s.Class == signatures.ClassMemset && s.PartOf == "" {
				traced += float64(s.TracedNS.Total)
				n += float64(s.Count)
				w += float64(win[i])
			}
		}
		if n == 0 {
			continue
		}
		a := *paced * n
		fmt.Printf("%s\tmemsets %.0f\twindow %.0f\ttraced %.1f µs\tpaced %+.1f%%\twith the term %+.1f%%\n",
			p, n, w, traced/1e3, 100*(a/traced-1), 100*((a+*term*w)/traced-1))
	}
	if *fit && arrivals > 0 {
		fmt.Printf("window arrivals: %.0f, their mean duration %.0f ns over the paced time\n", arrivals, excess/arrivals)
	}
	if bad > 0 {
		os.Exit(1)
	}
}
