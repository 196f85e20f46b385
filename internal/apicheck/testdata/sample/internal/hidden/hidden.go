package hidden

type Handle struct{ h uintptr }

type Opts struct{ N int }
