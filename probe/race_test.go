//go:build race

package probe

const raceBuild = true
