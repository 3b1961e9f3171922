#!/usr/bin/env python3
"""Reference implementation of the `text` kind, written from docs/format.md.

usage: tests/ref/ref_text.py MODEL.tdm SEED NBLOCKS [FIRST_BLOCK] > out
       tests/ref/ref_text.py --check path/to/testdata [MODEL.tdm...]

Reads a text model file (docs/format.md, "Text models"), compiles it the
way the format says and writes NBLOCKS 64 KiB blocks of the `text` stream
starting at block FIRST_BLOCK.  --check compares a few ranges with the C
library (through the CLI: the built-in model from `testdata model export`,
a model `testdata model build` makes here, and each MODEL given)
and exits non-zero on a difference.  Standard library only; slow (about a
second per block).
"""
import hashlib
import math
import os
import subprocess
import sys
import tempfile

M64 = (1 << 64) - 1
P0, P1 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
NIL = 0xFFFFFF
BLOCK = 65536
RESERVE, PARA_RESERVE = 128, 176
HIST_N, CACHE_BITS, COPY_MIN_DIST = 8192, 12, 16
WORD_MAX, TAIL_CPS, RANK_MAX = 32, 24, (1 << 27) - 1
BOS = 0x110000
RUN_MIN, RUN_NB, RUN_BACK, RUN_GROUP, RUN_SALT = 20, 18, 4, 4, 0x52554e5354455854
END_MARKS = {ord(c) for c in ".!?"} | {0x2026, 0x3002, 0xFF01, 0xFF1F, 0x061F, 0x0964}


def mum(a, b):
    t = a * b
    return (t >> 64) ^ (t & M64)


class Rng:
    def __init__(self, s):
        self.s = s

    def draw(self):
        self.s = (self.s + P0) & M64
        return mum(self.s, self.s ^ P1)


# ---- alias tables ---------------------------------------------------------

def alias(values, weights):
    """Integer Vose: list of (value, alias value, threshold16)."""
    n = len(values)
    q = list(weights)
    T = sum(q)
    while T > 0x7FFFFFFF:
        q = [x >> 1 if x > 1 else 1 for x in q]
        T = sum(q)
    q = [x * n for x in q]
    al = list(range(n))
    small = [i for i in range(n) if q[i] < T]
    large = [i for i in range(n) if q[i] >= T]
    while small and large:
        l, g = small.pop(), large.pop()
        al[l] = g
        q[g] -= T - q[l]
        (small if q[g] < T else large).append(g)
    for i in small + large:
        q[i] = T
    return [(values[i] & NIL, values[al[i]] & NIL, min(0xFFFF, (q[i] << 16) // T))
            for i in range(n)]


def pick(e, acc):
    return e[0] if acc < e[2] else e[1]


def sample(tab, r):
    return pick(tab[((r & 0xFFFFFFFF) * len(tab)) >> 32], (r >> 32) & 0xFFFF)


def sample32(tab, h):
    return pick(tab[((h & 0xFFFF) * len(tab)) >> 16], h >> 16)


# ---- model files ----------------------------------------------------------

class Reader:
    def __init__(self, b):
        self.b, self.i = b, 0

    def var(self):
        v = sh = 0
        while True:
            c = self.b[self.i]
            self.i += 1
            v |= (c & 0x7F) << sh
            sh += 7
            if not c & 0x80:
                return v

    def bytes(self, n):
        s = self.b[self.i:self.i + n]
        self.i += n
        return s

    def lst(self):
        out, prev = [], -1
        for _ in range(self.var()):
            prev = prev + 1 + self.var()
            out.append((prev, self.var()))
        return out


def cols(b):
    return len(b.decode("utf-8"))


class Sep:
    def __init__(self, b):
        self.b, self.cols = b, cols(b)
        e = b_ = -1
        for i in range(len(b) - 1, -1, -1):
            if b[i] in b" \t":
                if e < 0:
                    e = i + 1
                b_ = i
            elif e >= 0:
                break
        self.cls = int(any(ord(c) in END_MARKS for c in b.decode("utf-8")))
        if e < 0:
            self.head, self.gap, self.tail = b"", b"", b
        else:
            self.head, self.gap, self.tail = b[:b_], b[b_:e], b[e:]


class Model:
    def __init__(self, data):
        self.version = int.from_bytes(data[8:12], "little")
        assert data[:8] == b"TDTXTMOD" and self.version in (1, 2)
        plen = int.from_bytes(data[16:24], "little")
        payload = data[56:]
        assert plen == len(payload)
        h = hashlib.blake2b(payload, digest_size=32).digest()
        assert h == data[24:56], "checksum"
        self.hash = h
        r = Reader(payload)
        sec = {}
        tags = ["PARM", "WORD", "SEPS", "UNIG", "BIGR", "SEPW", "LEAD", "STYL", "WIDT"]
        for tag in tags + (["RUNS"] if self.version == 2 else []):
            assert r.bytes(4) == tag.encode()
            n = int.from_bytes(r.bytes(4), "little")
            sec[tag] = Reader(r.bytes(n))
        assert r.i == len(payload)
        self.run_rate = 0
        if "RUNS" in sec:
            u = sec["RUNS"]
            self.run_rate, self.run_share = u.var(), u.var()
            self.run_pairs = [u.var() for _ in range(RUN_NB * RUN_NB)]
        p = sec["PARM"]
        (self.eol, self.cache_mu, self.copy_mu, self.recent_mu, self.recent_n, self.wb_word,
         self.wb_sep, self.tail_r, self.char_order, self.char_min, self.max_tokens) = \
            [p.var() for _ in range(11)]
        w = sec["WORD"]
        self.words = [w.bytes(w.var()) for _ in range(w.var())]
        V = self.V = len(self.words)
        s = sec["SEPS"]
        self.seps = [Sep(s.bytes(s.var())) for _ in range(s.var())]
        u = sec["UNIG"]
        uni = [u.lst() for _ in range(3)]
        self.uni = [self.dist(uni[c] if uni[c] else uni[2], None) for c in range(3)]
        b = sec["BIGR"]
        self.big = [self.dist(b.lst(), self.wb_word) for _ in range(2 * (V + 1))]
        sw = sec["SEPW"]
        total = {}
        self.sepw = []
        for _ in range(V + 1):
            l = sw.lst()
            self.sepw.append(self.dist(l, self.wb_sep))
            for k, c in l:
                total[k] = total.get(k, 0) + c
        g = sorted(total.items())
        self.sepg = self.dist(g, None)
        best = max((c, -k) for k, c in g if k & 1)
        self.final_sep = -best[1]
        self.lead = self.dist(sec["LEAD"].lst(), None)
        st = sec["STYL"]
        self.styles, sw_ = [], []
        for i in range(st.var()):
            i1 = st.bytes(st.var())
            i2 = st.bytes(st.var())
            trail = st.var()
            self.styles.append((i1, i2, trail))
            sw_.append((i, st.var()))
        self.style = self.dist(sw_, None)
        wd = sec["WIDT"].lst()
        self.width = self.dist(wd if wd else [(72, 1)], None)
        self.compile_chars()
        self.tk0 = int.from_bytes(h[0:8], "little")
        self.tk1 = int.from_bytes(h[8:16], "little")

    @staticmethod
    def dist(lst, wb):
        if not lst:
            return []
        vals = [k for k, _ in lst]
        ws = [c for _, c in lst] if wb is None else [256 * c for _, c in lst]
        if wb:
            vals.append(NIL)
            ws.append(wb * len(lst))
        return alias(vals, ws)

    def compile_chars(self):
        K = self.char_order
        total, succ = {}, {}
        for w in self.words:
            h = [BOS] * K + [ord(c) for c in w.decode("utf-8")]
            for j in range(K, len(h) + 1):
                sym = h[j] if j < len(h) else None
                for k in range(K + 1):
                    ctx = tuple(h[j - k:j])
                    total[ctx] = total.get(ctx, 0) + 1
                    d = succ.setdefault(ctx, {})
                    d[sym] = d.get(sym, 0) + 1
        states = {c for c in total if len(c) <= 1 or total[c] >= self.char_min}

        def longest(h):
            for ln in range(min(K, len(h)), 0, -1):
                if tuple(h[len(h) - ln:]) in states:
                    return tuple(h[len(h) - ln:])
            raise AssertionError

        self.ctab = {}
        for c in states:
            items = sorted(succ[c].items(), key=lambda kv: -1 if kv[0] is None else kv[0])
            vals = [NIL if s is None else longest(list(c) + [s]) for s, _ in items]
            # alias over indices, then map back (values are states, not ints)
            tab = alias(list(range(len(items))), [n for _, n in items])
            self.ctab[c] = [(vals[a] if a != NIL else None, vals[b] if b != NIL else None, t)
                            for a, b, t in tab]
        self.cstart = longest([BOS] * K)

    def tail_word(self, rank, cap):
        halves = self.halves(Rng(mum(self.tk0 ^ rank, self.tk1 ^ P1) ^ self.tk1))
        st, out, n = self.cstart, [], 0
        while True:
            nxt = self.cstep(st, next(halves))
            if nxt == NIL:
                if n:
                    break
                continue
            ch = chr(nxt[-1])
            if n == TAIL_CPS or len("".join(out).encode()) + len(ch.encode()) > WORD_MAX:
                break
            out.append(ch)
            n += 1
            st = nxt
        s = "".join(out)
        return (self.cap(s) if cap else s).encode(), n

    @staticmethod
    def halves(rng):
        """32-bit halves of the draws: low, then high."""
        while True:
            r = rng.draw()
            yield r & 0xFFFFFFFF
            yield r >> 32

    def cstep(self, st, h):
        """The character model's next state after st, from 32 bits h."""
        tab = self.ctab[st]
        e = tab[((h & 0xFFFF) * len(tab)) >> 16]
        return e[0] if (h >> 16) < e[2] else e[1]

    @staticmethod
    def cap(s):
        c = ord(s[0])
        if ord("a") <= c <= ord("z") or (0xE0 <= c <= 0xFE and c != 0xF7) or \
                (0x3B1 <= c <= 0x3C9 and c != 0x3C2) or 0x430 <= c <= 0x44F:
            c -= 32
        elif 0x450 <= c <= 0x45F:
            c -= 80
        return chr(c) + s[1:]


def tail_rank(R, x):
    y = x + 1
    a = (((1 << 32) - y) << 16) // y
    if a > (1 << 24):
        return RANK_MAX
    r = (R * ((a * (a + (1 << 17))) >> 16)) >> 16
    return min(r, RANK_MAX)


def cache_slot(prev, cls):
    return (((prev * 3 + cls + 1) * 0x9E3779B1) & 0xFFFFFFFF) >> (32 - CACHE_BITS)


def key(m, seed):
    dom = b"libtestdata/text/2/" + m.hash.hex().encode()
    h = hashlib.blake2b(dom + seed.to_bytes(8, "little"), digest_size=32).digest()
    return [int.from_bytes(h[8 * i:8 * i + 8], "little") for i in range(4)]


def block(m, k, b, log=None):
    """Block b of round 0; log, if given, gets (pos, word id, bytes) of each word."""
    V = m.V
    eol = b"\r\n" if m.eol else b"\n"
    rng = Rng(mum(k[0] ^ b, k[1] ^ P1) ^ k[2])
    out = bytearray()
    hw, hs = [0] * HIST_N, [0] * HIST_N
    cache = [0] * (1 << CACHE_BITS)
    nt = 0
    while len(out) + PARA_RESERVE <= BLOCK:
        i1, i2, trail = m.styles[sample(m.style, rng.draw())]
        width = sample(m.width, rng.draw())
        lead = m.seps[sample(m.lead, rng.draw())]
        if out:
            out += eol
        out += i1 + lead.b
        col = len(i1) + lead.cols
        pend, prev, ntok, cls, copying, src = None, None, 0, 2, 0, 0
        r = rng.draw()
        while True:
            # the word
            sid = None
            if prev is None:
                w = sample(m.uni[2], r)
                copying = 0
            else:
                slot = cache_slot(prev, cls)
                q, t16 = cache[slot], r >> 48
                copied = False
                if copying:
                    if t16 < m.copy_mu and src + 1 < nt:
                        q, copied = src + 1, True
                elif (t16 < m.cache_mu and q < nt and nt - q >= COPY_MIN_DIST and nt - q < HIST_N
                      and q > 0 and hw[(q - 1) % HIST_N] == prev and hs[(q - 1) % HIST_N] & 1 == 0
                      and m.seps[hs[(q - 1) % HIST_N] >> 1].cls == cls):
                    copied = True
                if copied and hw[q % HIST_N] != prev:
                    w, sid, src = hw[q % HIST_N], hs[q % HIST_N], q
                else:
                    copied = False
                    d = m.big[2 * min(prev, V) + cls]
                    w = sample(d, r) if d else NIL
                    if w == NIL:
                        r2 = rng.draw()
                        if cls == 0 and (r2 >> 48) < m.recent_mu:
                            kk = min(nt, m.recent_n)
                            j = nt - 1 - (((r2 & 0xFFFFFFFF) * kk) >> 32)
                            hp = hs[(j - 1) % HIST_N]
                            if j > 0 and not hp & 1 and m.seps[hp >> 1].cls == 0:
                                w = hw[j % HIST_N]
                        if w == NIL:
                            w = sample(m.uni[cls], rng.draw())
                cache[slot] = nt
                copying = int(copied)
            if w == V:
                w = V + 1 + tail_rank(m.tail_r, rng.draw() & 0xFFFFFFFF)
            row = min(w, V)
            # its separator
            if sid is None:
                d = m.sepw[row]
                sid = sample(d, rng.draw()) if d else NIL
                if sid == NIL:
                    sid = sample(m.sepg, rng.draw())
            ntok += 1
            if not sid & 1 and (len(out) + RESERVE > BLOCK or ntok >= m.max_tokens):
                sid = m.final_sep
            hw[nt % HIST_N], hs[nt % HIST_N] = w, sid
            nt += 1
            if w < V:
                wb = m.words[w]
                wc = cols(wb)
            else:
                wb, wc = m.tail_word(w - V - 1, cls != 0)
            sp = m.seps[sid >> 1]
            final = sid & 1
            hc = sp.cols if final else cols(sp.head)
            # the unit: tail of the previous separator, the word, the head of this one
            if pend is not None:
                ucols = cols(pend.tail) + wc + hc
                if col + len(pend.gap) + ucols + trail > width:
                    del out[len(out) - len(pend.gap) - len(pend.tail):]
                    if trail:
                        out += b" "
                    out += eol + i2 + pend.tail
                    col = len(i2) + ucols
                else:
                    col += len(pend.gap) + ucols
            else:
                col += wc + hc
            if log is not None:
                log.append((len(out), w, wb))
            out += wb + sp.b
            if final:
                if trail:
                    out += b" "
                out += eol
                break
            pend, prev, cls = sp, w, sp.cls
            r = rng.draw()
    out += b"\n" * (BLOCK - len(out))
    return bytes(out)


ROUND_BLOCKS = 16
RESPELL_TRIES = 16


def respell(m, s, orig):
    """orig spelled anew by the character model, code point by code point
    with the byte lengths of orig's; orig itself if a place fails."""
    halves = m.halves(Rng(s))
    st, out = m.cstart, []
    for ch in orig.decode("utf-8"):
        need = len(ch.encode())
        for t in range(RESPELL_TRIES):
            if t == RESPELL_TRIES // 2:
                st = m.cstart
            nxt = m.cstep(st, next(halves))
            if nxt is not None and nxt != NIL and len(chr(nxt[-1]).encode()) == need:
                out.append(chr(nxt[-1]))
                st = nxt
                break
        else:
            return orig
    if is_cap(ord(orig.decode("utf-8")[0])):
        return m.cap("".join(out)).encode()
    return "".join(out).encode()


def is_cap(c):
    return (0x41 <= c <= 0x5A or (0xC0 <= c <= 0xDE and c != 0xD7)
            or (0x391 <= c <= 0x3A9 and c != 0x3A2) or 0x400 <= c <= 0x42F)


def classes(m):
    """Head words by (band, length, code points, shape), classes in order of first id."""
    if not hasattr(m, "members"):
        ids, m.members, m.cls_of, m.idx = {}, [], [], []
        for w, wb in enumerate(m.words):
            c = ord(wb.decode("utf-8")[0])
            shape = 2 if 0x30 <= c <= 0x39 else int(is_cap(c))
            key = (max(0, (w + 1).bit_length() - 9), len(wb), cols(wb), shape)
            if key not in ids:
                ids[key] = len(m.members)
                m.members.append([])
            q = ids[key]
            m.cls_of.append(q)
            m.idx.append(len(m.members[q]))
            m.members[q].append(w)
    return m.members


def round_block(m, k, b):
    """Block b of any round: round 0 as generated, later rounds from its words."""
    if b < ROUND_BLOCKS:
        return block(m, k, b)
    j = b // ROUND_BLOCKS
    log = []
    out = bytearray(block(m, k, b % ROUND_BLOCKS, log))
    members = classes(m)
    rng = Rng(mum(k[3] ^ j, k[0] ^ P1))
    rot = [((rng.draw() >> 32) * len(q)) >> 32 if len(q) > 1 else 0 for q in members]
    d = math.isqrt(j << 16)
    thr = 65536 if d <= 512 else (1 << 25) // d
    for pos, w, wb in log:
        if w < m.V:
            q = members[m.cls_of[w]]
            nb = m.words[q[(m.idx[w] + rot[m.cls_of[w]]) % len(q)]]
        else:
            h = mum(k[3] ^ j, k[1] ^ (w - m.V - 1))
            nb = respell(m, h, wb) if (h >> 48) < thr else wb
        assert len(nb) == len(wb)
        out[pos:pos + len(nb)] = nb
    return bytes(out)


def run_pair(counts, r):
    """A (length, distance) bucket pair by r's low 32 bits: the first whose
    running total exceeds them scaled to the total."""
    x = ((r & 0xFFFFFFFF) * sum(counts)) >> 32
    k, acc = 0, counts[0]
    while acc <= x:
        k += 1
        acc += counts[k]
    return divmod(k, RUN_NB)


def run_value(k, r):
    return (1 << k) | ((r >> 32) & ((1 << k) - 1))


def line_from(t, x, to):
    """The first line start in t[x, to] (a block start or after '\n'), else to."""
    if x % BLOCK == 0 or x >= to or t[x - 1] == 10:
        return min(x, to)
    lim = min(to, (x // BLOCK + 1) * BLOCK)
    q = t.find(b"\n", x, lim)
    return min(q + 1, to) if q >= 0 else lim


def line_end(t, at, i):
    """The end of the line holding t[i] (a group at t[at:]): after its '\n',
    or at the end of its block."""
    be = at + ((i - at) // BLOCK + 1) * BLOCK
    q = t.find(b"\n", i, be)
    return q + 1 if q >= 0 else be


def run_plan(m, k, gi, t, at):
    """Copies (dst relative to the group, n, d) of group gi, whose text
    without runs is t[at:at + RUN_GROUP * BLOCK]."""
    eol = 2 if m.eol else 1
    end = at + RUN_GROUP * BLOCK
    rng = Rng(mum(k[2] ^ gi, k[3] ^ RUN_SALT))
    out, p = [], at
    while p < end and len(out) < RUN_GROUP * BLOCK // RUN_MIN:
        nxt = line_end(t, at, p)
        if (rng.draw() >> 40) >= m.run_rate * (nxt - p):
            p = nxt
            continue
        r1, r2 = rng.draw(), rng.draw()
        kl, kd = run_pair(m.run_pairs, r1)
        ln, d = run_value(kl, r1), run_value(kd, r2)
        q = line_end(t, at, p + ln - 1) if ln < end - p else end
        while q > p and t[q - 1] != 10:
            q -= 1
        if q - p <= eol:
            p = nxt
            continue
        out.append((p - at, q - p, d))
        p = q
    return out


def run_make(s, p, n, d, eol):
    if d > p:
        return
    src = line_from(s, p - d, p)
    if src >= p:
        return
    k = n - eol
    if k <= p - src:
        while k and (s[src + k] & 0xC0) == 0x80:
            k -= 1
        s[p:p + n] = s[src:src + k] + b" " * (n - eol - k) + (b"\r\n" if eol == 2 else b"\n")
    else:
        k = p - src
        while k and s[src + k - 1] != 10:
            k -= 1
        s[p:p + k] = s[src:src + k]


def text_block(m, k, b):
    """Block b of the stream: round_block, with the model's runs made over its
    view, the blocks from four before its aligned group of four to the
    group's end, the copies of each group planned over the group."""
    if not m.run_rate:
        return round_block(m, k, b)
    g = b // RUN_GROUP * RUN_GROUP
    sb = max(0, g - RUN_BACK)
    pre = bytearray(b"".join(round_block(m, k, i) for i in range(sb, g + RUN_GROUP)))
    eol = 2 if m.eol else 1
    for gs in range(sb, g + RUN_GROUP, RUN_GROUP):
        at = (gs - sb) * BLOCK
        for dst, n, d in run_plan(m, k, gs // RUN_GROUP, pre, at):
            run_make(pre, at + dst, n, d, eol)
    return bytes(pre[(b - sb) * BLOCK:(b - sb + 1) * BLOCK])


def check(tool, models):
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        builtin = os.path.join(tmp, "builtin.tdm")
        subprocess.run([tool, "model", "export", "-o", builtin], check=True)
        # and a model built here, from 40 KiB of built-in text
        corpus = os.path.join(tmp, "corpus.txt")
        small = os.path.join(tmp, "built.tdm")
        with open(corpus, "wb") as f:
            subprocess.run([tool, "gen", "text", "40960", "--seed", "99"], stdout=f, check=True)
        subprocess.run([tool, "model", "build", corpus, "-o", small], check=True)
        # and one with runs: 160 KiB of text with its first 100 KiB twice
        # (a RUNS section, version 2, whose copies run over several blocks)
        t = subprocess.run([tool, "gen", "text", str(160 * 1024), "--seed", "98"],
                           stdout=subprocess.PIPE, check=True).stdout
        rcorpus, runs = os.path.join(tmp, "rcorpus.txt"), os.path.join(tmp, "runs.tdm")
        with open(rcorpus, "wb") as f:
            f.write(t + t[:t.index(b"\n", 100 * 1024) + 1])
        subprocess.run([tool, "model", "build", rcorpus, "-o", runs], check=True,
                       stderr=subprocess.DEVNULL)
        assert Model(open(runs, "rb").read()).run_rate, "a model with runs"
        # the default model is the built-in one
        dflt = subprocess.run([tool, "gen", "text", str(2 * BLOCK)], stdout=subprocess.PIPE,
                              check=True).stdout
        m = Model(open(builtin, "rb").read())
        ok = dflt == round_block(m, key(m, 0), 0) + round_block(m, key(m, 0), 1)
        bad += not ok
        print("default model seed 0 blocks 0..1: %s" % ("match" if ok else "DIFFER"))
        for path in [builtin, small, runs] + models:
            m = Model(open(path, "rb").read())
            for seed, first, n in ((0, 0, 2), (5, 15, 3), (3, 1000, 1), (2**64 - 1, 2**24, 1)):
                k = key(m, seed)
                ref = b"".join(text_block(m, k, first + i) for i in range(n))
                got = subprocess.run([tool, "gen", "text", str(BLOCK * n), "--model", path,
                                      "--seed", str(seed), "--offset", str(BLOCK * first)],
                                     stdout=subprocess.PIPE, check=True).stdout
                ok = got == ref
                bad += not ok
                print("%s seed %d blocks %d..%d: %s" % (os.path.basename(path), seed, first,
                                                        first + n - 1, "match" if ok else "DIFFER"))
                if not ok:
                    for i in range(min(len(ref), len(got))):
                        if ref[i] != got[i]:
                            print("  first difference at byte %d" % i)
                            break
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], sys.argv[3:]))
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    m = Model(open(sys.argv[1], "rb").read())
    seed = int(sys.argv[2], 0)
    nblocks = int(sys.argv[3])
    first = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    k = key(m, seed)
    for i in range(nblocks):
        sys.stdout.buffer.write(text_block(m, k, first + i))
