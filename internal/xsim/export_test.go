package xsim

// CountWeighted exposes the emulator's own length counter to the external
// tests that hold it against X's conformance cases and the product's counter.
var CountWeighted = countWeighted
