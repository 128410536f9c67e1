package main

// startTrace starts a runtime trace and returns a function that stops it and
// counts the exporter goroutine's wake-ups in it (-1 if not measured).
func startTrace(s system) func() int64 {
	return func() int64 { return -1 }
}
