//go:build amd64 && !race

package meter

import "testing"

// fireAt runs one firing of p, with cost ns of its own, and reports how
// much stack lay below its frame, give or take the few bytes of
// stackRoom's, and whether the stack grew in the firing.
//
//go:noinline
func fireAt(p *Probe, cost int64) (room uintptr, grew bool) {
	room, s := stackRoom(), stackSize()
	f := p.Begin()
	clk.Advance(cost)
	p.End(&f)
	return room, stackSize() != s
}

// Where fewer than roomBytes of the stack lie below the function that
// fires (a young goroutine, or a deep one), begin's leaf grows the stack
// before the firing, and the time the copy took (here the clock's advance
// in Grown) is taken off the current stretch and the inclusive time of the
// innermost metered firing: the program would not have grown it there.
// Where roomBytes lie below, the engine's paths of a firing fit: neither
// its Begin nor its End grows the stack.
func TestBeginMakesRoomOutsideTheStretches(t *testing.T) {
	grown := 0
	wire(t, Chain{Grown: func() { grown++; clk.Advance(5 * us) }})
	outer, inner := newProbe(t, "outer"), newProbe(t, "inner")
	made, fitted := 0, 0
	var targets []uintptr
	for target := uintptr(roomBytes - 256); target < roomBytes+512; target += 24 {
		targets = append(targets, target)
		done := make(chan struct{})
		var room uintptr
		var grew bool
		var calls int
		go func() {
			defer close(done)
			deeper(8 << 10) // then back up: room above the target
			fire(outer, 2*us, func() {
				clk.Advance(3 * us)
				atRoom(target, func() {
					before := grown
					room, grew = fireAt(inner, 1*us)
					calls = grown - before
				})
			})
		}()
		<-done
		switch {
		case room > roomBytes-64 && room < roomBytes+64:
			// too near to tell where begin's leaf found it
		case room < roomBytes:
			made++
			if !grew || calls != 1 {
				t.Fatalf("%d bytes below: the stack grew %v, with %d calls of Grown; want it grown once, by begin's leaf", room, grew, calls)
			}
		default:
			fitted++
			if grew || calls != 0 {
				t.Fatalf("%d bytes below: the stack grew %v, with %d calls of Grown; want no growth: the engine's paths take more than engineStack (%d)", room, grew, calls, engineStack)
			}
		}
	}
	if made == 0 || fitted == 0 {
		t.Fatalf("%d firings made room and %d fitted: want both", made, fitted)
	}
	// Each firing of outer: 2 + 3 µs of its own, and inner's 1 µs; the
	// copy's 5 µs, where the stack grew, are the engine's.
	n := int64(len(targets))
	checkRow(t, outer, n, n*6*us, n*5*us)
	checkRow(t, inner, n, n*1*us, n*1*us)
}
