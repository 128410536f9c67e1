module github.com/meterio/meter/bench/bbolt

go 1.26.8

require github.com/meterio/meter v0.0.0-00010101000000-000000000000

require (
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/sync v0.24.0 // indirect
)

require (
	go.etcd.io/bbolt v1.4.3
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/meterio/meter => ../..
