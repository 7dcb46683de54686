#!/usr/bin/env python3
"""readelf_rows.py - the unwind compiler's oracle: GNU readelf's interpreted
CFI turned into the normalized rows `ember unwind dump` prints, with exactly
the normalizations docs/unwind-format.md documents ("Rows"), so that a plain
diff of the two is the test.

Usage: readelf_rows.py [--sections eh|debug|all] BINARY

Rows come from `readelf --debug-dump=frames-interp`; the bytes of DWARF
expressions (which frames-interp prints only as "exp"), and whether rbp was
explicitly DW_CFA_undefined (which it prints as "u", like "not saved yet"),
come from `readelf --debug-dump=frames`, replayed per FDE with
remember/restore_state.  Nothing here runs a CFA program of its own.

Normalizations (docs/unwind-format.md):
  * FDEs at address 0, with an empty range, or not inside the span of the
    binary's executable PT_LOAD segments (else executable sections) are
    dropped;
  * --sections all: .debug_frame FDEs that overlap an .eh_frame FDE are
    dropped;
  * FDEs in address order; of FDEs starting at the same address the first
    (.eh_frame, then lower offset) is kept; each holds until the next starts;
    rows of an FDE at or past that point are dropped, and at one address the
    last row wins;
  * an FDE printed without rows takes its CIE's initial row; an FDE of a CIE
    with augmentation 'S' is one "signal" row;
  * a gap between FDEs of at most 15 bytes is bridged, a wider one (and the
    end of the last FDE) gets an "end" row;
  * identical neighbours are merged;
  * what the format cannot express is "invalid": a CFA expression other than
    the PLT and deref forms (the whole row), a register expression other than
    a single bregN, a CFA offset beyond s32, an RA/rbp offset beyond s16.
"""
import argparse
import re
import subprocess
import sys

GAP_BRIDGE_MAX = 15
REG_RBP, REG_RSP = 6, 7
X86_NAMES = ["rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9",
             "r10", "r11", "r12", "r13", "r14", "r15", "rip"]

SEC_RE = re.compile(r"^Contents of the (\S+) section:")
CIE_RE = re.compile(r'^([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ CIE(?: "([^"]*)")?')
FDE_RE = re.compile(r"^([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ FDE cie=([0-9a-f]+) "
                    r"pc=([0-9a-f]+)\.\.([0-9a-f]+)")
TO_RE = re.compile(r"^  DW_CFA_(?:advance_loc[124]?|MIPS_advance_loc8): .* to ([0-9a-f]+)")
SETLOC_RE = re.compile(r"^  DW_CFA_set_loc: ([0-9a-f]+)")
REGOP_RE = re.compile(r"^  DW_CFA_(\w+): r(\d+) ")
RA_COL_RE = re.compile(r"^  Return address column: (\d+)")


def fits(v, bits):
    return -(1 << (bits - 1)) <= v < (1 << (bits - 1))


def canon_expr(text):
    """'DW_OP_breg7 (rsp): 8; DW_OP_deref' -> ['breg7(rsp):8', 'deref']"""
    return [p.replace("DW_OP_", "").replace(" ", "") for p in text.split("; ")]


BREG_RE = re.compile(r"^breg(\d+)\(([a-z0-9]+)\):(-?\d+)$")


def cfa_of_expr(ops):
    """The CFA columns an expression gives: 'plt 11', 'deref(rsp+8) 0', None."""
    if ops is None:
        return None
    if len(ops) == 9 and ops[:4] == ["breg7(rsp):8", "breg16(rip):0", "lit15", "and"] \
            and ops[4] in ("lit10", "lit11") and ops[5:] == ["ge", "lit3", "shl", "plus"]:
        return "plt " + ops[4][3:]
    m = BREG_RE.match(ops[0]) if ops else None
    if m and int(m.group(1)) < 32 and len(ops) in (2, 3) and ops[1] == "deref":
        k = 0
        if len(ops) == 3:
            if not ops[2].startswith("plus_uconst:"):
                return None
            k = int(ops[2].split(":")[1])
        off = int(m.group(3))
        if not fits(off, 32) or not fits(k, 16):
            return None
        return "deref(%s%+d) %d" % (m.group(2), off, k)
    return None


def reg_of_expr(ops, val):
    m = BREG_RE.match(ops[0]) if ops and len(ops) == 1 else None
    if not m or int(m.group(1)) >= 32 or not fits(int(m.group(3)), 16):
        return "invalid"
    return "%sat(%s%+d)" % ("v" if val else "", m.group(2), int(m.group(3)))


# ---- raw dump: expression bytes and explicit rbp undefined, per location ----

class Track:
    """What frames-interp does not show, for the CFA, RA and rbp columns."""
    __slots__ = ("cfa", "ra", "rbp", "rbp_undef")

    def __init__(self, other=None):
        self.cfa = other.cfa if other else None      # canon ops or None
        self.ra = other.ra if other else None        # (ops, val) or None
        self.rbp = other.rbp if other else None
        self.rbp_undef = other.rbp_undef if other else False


def parse_raw(text):
    """{(section, entry offset): {loc: Track}} for FDEs, Track for CIEs."""
    fdes, cies = {}, {}
    sec = None
    cur = None          # ('cie'|'fde', key)
    state, stack, loc, snaps, ra_col, cie_state = None, [], 0, None, 16, Track()
    cie_ra = {}

    def finish():
        if cur and cur[0] == "fde":
            snaps[loc] = Track(state)
            fdes[cur[1]] = snaps
        elif cur and cur[0] == "cie":
            cies[cur[1]] = Track(state)
            cie_ra[cur[1]] = ra_col

    for line in text.splitlines():
        m = SEC_RE.match(line)
        if m:
            finish()
            sec, cur = m.group(1), None
            continue
        m = CIE_RE.match(line)
        if m and " CIE" in line:
            finish()
            cur, state, stack, ra_col = ("cie", (sec, m.group(1))), Track(), [], 16
            cie_state = Track()
            continue
        m = FDE_RE.match(line)
        if m:
            finish()
            ckey = (sec, m.group(2))
            cur = ("fde", (sec, m.group(1)))
            cie_state = cies.get(ckey) or Track()
            state = Track(cie_state)
            stack, loc, snaps = [], int(m.group(3), 16), {}
            ra_col = cie_ra.get(ckey, 16)
            continue
        if cur is None:
            continue
        m = RA_COL_RE.match(line)
        if m:
            ra_col = int(m.group(1))
            continue
        m = TO_RE.match(line) or SETLOC_RE.match(line)
        if m:
            if cur[0] == "fde":
                snaps[loc] = Track(state)
                loc = int(m.group(1), 16)
            continue
        s = line.strip()
        if s == "DW_CFA_remember_state":
            stack.append(Track(state))
        elif s == "DW_CFA_restore_state":
            if stack:
                state = stack.pop()
        elif s.startswith("DW_CFA_def_cfa_expression ("):
            state.cfa = canon_expr(s[len("DW_CFA_def_cfa_expression ("):-1])
        elif s.startswith(("DW_CFA_def_cfa:", "DW_CFA_def_cfa_sf:", "DW_CFA_def_cfa_register:")):
            state.cfa = None
        else:
            m = REGOP_RE.match(line)
            if m:
                apply_reg_op(state, m.group(1), int(m.group(2)), line, ra_col,
                             cie_state)
    finish()
    return fdes, cies


def apply_reg_op(state, op, reg, line, ra_col, cie):
    """A register-rule instruction on the RA or rbp column."""
    if reg not in (ra_col, REG_RBP):
        return
    if op in ("restore", "restore_extended"):
        if reg == ra_col:
            state.ra = cie.ra
        else:
            state.rbp, state.rbp_undef = cie.rbp, cie.rbp_undef
        return
    expr = None
    if op in ("expression", "val_expression"):
        body = re.sub(r"^[^(]*\([^)]*\) \(", "", line.strip())[:-1]
        expr = (canon_expr(body), op == "val_expression")
    if reg == ra_col:
        state.ra = expr
    else:
        state.rbp = expr
        state.rbp_undef = op == "undefined"


# ---- interp dump: rows -------------------------------------------------------

REGNAME_RE = re.compile(r"r\d+ \(([a-z0-9]+)\)")


def parse_interp(text):
    """CIEs: {key: (aug, row)}, FDEs: [dict(key, cie, start, end, rows)]."""
    cies, fdes = {}, []
    sec, cols, cur = None, [], None
    for line in text.splitlines():
        m = SEC_RE.match(line)
        if m:
            sec, cur = m.group(1), None
            continue
        m = FDE_RE.match(line)
        if m:
            cur = dict(key=(sec, m.group(1)), cie=(sec, m.group(2)),
                       start=int(m.group(3), 16), end=int(m.group(4), 16), rows=[])
            fdes.append(cur)
            continue
        m = CIE_RE.match(line)
        if m and " CIE" in line:
            cur = dict(key=(sec, m.group(1)), aug=m.group(2) or "", rows=[])
            cies[cur["key"]] = cur
            continue
        if line.startswith("   LOC"):
            cols = line.split()
            continue
        if "ZERO terminator" in line:
            cur = None
            continue
        if cur is not None and re.match(r"^[0-9a-f]{8,} ", line):
            f = REGNAME_RE.sub(r"reg:\1", line).split()
            row = {"loc": int(f[0], 16), "cfa": f[1]}
            for name, v in zip(cols[2:], f[2:]):
                row[name] = v
            cur["rows"].append(row)
    return cies, fdes


# ---- normalization -----------------------------------------------------------

def col_rule(v, track_expr, is_ra, undef):
    if v is None or v == "s":
        return "same"
    if v == "u":
        return "undefined" if is_ra or undef else "same"
    m = re.match(r"^([cv])([+-]\d+)$", v)
    if m:
        return v if fits(int(m.group(2)), 16) else "invalid"
    if v.startswith("reg:"):
        return v
    if v in ("exp", "vexp"):
        if track_expr is None or track_expr[1] != (v == "vexp"):
            return "invalid"
        return reg_of_expr(track_expr[0], track_expr[1])
    return "invalid"


def row_rule(row, tr):
    """(cfa_reg cfa_off, ra, rbp) text of one interp row."""
    if row["cfa"] == "exp":
        cfa = cfa_of_expr(tr.cfa if tr else None)
        if cfa is None:
            return "invalid - - -"
    else:
        m = re.match(r"^([a-z0-9]+)([+-]\d+)$", row["cfa"])
        if not m or not fits(int(m.group(2)), 32):
            return "invalid - - -"
        cfa = "%s %d" % (m.group(1), int(m.group(2)))
    ra = col_rule(row.get("ra"), tr.ra if tr else None, True, False)
    rbp = col_rule(row.get("rbp"), tr.rbp if tr else None, False,
                   tr.rbp_undef if tr else False)
    return "%s %s %s" % (cfa, ra, rbp)


def fde_rows(f, cies, raw_fdes, raw_cies, stop):
    """[(pc, rule)] of one FDE, clipped to [start, stop)."""
    cie = cies.get(f["cie"], {"aug": "", "rows": []})
    if "S" in cie["aug"]:
        return [(f["start"], "signal - - -")]
    if not f["rows"]:
        crow = cie["rows"][-1] if cie["rows"] else {"cfa": "rsp+8", "ra": "c-8"}
        return [(f["start"], row_rule(crow, raw_cies.get(f["cie"])))]
    snaps = raw_fdes.get(f["key"], {})
    out = []
    for row in f["rows"]:
        pc = row["loc"]
        if pc < f["start"] or pc >= stop:
            continue
        rule = row_rule(row, snaps.get(pc))
        if out and out[-1][0] == pc:
            out[-1] = (pc, rule)
        elif not out or pc > out[-1][0]:
            out.append((pc, rule))
    return out


def code_span(binary, readelf):
    """[lo, hi) of the executable PT_LOADs, else of the SHF_EXECINSTR sections."""
    spans = []
    out = subprocess.run([readelf, "-lW", binary], capture_output=True, text=True).stdout
    for line in out.splitlines():
        t = line.split()
        if len(t) >= 8 and t[0] == "LOAD" and any("E" in x for x in t[6:-1]):
            spans.append((int(t[2], 16), int(t[2], 16) + int(t[5], 16)))
    if not spans:
        out = subprocess.run([readelf, "-SW", binary], capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = re.search(r"\]\s+\S+\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)"
                          r"\s+[0-9a-f]+\s+(\S*X\S*)\s", line)
            if m:
                spans.append((int(m.group(1), 16), int(m.group(1), 16) + int(m.group(2), 16)))
    if not spans:
        return 0, 0
    return min(a for a, _ in spans), max(b for _, b in spans)


def select_fdes(fdes, sections, span):
    eh = [f for f in fdes if f["key"][0] == ".eh_frame"]
    dbg = [f for f in fdes if f["key"][0] in (".debug_frame", ".zdebug_frame")]
    if sections == "eh":
        chosen = eh
    elif sections == "debug":
        chosen = dbg
    else:
        chosen = eh + [d for d in dbg if not any(
            e["start"] < d["end"] and e["end"] > d["start"] for e in eh)]
    chosen = [f for f in chosen if f["start"] != 0 and f["end"] > f["start"]
              and span[0] <= f["start"] and f["end"] <= span[1]]
    chosen.sort(key=lambda f: (f["start"], f["key"][0] != ".eh_frame", int(f["key"][1], 16)))
    out = []
    for f in chosen:
        if not out or out[-1]["start"] != f["start"]:
            out.append(f)
    return out


def normalize(binary, sections, readelf="readelf"):
    run = lambda mode: subprocess.run(
        [readelf, "--debug-dump=no-follow-links", "--debug-dump=" + mode, binary],
        capture_output=True, text=True).stdout
    raw_fdes, raw_cies = parse_raw(run("frames"))
    cies, fdes = parse_interp(run("frames-interp"))
    fdes = select_fdes(fdes, sections, code_span(binary, readelf))
    rows, prev_end = [], None
    for i, f in enumerate(fdes):
        stop = min(f["end"], fdes[i + 1]["start"]) if i + 1 < len(fdes) else f["end"]
        if prev_end is not None and f["start"] - prev_end > GAP_BRIDGE_MAX:
            rows.append((prev_end, "end - - -"))
        rows.extend(fde_rows(f, cies, raw_fdes, raw_cies, stop))
        prev_end = stop
    if prev_end is not None:
        rows.append((prev_end, "end - - -"))
    merged = []
    for pc, rule in rows:
        if merged and merged[-1][0] == pc:
            merged[-1] = (pc, rule)
            if len(merged) > 1 and merged[-2][1] == rule:
                merged.pop()
        elif not merged or merged[-1][1] != rule:
            merged.append((pc, rule))
    return merged


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sections", choices=["eh", "debug", "all"], default="all")
    ap.add_argument("binary")
    a = ap.parse_args()
    rows = normalize(a.binary, a.sections)
    out = ["# pc_start cfa_reg cfa_off ra_rule rbp_rule"]
    out += ["%016x %s" % r for r in rows]
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
