// Command addrprofile writes an unsymbolized native CPU profile
// (profile.proto, gzipped) for one ELF mapping, the way a sampling
// profiler that leaves symbolization to pprof would: a single Mapping
// with no function, file or line information, one Location per given
// runtime address, and samples whose stacks are built from those
// locations. Ember's pprof tests feed it to pprof -symbolize=local.
//
// Usage:
//
//	addrprofile -o out.pb.gz -bin PATH -start 0x.. -limit 0x.. -offset 0x.. \
//	          [-buildid HEX] ADDR...
//
// Samples: location i alone, with value (i+1) samples, so each address
// appears as its own one-frame trace in input order; then one sample
// whose stack is the first min(5, n) locations, leaf first.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/google/pprof/profile"
)

const periodNanos = 10000000 // 100 Hz

func parseHex(name, s string) uint64 {
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "addrprofile: '%s' is not a number for %s: %v\n", s, name, err)
		os.Exit(2)
	}
	return v
}

func newProfile(bin, buildID string, start, limit, offset uint64, addrs []uint64) *profile.Profile {
	m := &profile.Mapping{
		ID:           1,
		Start:        start,
		Limit:        limit,
		Offset:       offset,
		File:         bin,
		BuildID:      buildID,
		HasFunctions: false,
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "samples", Unit: "count"},
			{Type: "cpu", Unit: "nanoseconds"},
		},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     periodNanos,
		Mapping:    []*profile.Mapping{m},
	}
	for i, a := range addrs {
		loc := &profile.Location{ID: uint64(i + 1), Mapping: m, Address: a}
		p.Location = append(p.Location, loc)
		n := int64(i + 1)
		p.Sample = append(p.Sample, &profile.Sample{
			Location: []*profile.Location{loc},
			Value:    []int64{n, n * periodNanos},
		})
	}
	depth := len(p.Location)
	if depth > 5 {
		depth = 5
	}
	if depth > 1 {
		p.Sample = append(p.Sample, &profile.Sample{
			Location: append([]*profile.Location(nil), p.Location[:depth]...),
			Value:    []int64{1, periodNanos},
		})
	}
	return p
}

func main() {
	out := flag.String("o", "", "output file (gzipped profile.proto)")
	bin := flag.String("bin", "", "path of the mapped ELF file")
	start := flag.String("start", "", "mapping start (runtime address)")
	limit := flag.String("limit", "", "mapping limit (runtime address, exclusive)")
	offset := flag.String("offset", "0", "file offset of the mapping start")
	buildID := flag.String("buildid", "", "GNU build ID of the ELF, hex")
	flag.Parse()
	if *out == "" || *bin == "" || *start == "" || *limit == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: addrprofile -o OUT -bin PATH -start 0x.. -limit 0x.. -offset 0x.. [-buildid HEX] ADDR...")
		os.Exit(2)
	}
	var addrs []uint64
	for _, s := range flag.Args() {
		addrs = append(addrs, parseHex("ADDR", s))
	}
	p := newProfile(*bin, *buildID, parseHex("-start", *start), parseHex("-limit", *limit),
		parseHex("-offset", *offset), addrs)
	if err := p.CheckValid(); err != nil {
		fmt.Fprintf(os.Stderr, "addrprofile: invalid profile: %v\n", err)
		os.Exit(1)
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "addrprofile: cannot create '%s': %v\n", *out, err)
		os.Exit(1)
	}
	if err := p.Write(f); err != nil {
		fmt.Fprintf(os.Stderr, "addrprofile: cannot write '%s': %v\n", *out, err)
		os.Exit(1)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "addrprofile: cannot close '%s': %v\n", *out, err)
		os.Exit(1)
	}
}
