// Command goprof writes real Go profiles with runtime/pprof, the writer
// every Go service and agent uses: a CPU profile of a busy loop through a
// few named functions (at least -min samples), and a heap profile with
// every allocation sampled.  Ember's wire tests decode, re-encode and
// compare them with `go tool pprof`.
//
// Usage: goprof -cpu cpu.pb.gz -heap heap.pb.gz
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

var sink []byte

//go:noinline
func emberLeaf(n int) uint64 {
	var h uint64 = 14695981039346656037
	for i := 0; i < n; i++ {
		h ^= uint64(i)
		h *= 1099511628211
	}
	return h
}

//go:noinline
func emberMiddle(n int) uint64 {
	sink = make([]byte, 4096)
	return emberLeaf(n) ^ emberLeaf(n/2)
}

func main() {
	cpu := flag.String("cpu", "", "CPU profile output")
	heap := flag.String("heap", "", "heap profile output")
	min := flag.Duration("min", 300*time.Millisecond, "CPU time to burn at least")
	flag.Parse()
	runtime.MemProfileRate = 1
	f, err := os.Create(*cpu)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goprof:", err)
		os.Exit(1)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "goprof:", err)
		os.Exit(1)
	}
	var acc uint64
	for start := time.Now(); time.Since(start) < *min; {
		acc += emberMiddle(200000)
	}
	pprof.StopCPUProfile()
	f.Close()
	h, err := os.Create(*heap)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goprof:", err)
		os.Exit(1)
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(h); err != nil {
		fmt.Fprintln(os.Stderr, "goprof:", err)
		os.Exit(1)
	}
	h.Close()
	fmt.Println(acc != 0)
}
