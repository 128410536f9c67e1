module github.com/meterio/meter/bench/export

go 1.26.0

require (
	github.com/meterio/meter v0.0.0
	github.com/meterio/meter/otlp v0.0.0
)

replace (
	github.com/meterio/meter => ../..
	github.com/meterio/meter/otlp => ../../otlp
)
