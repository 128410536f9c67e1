// Command e2eprog is a small instrumented program that asks for OTLP with
// the blank import users add: main → work → leaf, five times. The otlp
// module's tests build it and run it against a loopback receiver.
package main

import (
	"time"

	_ "github.com/meterio/meter/otlp"
	"github.com/meterio/meter/probe"
)

var probes [3]probe.Probe

func init() {
	probe.Register(probes[:], "example.com/e2e.main", "example.com/e2e.work", "example.com/e2e.leaf")
}

// Each function has the probe meterinject gives it: On and Begin at the
// top, End before each exit.

func main() {
	defer probe.Shutdown()
	f := probes[0].Unmetered()
	_ = probes[0].On() && probes[0].Begin(&f)
	probes[0].End(&f) // a probe starts traces once a firing of it has ended
	for range 5 {
		request()
	}
}

// request is main's traced unit of work.
func request() {
	f := probes[0].Unmetered()
	_ = probes[0].On() && probes[0].Begin(&f)
	for range 2 {
		work()
	}
	_ = f != 0 && probes[0].End(&f)
}

func work() {
	f := probes[1].Unmetered()
	_ = probes[1].On() && probes[1].Begin(&f)
	leaf()
	time.Sleep(100 * time.Microsecond)
	_ = f != 0 && probes[1].End(&f)
}

func leaf() {
	f := probes[2].Unmetered()
	_ = probes[2].On() && probes[2].Begin(&f)
	_ = f != 0 && probes[2].End(&f)
}
