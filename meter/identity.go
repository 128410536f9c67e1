package meter

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"unsafe"
)

// A firing that a panic or runtime.Goexit unwinds never reaches its End,
// and the runtime gives a finished goroutine's g to the next one. So each
// Goroutine state remembers the goroutine id it belongs to, and each frame
// its depth on the stack; settle, before every push, drops what they show
// to be gone. Both come from the runtime's g, read without linkname: the
// stack's top (g.stack.hi, at a fixed place since the runtime's
// beginnings: the compiler's stack check reads the word after it) and the
// goroutine id, whose place in g changes between Go releases and is found
// once, at start, by looking in g for the ids runtime.Stack prints.

var (
	goidOnce   sync.Once
	goidOffset uintptr // of goid in the runtime's g; 0 if not found
	// identOffset is the offset of the word in g that tells goroutines
	// apart: goid's, or when that was not found the stack's bottom
	// (stack.lo), which is no identity at all, so that every comparison
	// holds.
	identOffset uintptr
)

// findGoid sets goidOffset: the one offset, among the first words of g,
// that holds the id runtime.Stack prints, in each of several goroutines.
func findGoid() {
	goidOnce.Do(func() {
		const words = 40
		const probes = 4
		var hits [words]int
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := 0; i < probes; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := stackGoid()
				g := getgp()
				if id == 0 || g == nil {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				for w := 0; w < words; w++ {
					if *(*uint64)(unsafe.Add(g, w*8)) == id {
						hits[w]++
					}
				}
			}()
			wg.Wait() // one at a time: distinct goroutines, distinct ids
		}
		found := uintptr(0)
		for w := range hits {
			if hits[w] == probes {
				if found != 0 {
					return // two candidates: trust neither
				}
				found = uintptr(w * 8)
			}
		}
		goidOffset, identOffset = found, found
	})
}

// stackGoid returns the running goroutine's id as runtime.Stack prints it.
func stackGoid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b, ok := bytes.CutPrefix(b, []byte("goroutine "))
	if !ok {
		return 0
	}
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0
	}
	return id
}

// goid returns the running goroutine's id, or 0 if its place is unknown.
func goid() uint64 {
	if goidOffset == 0 {
		return 0
	}
	return *(*uint64)(unsafe.Add(getgp(), goidOffset))
}

// identity returns the running goroutine's identity word (see identOffset).
func identity() uint64 { return *(*uint64)(unsafe.Add(getgp(), identOffset)) }

// settle drops the frames of firings that are gone, before a push by a
// function whose frame is at depth pos, having called Begin from pc.
func (g *Goroutine) settle(pos, pc uintptr) {
	g.sameGoroutine()
	g.settleFrames(pos, pc)
}

// sameGoroutine drops every frame if g now runs another goroutine than the
// one its frames belong to.
func (g *Goroutine) sameGoroutine() {
	if id := identity(); id != g.goid {
		for g.depth > 0 {
			g.unwind()
		}
		g.goid = id
		g.stack = uint32(stackSize())
		g.first = g.stack
		g.noteGoroutine() // one started inside a trace joins it (join.go)
	}
}

// settleFrames ends the frames whose firings are gone, g running the
// goroutine they belong to (endUnwound): those whose frame is deeper than
// pos, which cannot be the pushing function's callers; and one whose frame
// is at the same depth, unless it belongs to the same function running
// there, at another call of Begin (a probed function inlined into
// another: both share one frame). A trace whose root is ended so ends,
// truncated.
func (g *Goroutine) settleFrames(pos, pc uintptr) {
	keep := g.depth
	for keep > 0 {
		c := g.frames[keep-1]
		if c.pos < pos || c.pos == pos && c.pc != pc && sameFunc(c.pc, pc) {
			break
		}
		keep--
	}
	if keep < g.depth {
		g.endUnwound(keep)
	}
}

// sameFunc reports whether two return addresses are in one function, as
// compiled (inlined bodies belong to the function they were inlined into).
func sameFunc(a, b uintptr) bool {
	ea, eb := funcOf(a), funcOf(b)
	return ea.entry != 0 && ea.entry == eb.entry
}

// funcInfo is what a return address tells of the function it returns to.
type funcInfo struct {
	entry   uintptr // the entry of the function, as compiled
	inProbe bool    // the function, as compiled, is probe.Probe.Begin
}

// funcs caches funcOf per return address: runtime.FuncForPC allocates
// for an inlined body, and a firing must not.
var funcs sync.Map // uintptr → funcInfo

func funcOf(pc uintptr) funcInfo {
	if v, ok := funcs.Load(pc); ok {
		return v.(funcInfo)
	}
	var fi funcInfo
	if f := runtime.FuncForPC(pc - 1); f != nil {
		fi.entry = f.Entry()
		if out := runtime.FuncForPC(fi.entry); out != nil { // the function as compiled, not one inlined into it
			fi.inProbe = out.Name() == "github.com/meterio/meter/probe.(*Probe).Begin"
		}
	}
	funcs.Store(pc, fi)
	return fi
}
