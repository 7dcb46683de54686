// gen-unsymbolized-profile: write the unsymbolized CPU profile that bench/symbolize-api
// sends to POST /api/v1/symbolize/pprof (see ../README.md).
//
//	gen-unsymbolized-profile -o OUT.pb.gz [-samples 10000] [-locations 2000] [-seed 1] BIN=ADDRS...
//
// Each BIN (an ELF file with a GNU build ID) becomes one mapping laid out
// as perf would record it for a process: the executable PT_LOAD segment
// mapped at a load bias (PIE executables at 0x555555554000, shared
// objects from 0x7f0000000000 up, ET_EXEC at 0), Start/Limit the page-
// aligned runtime range of that segment, Offset its page-aligned file
// offset, BuildID and File set.  ADDRS is a file of ELF virtual addresses
// (one "0x..." a line, bench/symbolize/make-addrs.sh); the first distinct
// ones become locations whose Address is the runtime address (bias +
// vaddr, so address - Start + Offset is the file offset of vaddr).
// Locations are split evenly between the binaries (a binary with fewer
// distinct addresses gives its share to the others).  Samples are stacks
// of 1 to 8 locations drawn with a fixed seed; every location is the leaf
// of at least one sample.  No Function or Line: the server fills them in.
package main

import (
	"bufio"
	"debug/elf"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

const page = 4096

type module struct {
	path, buildID string
	start, limit  uint64
	offset, bias  uint64
	addrs         []uint64 // distinct vaddrs, in file order
}

func buildID(f *elf.File) (string, error) {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		d, err := s.Data()
		if err != nil {
			return "", err
		}
		for len(d) >= 12 {
			nsz := f.ByteOrder.Uint32(d[0:4])
			dsz := f.ByteOrder.Uint32(d[4:8])
			typ := f.ByteOrder.Uint32(d[8:12])
			no := 12 + (int(nsz)+3)&^3
			end := no + (int(dsz)+3)&^3
			if end > len(d) {
				break
			}
			if typ == 3 && nsz == 4 && string(d[12:15]) == "GNU" {
				return hex.EncodeToString(d[no : no+int(dsz)]), nil
			}
			d = d[end:]
		}
	}
	return "", fmt.Errorf("no GNU build ID note")
}

func load(path, addrsPath string, nlib *int) (*module, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := &module{path: path}
	if m.buildID, err = buildID(f); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	var seg *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			seg = p
			break
		}
	}
	if seg == nil {
		return nil, fmt.Errorf("%s: no executable PT_LOAD", path)
	}
	if f.Type == elf.ET_DYN {
		interp := false
		for _, p := range f.Progs {
			interp = interp || p.Type == elf.PT_INTERP
		}
		if interp {
			m.bias = 0x555555554000
		} else {
			m.bias = 0x7f0000000000 + uint64(*nlib)*0x10000000
			*nlib++
		}
	}
	m.offset = seg.Off &^ (page - 1)
	m.start = m.bias + seg.Vaddr - (seg.Off - m.offset)
	m.limit = (m.bias + seg.Vaddr + seg.Memsz + page - 1) &^ (page - 1)

	af, err := os.Open(addrsPath)
	if err != nil {
		return nil, err
	}
	defer af.Close()
	seen := map[uint64]bool{}
	sc := bufio.NewScanner(af)
	for sc.Scan() {
		t := strings.TrimSpace(sc.Text())
		if t == "" {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimPrefix(t, "0x"), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", addrsPath, err)
		}
		if v < seg.Vaddr || v >= seg.Vaddr+seg.Memsz {
			continue // not in the mapped segment
		}
		if !seen[v] {
			seen[v] = true
			m.addrs = append(m.addrs, v)
		}
	}
	return m, sc.Err()
}

func main() {
	out := flag.String("o", "", "output profile (gzip)")
	nsamples := flag.Int("samples", 10000, "samples")
	nlocs := flag.Int("locations", 2000, "distinct locations")
	seed := flag.Int64("seed", 1, "random seed")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: gen-unsymbolized-profile -o OUT BIN=ADDRS...")
		os.Exit(2)
	}
	var mods []*module
	nlib := 0
	for _, a := range flag.Args() {
		i := strings.LastIndex(a, "=")
		if i < 0 {
			fmt.Fprintf(os.Stderr, "gen-unsymbolized-profile: '%s': want BIN=ADDRS\n", a)
			os.Exit(2)
		}
		m, err := load(a[:i], a[i+1:], &nlib)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gen-unsymbolized-profile: %v\n", err)
			os.Exit(1)
		}
		mods = append(mods, m)
	}

	// Even shares; what a small binary cannot fill goes to the others.
	share := make([]int, len(mods))
	left := *nlocs
	for left > 0 {
		open := 0
		for i, m := range mods {
			if share[i] < len(m.addrs) {
				open++
			}
		}
		if open == 0 {
			break
		}
		each := (left + open - 1) / open
		for i, m := range mods {
			n := each
			if n > left {
				n = left
			}
			if room := len(m.addrs) - share[i]; n > room {
				n = room
			}
			share[i] += n
			left -= n
		}
	}
	if left > 0 {
		fmt.Fprintf(os.Stderr, "gen-unsymbolized-profile: only %d distinct addresses in all\n", *nlocs-left)
		os.Exit(1)
	}

	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"},
			{Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        10000000,
		TimeNanos:     1700000000000000000,
		DurationNanos: int64(*nsamples) * 10000000 / 4,
	}
	for i, m := range mods {
		mp := &profile.Mapping{ID: uint64(i + 1), Start: m.start, Limit: m.limit,
			Offset: m.offset, File: m.path, BuildID: m.buildID}
		p.Mapping = append(p.Mapping, mp)
		for _, v := range m.addrs[:share[i]] {
			p.Location = append(p.Location, &profile.Location{
				ID: uint64(len(p.Location) + 1), Mapping: mp, Address: m.bias + v})
		}
		fmt.Fprintf(os.Stderr, "gen-unsymbolized-profile: mapping %d %s build ID %s start %#x limit %#x offset %#x: %d locations\n",
			i+1, m.path, m.buildID, m.start, m.limit, m.offset, share[i])
	}
	rng := rand.New(rand.NewSource(*seed))
	for s := 0; s < *nsamples; s++ {
		depth := 1 + rng.Intn(8)
		stack := make([]*profile.Location, depth)
		for d := range stack {
			stack[d] = p.Location[rng.Intn(len(p.Location))]
		}
		if s < len(p.Location) {
			stack[0] = p.Location[s] // every location is some sample's leaf
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: stack,
			Value: []int64{1, 10000000}})
	}
	if err := p.CheckValid(); err != nil {
		fmt.Fprintf(os.Stderr, "gen-unsymbolized-profile: invalid profile: %v\n", err)
		os.Exit(1)
	}
	f, err := os.Create(*out)
	if err == nil {
		err = p.Write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gen-unsymbolized-profile: %v\n", err)
		os.Exit(1)
	}
}
