//go:build !amd64 || race

package meter

import "runtime"

// callers is callersGo on amd64 under -race. Elsewhere frame pointers are
// not laid out as it reads them, and no caller is read: a metered firing's
// timed parent is then its nearest metered ancestor.
func callers(pos, stop uintptr, buf *[walkMax]stackCaller) int {
	if runtime.GOARCH != "amd64" {
		return 0
	}
	return callersGo(pos, stop, buf)
}
