// Package report reads what the runtime writes and shows it: the
// performance model CSV with its sidecars (.meta: the chain that produced
// it; .stats: the spread of each probe's firings) and the pprof export,
// as one self-contained HTML page (WriteHTML), and two models side by
// side as a table with significance marks (Compare). The meter command
// and the live page (package live) both draw with it, so a model looks
// the same from a file and from a running program.
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
//   - the model table with a legend of every column and label. A row
//     labelled disabled or budget is set in grey italics with a note: its
//     figures cover only its metered firings, before it was switched off.
//     A sampled row's totals are marked ≈, as estimates.
//   - inclusive and inherent totals as bars, to one scale.
//   - the share of the program's time the model covers: the inclusive
//     totals of the entry probes (probe.Roots, the .meta key roots; else
//     the roots of the traced call paths), summed, against the process's
//     wall time (from the .meta keys started and taken) and CPU time
//     (cpu_ns). Inclusive time counts waiting, and entries on several
//     goroutines add up, so the share may pass 100%: it is then the mean
//     number of entries running at once. Entries whose figures are partial
//     make it a lower bound, and the page says which. With no entry known,
//     the largest inclusive total stands as a lower bound.
//   - the flame graph of the call paths in the pprof profile (the samples
//     labelled source=trace; a profile without that label is drawn
//     whole), widths in inherent time summed beneath each frame, which is
//     the frame's inclusive time. Click to zoom.
//   - every .meta key, known ones explained, unknown ones as they are.
//
// # Readers
//
// ReadModel, ReadMeta, ReadStats and ReadProfile each read one file and
// report errors as "file:line: message" (FileError). ReadProfile decodes
// profile.proto, gzip-compressed or not, with the standard library only.
// Load reads a model and every sidecar beside it.
//
// # Compare
//
// Compare prints, per probe, counts and mean inclusive and inherent times
// old → new with the change in percent. Where both models have a .stats
// file, each change gets Welch's t-test on the means: "~" marks a change
// that is not significant at α = 0.05, with its p-value, as benchstat
// does. Without spreads it prints the changes alone and says why in one
// line.
package report
