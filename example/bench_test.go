package main

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/renderer/html"
)

var warmUp sync.Once

// BenchmarkRender is goldmark's own rendering benchmark
// (_benchmark/cmark/goldmark_benchmark.go in the module): one Convert of
// its _data.md per op, XHTML and unsafe HTML on. GOLDMARK_DATA names the
// file; the corpus stands in when it is unset. BENCH_WARMUP renders it that
// many times, once per process, before the first measurement.
func BenchmarkRender(b *testing.B) {
	file := os.Getenv("GOLDMARK_DATA")
	var source []byte
	if file == "" {
		docs, err := load("corpus")
		if err != nil {
			b.Fatal(err)
		}
		source = bytes.Join(docs, []byte("\n\n"))
	} else {
		var err error
		if source, err = os.ReadFile(file); err != nil {
			b.Fatal(err)
		}
	}
	md := goldmark.New(goldmark.WithRendererOptions(html.WithXHTML(), html.WithUnsafe()))
	var out bytes.Buffer
	md.Convert([]byte(""), &out)
	warmUp.Do(func() {
		// Hotspot learns within the first renders; the figures are
		// about the steady state after that.
		n, _ := strconv.Atoi(os.Getenv("BENCH_WARMUP"))
		for i := 0; i < n; i++ {
			out.Reset()
			md.Convert(source, &out)
		}
	})
	b.SetBytes(int64(len(source)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out.Reset()
		if err := md.Convert(source, &out); err != nil {
			b.Fatal(err)
		}
	}
}

func TestRender(t *testing.T) {
	docs, err := load("corpus")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := render(newMarkdown(), docs, 1); err != nil || n == 0 {
		t.Fatalf("render: %d bytes, %v", n, err)
	}
}
