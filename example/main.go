// Command example is the workload of `make example`: it renders the
// markdown corpus under example/corpus with goldmark, many times over, so
// that an instrumented build has something to meter.
//
//	go run . [-n rounds] [-corpus dir]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
)

func main() {
	rounds := flag.Int("n", 200, "times the corpus is rendered")
	corpus := flag.String("corpus", "corpus", "directory of .md files")
	plain := flag.Bool("plain", false, "no extensions: goldmark's own benchmark settings")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the rendering to `file`")
	flag.Parse()
	docs, err := load(*corpus)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	md := newMarkdown()
	if *plain {
		md = goldmark.New(goldmark.WithRendererOptions(html.WithXHTML(), html.WithUnsafe()))
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	n, err := render(md, docs, *rounds)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("rendered %d documents %d times: %d bytes of HTML in %v\n", len(docs), *rounds, n, time.Since(start).Round(time.Millisecond))
}

func newMarkdown() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM, extension.Footnote, extension.DefinitionList),
		goldmark.WithRendererOptions(html.WithXHTML(), html.WithUnsafe()),
	)
}

func load(dir string) ([][]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no .md files in %s", dir)
	}
	var docs [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		docs = append(docs, b)
	}
	return docs, nil
}

func render(md goldmark.Markdown, docs [][]byte, rounds int) (int, error) {
	var out bytes.Buffer
	total := 0
	for r := 0; r < rounds; r++ {
		for _, d := range docs {
			out.Reset()
			if err := md.Convert(d, &out); err != nil {
				return total, err
			}
			total += out.Len()
		}
	}
	return total, nil
}
