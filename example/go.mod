module github.com/meterio/meter/example

go 1.26

require github.com/yuin/goldmark v1.7.13
