#!/usr/bin/env python3
"""Generate plugin/sass/latency_tables.c from nvdisasm's latency descriptions.

Usage: python3 plugin/sass/gen_latency.py LATENCY_DIR > plugin/sass/latency_tables.c

LATENCY_DIR holds sm_80_latencies.txt, sm_86_latencies.txt and sm_90_latencies.txt
(nvdisasm's internal scheduling tables as extracted by the DocumentSASS project;
a copy lives in the shared reference folder, latencies/).  The output is
committed; run this again only when the tables change.

What is kept: every TABLE_TRUE / TABLE_OUTPUT / TABLE_ANTI of every resource,
with its rows (the earlier instruction) and columns (the later one) as lists of
terms {operation set, condition, operand slots}, the resource defaults, and the
operation sets themselves as bit sets over one global list of opcode names
(pipe aliases such as IADD3int_pipe are folded onto IADD3).  The C side
(latency.c) matches an instruction against the terms.
"""
import re
import sys
import os

SMS = (80, 86, 90)
PIPES = ("int_pipe", "mio_pipe", "fe_pipe", "fmalighter_pipe", "fp16_pipe", "cbu_pipe",
         "fma64lite_pipe", "fma64heavy_pipe", "udp_pipe")
# Operand slots as the C side numbers them (sass_internal.h, ST_SLOT_*): bit masks.
SLOT_D, SLOT_A, SLOT_B, SLOT_C, SLOT_E, SLOT_G = 1, 2, 4, 8, 16, 32
ANY = 63
READS = SLOT_A | SLOT_B | SLOT_C | SLOT_E
CONNECTOR_SLOTS = {
    # GPR
    "Ra": SLOT_A, "Ra_with_offset": SLOT_A, "barname": SLOT_A, "barcount": SLOT_A,
    "Rb": SLOT_B, "Rc": SLOT_C, "Re": SLOT_E, "Rd": SLOT_D, "Rd2": SLOT_D,
    # UGPR
    "URa": SLOT_A, "UR": SLOT_A, "attr": SLOT_A, "Ra_URb": SLOT_A, "Ra_URc": SLOT_A, "Ra_URd": SLOT_A,
    "URb": SLOT_B, "Rb_URc": SLOT_B, "URc": SLOT_C, "URe": SLOT_E, "URd": SLOT_D, "URd2": SLOT_D,
    # PRED / UPRED: operands that are not the guard read in any slot
    "Pr": READS, "Pq": READS, "Pp": READS, "Pa": READS, "Pb": READS, "Pc": READS, "Ps": READS,
    "Plg": READS, "Pnz": READS | SLOT_D, "Pg": SLOT_G, "Pu": SLOT_D, "Pv": SLOT_D, "Pd": SLOT_D,
    "nPd": SLOT_D, "PR_PRED": ANY,
    "UPx": READS, "UPp": READS, "UPq": READS, "UPr": READS, "UPg": SLOT_G, "UPu": SLOT_D,
    "UPv": SLOT_D, "UPR_UPRED": ANY,
}
# Conditions that restrict an operation set; evaluated by latency.c (ST_LCOND_*).
CONDS = {None: 0, "MODE_ARV": 1, "MODE_ARV_WAIT": 2, "MODE_DEPBAR": 3, "GSB_GSB0": 4, "VTG_PRED": 5}
RESOURCES = ["GPR", "UGPR", "PRED", "UPRED", "SCOREBOARD", "MEMORY", "CC", "BSTACK", "CONTROL",
             "CGABARRIER", "GMMA_SCOREBOARD", "GMMA_GROUP_SCOREBOARD", "RPC"]
KINDS = {"TRUE": 0, "OUTPUT": 1, "ANTI": 2}
NONE = -1


def die(msg):
    sys.stderr.write("gen_latency: %s\n" % msg)
    sys.exit(1)


def value(tok):
    if tok in ("ORDERED_ZERO",):
        return 0
    if tok == "-":
        return NONE
    m = re.fullmatch(r"HARD\((\d+)\)", tok)
    if m:
        return int(m.group(1))
    if re.fullmatch(r"\d+", tok):
        return int(tok)
    die("bad value %r" % tok)


def statements(text):
    """Yield (section, statement) pairs; statements end with ';'."""
    section = None
    buf = ""
    heads = ("OPERATION SETS", "HARD RESOURCE", "RESOURCE", "CONNECTOR NAMES", "CONNECTOR NAME",
             "CONNECTOR CONDITIONS", "CONNECTOR SETS", "OPERATION PIPELINE RESOURCES")
    for line in text.split("\n"):
        s = line.strip()
        if not buf and s in heads:
            section = s
            continue
        if not buf and s.startswith("TABLE_"):
            section = "TABLE"
        if not buf and s.startswith("PIPELINE RESOURCE "):
            section = "PIPELINE"
        buf += " " + s
        if s.endswith(";"):
            yield section, buf.strip()[:-1].strip()
            buf = ""
    if buf.strip():
        die("unterminated statement %r" % buf[:60])


TERM = re.compile(r"([A-Za-z_][A-Za-z_0-9.]*)(?:\[([A-Z_0-9]+)\])?(?:`\{([^}]*)\})?")


class Model:
    def __init__(self, sm, text):
        self.sm = sm
        self.sets = {}       # name -> frozenset of opcode names
        self.connsets = {}   # name -> list of terms
        self.resources = {}  # name -> (default_output, default_anti)
        self.tables = []     # (res, kind, cols, rows, values)
        for section, st in statements(text):
            if section == "OPERATION SETS":
                name, expr = st.split("=", 1)
                self.sets[name.strip()] = self.setexpr(expr)
            elif section in ("HARD RESOURCE", "RESOURCE"):
                m = re.match(r"([A-Z_]+)", st)
                name = m.group(1)
                dout = re.search(r"DEFAULT_OUTPUT=(\S+)", st)
                dant = re.search(r"DEFAULT_ANTI=(\S+)", st)
                self.resources[name] = (value(dout.group(1)) if dout else NONE,
                                        value(dant.group(1)) if dant else NONE)
            elif section == "CONNECTOR SETS":
                name, expr = st.split("=", 1)
                self.connsets[name.strip()] = self.terms(expr.replace("+", " "))
            elif section == "TABLE":
                self.table(st)

    def setexpr(self, expr):
        result = None
        for sign, term in re.findall(r"([+-]?)\s*(\{[^}]*\}|[A-Za-z_][A-Za-z_0-9.]*)", expr):
            if term.startswith("{"):
                names = [n.strip() for n in term[1:-1].split(",") if n.strip()]
                s = frozenset(n for n in names if not n.endswith(PIPES))
            elif term in self.sets:
                s = self.sets[term]
            else:
                die("sm_%d: unknown operation set %s" % (self.sm, term))
            if result is None:
                result = s
            elif sign == "-":
                result = result - s
            else:
                result = result | s
        return result

    def terms(self, text):
        out = []
        for m in TERM.finditer(text):
            name, cond, conns = m.group(1), m.group(2), m.group(3)
            if conns is None and cond is None and name in self.connsets:
                out.extend(self.connsets[name])
                continue
            if name not in self.sets:
                die("sm_%d: unknown set %s in table term" % (self.sm, name))
            if cond not in CONDS:
                die("sm_%d: unknown condition %s" % (self.sm, cond))
            slots = 0
            if conns is None or not conns.strip():
                slots = ANY
            else:
                for c in conns.split(","):
                    c = c.strip().split(" ")[0]
                    slots |= CONNECTOR_SLOTS.get(c, ANY)
            out.append((name, cond, slots))
        return out

    def table(self, st):
        m = re.match(r"TABLE_(TRUE|OUTPUT|ANTI)\(([A-Z_]+)\)\s*:(.*?)=\s*\{(.*)\}$", st, re.S)
        if not m:
            die("sm_%d: cannot parse table %r" % (self.sm, st[:80]))
        kind, res, cols, body = m.groups()
        if res not in RESOURCES:
            die("sm_%d: unknown resource %s" % (self.sm, res))
        colterms = []
        for tm in TERM.finditer(cols):
            t = self.terms(tm.group(0))
            colterms.append(t)
        rows = []
        # rows: TERM : v v v  (several rows on one logical line)
        for rm in re.finditer(r"((?:[A-Za-z_][A-Za-z_0-9.]*)(?:\[[A-Z_0-9]+\])?(?:`\{[^}]*\})?)\s*:\s*((?:(?:\d+|ORDERED_ZERO|HARD\(\d+\)|-)\s*)+)", body):
            vals = [value(v) for v in rm.group(2).split()]
            if len(vals) == 1:  # one value for every column
                vals = vals * len(colterms)
            if len(vals) != len(colterms):
                die("sm_%d: TABLE_%s(%s) row %s has %d values for %d columns" %
                    (self.sm, kind, res, rm.group(1), len(vals), len(colterms)))
            rows.append((self.terms(rm.group(1)), vals))
        if not rows:
            die("sm_%d: empty table %s(%s)" % (self.sm, kind, res))
        self.tables.append((res, kind, colterms, rows))


def main():
    if len(sys.argv) != 2:
        die("usage: gen_latency.py LATENCY_DIR")
    models = []
    for sm in SMS:
        path = os.path.join(sys.argv[1], "sm_%d_latencies.txt" % sm)
        with open(path) as f:
            models.append(Model(sm, f.read()))
    ops = sorted(set().union(*[s for m in models for s in m.sets.values()]))
    opindex = {o: i for i, o in enumerate(ops)}
    words = (len(ops) + 63) // 64
    w = sys.stdout.write
    w("/* Generated by plugin/sass/gen_latency.py from nvdisasm's latency tables\n"
      " * (sm_80, sm_86, sm_90).  Do not edit; run the script again. */\n")
    w('#include "latency.h"\n\n')
    w("const unsigned st_lat_nops = %d;\n" % len(ops))
    w("const char *const st_lat_op_names[] = {\n")
    for o in ops:
        w('\t"%s",\n' % o)
    w("};\n\n")
    for m in models:
        setnames = []
        setid = {}

        def sid(name):
            if name not in setid:
                setid[name] = len(setnames)
                setnames.append(name)
            return setid[name]
        terms, lines, tables, vals = [], [], [], []

        def line(ts):
            first = len(terms)
            for (name, cond, slots) in ts:
                terms.append((sid(name), CONDS[cond], slots))
            lines.append((first, len(ts)))
            return len(lines) - 1
        for (res, kind, cols, rows) in m.tables:
            c0 = None
            for c in cols:
                i = line(c)
                c0 = i if c0 is None else c0
            r0 = None
            for (rt, rv) in rows:
                i = line(rt)
                r0 = i if r0 is None else r0
            v0 = len(vals)
            for (rt, rv) in rows:
                vals.extend(rv)
            dout, dant = m.resources.get(res, (NONE, NONE))
            deflt = {"TRUE": NONE, "OUTPUT": dout, "ANTI": dant}[kind]
            tables.append((RESOURCES.index(res), KINDS[kind], deflt, len(rows), len(cols), r0, c0, v0))
        for name in ("MIO_CBU_OPS", "MIO_OPS", "BRU_OPS", "UDP_OPS", "MATH_OPS"):
            sid(name)
        p = "sm%d_" % m.sm
        w("/* ---- sm_%d ---- */\n" % m.sm)
        w("static const uint64_t %ssets[] = {\n" % p)
        for name in setnames:
            bits = [0] * words
            for o in m.sets[name]:
                bits[opindex[o] // 64] |= 1 << (opindex[o] % 64)
            w("\t%s, /* %s */\n" % (", ".join("0x%016xull" % b for b in bits), name))
        w("};\n")
        w("static const struct st_lat_term %sterms[] = {\n" % p)
        for t in terms:
            w("\t{%d, %d, %d},\n" % t)
        w("};\n")
        w("static const struct st_lat_line %slines[] = {\n" % p)
        for l in lines:
            w("\t{%d, %d},\n" % l)
        w("};\n")
        w("static const int8_t %svals[] = {\n" % p)
        for i in range(0, len(vals), 24):
            w("\t" + ", ".join(str(v) for v in vals[i:i + 24]) + ",\n")
        w("};\n")
        w("static const struct st_lat_table %stables[] = {\n" % p)
        for t in tables:
            w("\t{%d, %d, %d, %d, %d, %d, %d, %d},\n" % t)
        w("};\n")
        w("static const struct st_lat_model %smodel = {\n" % p)
        w("\t%d, %d, %ssets, %sterms, %slines, %svals, %stables, %d,\n" % (m.sm, words, p, p, p, p, p, len(tables)))
        w("\t%d, %d, %d, %d, %d,\n" % tuple(setid[n] for n in ("MIO_CBU_OPS", "MIO_OPS", "BRU_OPS",
                                                                 "UDP_OPS", "MATH_OPS")))
        w("};\n\n")
    w("const struct st_lat_model *const st_lat_models[] = {%s, NULL};\n" %
      ", ".join("&sm%d_model" % sm for sm in SMS))
    sys.stderr.write("gen_latency: %d opcodes, %s tables\n" %
                     (len(ops), "/".join(str(len(m.tables)) for m in models)))


if __name__ == "__main__":
    main()
