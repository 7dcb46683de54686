// Command pprof is Google's standalone pprof, built from the copy of
// github.com/google/pprof that the Go distribution vendors under
// src/cmd/vendor. It exists so Ember's tests can drive pprof's local
// symbolization through PPROF_TOOLS, which `go tool pprof` ignores.
//
// It mirrors upstream pprof's own main.go minus the readline plugin,
// which is not vendored; interactive mode still works on plain stdin.
package main

import (
	"fmt"
	"os"

	"github.com/google/pprof/driver"
)

func main() {
	if err := driver.PProf(&driver.Options{}); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(2)
	}
}
