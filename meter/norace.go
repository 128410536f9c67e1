//go:build !race

package meter

const raceEnabled = false

func (g *Goroutine) acquire() {}
func (g *Goroutine) release() {}
