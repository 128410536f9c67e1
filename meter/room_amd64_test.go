//go:build amd64 && !race

package meter

import (
	"testing"

	"github.com/meterio/meter/extensions/hotspot"
)

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

// A young goroutine's stack, at the size it had when the engine first saw
// the goroutine, is short for the engine's paths: begin's leaf grows it before the firing, and the time the copy
// took (here the clock's advance in Grown) stays out of the firing. A
// stack that has grown since is left to grow where the engine's path
// grows it, as the program's next call would have; and where roomBytes lie
// below the firing function, neither its Begin nor its End grows it.
func TestBeginMakesRoomOnYoungStacks(t *testing.T) {
	grown := 0
	wire(t, Chain{Grown: func() { grown++; clk.Advance(5 * us) }})
	outer, inner := newProbe(t, "outer"), newProbe(t, "inner")
	young, fitted, deep := 0, 0, 0
	var outers, inners int64
	for target := uintptr(roomBytes - 768); target < roomBytes+512; target += 24 {
		for _, grow := range []bool{false, true} {
			done := make(chan struct{})
			var room, size, first uintptr
			var grew bool
			var calls int
			at := func() {
				before := grown
				size = stackSize()
				room, grew = fireAt(inner, 1*us)
				calls = grown - before
			}
			go func() {
				defer close(done)
				first = stackSize() // a goroutine's first size: 2 KiB, or more as the runtime learns
				if !grow {
					atRoom(target, at) // the goroutine's first firing, on its first stack
					return
				}
				fire(outer, 0, nil) // the engine sees the goroutine
				first = stackSize()
				deeper(4 * first) // then back up: a stack grown since, room above the target
				fire(outer, 2*us, func() {
					clk.Advance(3 * us)
					atRoom(target, at)
				})
				outers++
			}()
			<-done
			inners++
			switch {
			case size == first && room < roomBytes-64:
				young++
				if !grew || calls != 1 {
					t.Fatalf("young stack, %d bytes below: the stack grew %v, with %d calls of Grown; want it grown once, by begin's leaf", room, grew, calls)
				}
			case size > first && room < roomBytes-64:
				deep++
				if calls != 0 {
					t.Fatalf("grown stack of %d bytes, %d below: %d calls of Grown; want none", size, room, calls)
				}
			case room > roomBytes+64:
				fitted++
				if grew || calls != 0 {
					t.Fatalf("%d bytes below: the stack grew %v, with %d calls of Grown; want no growth: the engine's paths take more than engineStack (%d)", room, grew, calls, engineStack)
				}
			}
		}
	}
	if young == 0 || fitted == 0 || deep == 0 {
		t.Fatalf("%d firings on young stacks short of room, %d on grown ones, %d with room: want some of each", young, deep, fitted)
	}
	// The copy's 5 µs, where begin's leaf grew a young stack, lie outside
	// inner's firing; outer's firings, on grown stacks, have none.
	checkRow(t, outer, 2*outers, outers*6*us, outers*5*us)
	checkRow(t, inner, inners, inners*1*us, inners*1*us)
}

// bigFrame is fireBig's frame: locals of 512 bytes.
const bigFrame = 512

// fireBig runs one firing of p from a frame of bigFrame bytes and more,
// with cost ns of its own, and reports how much stack lay below that
// frame, roughly, whether the firing was selected, and whether the stack
// grew in it.
//
//go:noinline
func fireBig(p *Probe, cost int64) (room uintptr, selected, grew bool) {
	var pad [bigFrame / 8]uint64
	room, s := stackRoom(), stackSize() // below its frame
	f := p.Begin()
	selected = f != 0 && f.frame().how == meterSelected
	clk.Advance(cost)
	pad[cost&7] = uint64(cost)
	p.End(&f)
	return room, selected, stackSize() != s || pad[0] == 1
}

// A selected firing of a sampled probe, on a stack the program has grown,
// holds the copy that begin's leaf makes for it where its function's own
// next call would have made it (within stackGuard and the function's frame
// of the stack's end): as its other calls would, whose copies fall in
// their callers' stretches. A copy the leaf makes further from the end is
// left out of every firing, and where roomBytes lie below, none is made.
func TestSelectedFiringHoldsTheCopyItsCallWouldHaveMade(t *testing.T) {
	grown := 0
	wire(t, Chain{Hotspot: &hotspot.Rule{Initial: 1, Sample: 1}, Grown: func() { grown++; clk.Advance(5 * us) }})
	outer, inner := newProbe(t, "outer"), newProbe(t, "inner")
	fire(inner, 1*us, nil)
	if !inner.setState(inner.State(), Sampled) {
		t.Fatal("inner not sampled")
	}
	var given, left, fitted int
	for target := uintptr(stackGuard); target < roomBytes+512; target += 24 {
		done := make(chan struct{})
		var room uintptr
		var selected, grew bool
		var calls int
		own0, outer0 := inner.row().InherentTotal, outer.row().InherentTotal
		go func() {
			defer close(done)
			fire(outer, 0, nil)     // the engine sees the goroutine
			deeper(4 * stackSize()) // then back up: a stack grown since
			fire(outer, 2*us, func() {
				atRoom(target+bigFrame, func() { // fireBig's frame then lies target bytes above the end, roughly
					before := grown
					room, selected, grew = fireBig(inner, 1*us)
					calls = grown - before
				})
			})
		}()
		<-done
		own, outerOwn := inner.row().InherentTotal-own0, outer.row().InherentTotal-outer0
		if !selected {
			t.Fatalf("%d bytes below: inner's firing not selected", room)
		}
		if outerOwn != 2*us {
			t.Fatalf("%d bytes below: outer's own %d ns; want 2 µs, no copy in it", room, outerOwn)
		}
		switch { // fireBig's frame is bigFrame and some tens of bytes more
		case room < stackGuard+bigFrame-16:
			given++
			if !grew || calls != 1 || own != 6*us {
				t.Fatalf("%d bytes below: grown %v, %d calls of Grown, own %d ns; want one, and 6 µs, the copy's 5 its own", room, grew, calls, own)
			}
		case room >= stackGuard+bigFrame+128 && room < roomBytes-64:
			left++
			if !grew || calls != 1 || own != 1*us {
				t.Fatalf("%d bytes below: grown %v, %d calls of Grown, own %d ns; want one, and 1 µs, the copy left out", room, grew, calls, own)
			}
		case room >= roomBytes+64:
			fitted++
			if grew || calls != 0 || own != 1*us {
				t.Fatalf("%d bytes below: grown %v, %d calls of Grown, own %d ns; want none, and 1 µs", room, grew, calls, own)
			}
		}
	}
	if given == 0 || left == 0 || fitted == 0 {
		t.Fatalf("%d copies given, %d left out, %d firings with room: want some of each", given, left, fitted)
	}
}
