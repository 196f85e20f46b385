package bench

// TPBundle gives the external tests the embedded tensor-parallel bundle's
// ranks' sets and spec (tpBundle).
var TPBundle = tpBundle
