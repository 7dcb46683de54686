// gimli-a2l: `addr2line -a -f -i -C -e BIN`-like CLI over the `addr2line`
// crate (gimli), for the symbolization benchmark only.
// Usage: gimli-a2l BIN < addrs   (one hex address per line, 0x optional)
// Output per address: 0x%016x, then (function, file:line) per frame,
// innermost first. Function names are demangled. Frames without a DWARF
// function name, and addresses without DWARF, fall back to the ELF symbol
// table. Output is block-buffered (no flush per address).
use std::borrow::Cow;
use std::io::{BufRead, BufWriter, Write};

use object::{Object, ObjectSection};

fn main() {
    let path = std::env::args().nth(1).expect("usage: gimli-a2l BIN < addrs");
    let file = std::fs::File::open(&path).expect("open");
    let map = unsafe { memmap2::Mmap::map(&file).expect("mmap") };
    let obj = object::File::parse(&*map).expect("parse ELF");
    let endian = if obj.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    // Borrow sections from the mapping; compressed ones are decompressed
    // once and leaked (the process exits after one run).
    let load = |id: gimli::SectionId| -> Result<gimli::EndianSlice<gimli::RunTimeEndian>, gimli::Error> {
        let bytes: &[u8] = match obj.section_by_name(id.name()).map(|s| s.uncompressed_data()) {
            Some(Ok(Cow::Borrowed(b))) => b,
            Some(Ok(Cow::Owned(v))) => Box::leak(v.into_boxed_slice()),
            _ => &[],
        };
        Ok(gimli::EndianSlice::new(bytes, endian))
    };
    let dwarf = gimli::Dwarf::load(load).expect("load DWARF");
    let ctx = addr2line::Context::from_dwarf(dwarf).expect("index DWARF");
    let symbols = obj.symbol_map();
    let sym = |a: u64| -> Cow<str> {
        match symbols.get(a) {
            Some(s) => addr2line::demangle_auto(Cow::Borrowed(s.name()), None),
            None => Cow::Borrowed("??"),
        }
    };

    let stdin = std::io::stdin();
    let out = std::io::stdout();
    let mut w = BufWriter::with_capacity(1 << 16, out.lock());
    for line in stdin.lock().lines() {
        let line = line.expect("read stdin");
        let t = line.trim();
        let t = t.strip_prefix("0x").unwrap_or(t);
        let addr = match u64::from_str_radix(t, 16) {
            Ok(a) => a,
            Err(_) => continue,
        };
        writeln!(w, "0x{:016x}", addr).unwrap();
        let mut any = false;
        if let Ok(mut frames) = ctx.find_frames(addr) {
            while let Ok(Some(f)) = frames.next() {
                any = true;
                match f.function.as_ref().and_then(|n| n.demangle().ok()) {
                    Some(n) => writeln!(w, "{}", n).unwrap(),
                    None => writeln!(w, "{}", sym(addr)).unwrap(),
                }
                match f.location {
                    Some(addr2line::Location { file: Some(file), line: Some(l), .. }) => {
                        writeln!(w, "{}:{}", file, l).unwrap()
                    }
                    Some(addr2line::Location { file: Some(file), .. }) => {
                        writeln!(w, "{}:?", file).unwrap()
                    }
                    _ => writeln!(w, "??:0").unwrap(),
                }
            }
        }
        if !any {
            writeln!(w, "{}\n??:0", sym(addr)).unwrap();
        }
    }
    w.flush().unwrap();
}
