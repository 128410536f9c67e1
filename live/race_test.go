//go:build race

package live

// raceBuild: the test binary has the race detector, so the programs it
// builds get it too.
const raceBuild = true
