package meter

// writeRowGo is the reference of writeRow: one write of a row by its only
// writer, bracketed by seq.
func writeRowGo(r *row, incl, own, w int64) { writeRowShared(r, incl, own, w) }
