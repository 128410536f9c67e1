// Package report reads what the runtime writes and shows it: the
// performance model CSV with its sidecars (.meta: the chain that produced
// it; .stats: the spread of each probe's calls) and the pprof export, as
// one self-contained HTML page (WriteHTML), and two sides, each one run or
// several, as a table with significance marks across runs (Compare). The
// meter command and the live page (package live) both draw with it, so a
// model looks the same from a file and from a running program.
//
// # The page
//
// One HTML file with its styles and scripts inline: no network, no
// external scripts or fonts, so it opens from a mail attachment or a CI
// artifact as well as from disk. It is built with fmt and
// html.EscapeString, not text/template or html/template: those reach
// reflect's MethodByName, which stops the linker from dropping unused
// methods in every program that links the live page. Every figure is in
// the HTML itself; the inline script only sorts the table (the order is
// kept in the address, #sort=count:desc) and draws the flame graph.
//
// What the page shows, and how it keeps a row from misleading:
//   - the model table with a legend of every column and label. Counts are
//     calls. A row labelled disabled or budget is set in grey italics with
//     a note: its count and times stop where it was switched off. A
//     sampled row's times are marked ≈, as estimates. An untimed row shows
//     its count and no times (–), never 0 ns: its time is in its callers'
//     inherent time.
//   - inclusive and inherent totals as bars, to one scale.
//   - what the model covers: the program's wall time (from the .meta keys
//     started and taken) and CPU time (cpu_ns), and the inclusive time of
//     the entry probes' firings (probe.Roots, the .meta key roots; else
//     the probes that start traced call paths), each firing counted only
//     where no other entry is open beneath it on its goroutine, as a
//     share of each (Coverage says how the traced call paths tell which
//     firings are nested). Inclusive time counts waiting, and entries on
//     several goroutines add up, so the share of wall time may pass 100%:
//     it is then the mean number of units of work running at once.
//     Entries whose figures are partial make it a lower bound, sampled
//     ones an estimate, and the page says which. Without traced call
//     paths, several entries give a range: the largest alone to all
//     summed. With no entry known, the largest inclusive total stands as
//     a lower bound.
//   - the flame graph of the call paths in the pprof profile (the samples
//     labelled source=trace; a profile without that label is drawn
//     whole), widths in inherent time summed beneath each frame, which is
//     the frame's inclusive time. Click to zoom.
//   - every .meta key, known ones explained, unknown ones as they are.
//
// # Readers
//
// ReadModel and ReadProfile each read one file, and report errors as
// "file:line: message" (FileError), as the sidecars' readers do.
// ReadProfile decodes profile.proto, gzip-compressed or not, with the
// standard library only. Load reads a model and every sidecar beside it
// (package schema names their columns and keys); LoadRuns reads one side
// of a comparison: a model, or a directory of models, one per run.
//
// # Compare
//
// Compare prints, per probe, calls per run and mean inclusive and
// inherent time per call, old → new, with the change in percent. What a
// change must stand out from is how much a figure moves from one run to
// the next (the host, the scheduler, a sampled probe's estimate), not the
// spread of calls within one run, so significance is judged across runs,
// as benchstat does: each run gives one value a side, and the
// Mann-Whitney U test (or Welch's t-test) compares them. A row's tests
// are adjusted for their number (Holm), so that a probe that did not
// change is flagged at most α of the time: "~ (p=0.690)" is not
// significant, "+25.00% (p=0.008)" is. Significant rows come first: those
// whose own calls or inherent time changed before those whose inclusive
// time alone did, each by the bound of its change's confidence interval
// nearer to no change, so a large change in a noisy row does not outrank
// a clear one. With one run a side there are changes and no p-values, and
// a line says so.
package report
