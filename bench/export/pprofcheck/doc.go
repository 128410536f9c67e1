// Package pprofcheck holds a test that reads the profiles meter writes
// (export.WriteProfile, encoded by hand with the standard library only)
// with github.com/google/pprof/profile, the library go tool pprof is built
// on: it lives in this module so that the runtime's own module requires
// nothing.
package pprofcheck
