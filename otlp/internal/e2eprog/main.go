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

func main() {
	defer probe.Shutdown()
	probes[0].End(probes[0].Begin()) // a probe starts traces once a firing of it has ended
	for range 5 {
		request()
	}
}

// request is main's traced unit of work.
func request() {
	f := probes[0].Begin()
	for range 2 {
		work()
	}
	probes[0].End(f)
}

func work() {
	w := probes[1].Begin()
	leaf()
	time.Sleep(100 * time.Microsecond)
	probes[1].End(w)
}

func leaf() {
	probes[2].End(probes[2].Begin())
}
