//go:build amd64 && !race

package meter

// writeRow adds one firing to r, whose only writer is the caller: the
// goroutine pinned to r's P. An assembly leaf of plain stores: on amd64
// stores are seen in program order, so a reader that finds seq even and
// unchanged around its loads has read one whole write. writeRowGo is its
// reference, which the tests run against it.
//
//go:noescape
func writeRow(r *row, incl, own, w int64)
