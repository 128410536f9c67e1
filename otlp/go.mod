module github.com/meterio/meter/otlp

go 1.26.0

require github.com/meterio/meter v0.0.0

replace github.com/meterio/meter => ../
