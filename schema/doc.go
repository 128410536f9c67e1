// Package schema names what the runtime writes and its readers read: the
// columns of the performance model CSV, its labels, the sidecar files
// beside it and their keys and columns, and the sample types, labels and
// field numbers of the pprof profile, with the varint length that the
// hand-written protobuf encoders need.
//
// The export package writes these files, the report package (and
// cmd/meter, and the live page) reads them, the meter package labels its
// rows with them, and the otlp module encodes spans with the same varints.
// Each name is defined here once, so a writer and a reader cannot drift
// apart.
//
// It is a public leaf package (standard library only, and in fact no
// imports at all) rather than an internal one: the otlp module is a module
// of its own, released on its own, and a module must not depend on
// another module's internal packages, which may change between versions
// without notice. A program that reads the model CSV itself may use it
// too.
//
// What is fixed: the CSV's columns and their order, which docs/design.md
// fixes (columns may be added after them, never reordered), and the
// label strings. Everything else here may gain names; none is removed
// while a reader of older files needs it.
package schema
