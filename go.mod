module github.com/meterio/meter

go 1.22
