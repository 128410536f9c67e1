//go:build amd64 && !race

package meter

// stamp returns the tick at which one stretch ends and the next begins,
// with the running goroutine's marks (marks) as of that tick: with the
// TSC, read in one assembly function, where nothing preempts the goroutine
// (marks_amd64.s); else the marks right after the clock (stampOther). A
// goroutine taken off its P between a tick and a later look at its marks
// would wait in the run queue inside the stretch that begins at the tick,
// with its count of leaving the running state already moved: the wait
// would be taken for own time.
func stamp() (t int64, left, reason uint8, sys bool)
