#!/usr/bin/python3
"""Independent reference implementation of the `like` kind (docs/format.md,
section "like"), written from the specification: standard library only,
slow, for checking the C library byte for byte.

  ref_like.py PROFILE.json SEED OFFSET LEN > bytes
  ref_like.py --check path/to/testdata     (CTest `ref.like`)

--check takes profiles from the CLI (`testdata profile --dump NAME`, and
profiles it builds from samples it generates: it picks an LZ or a context
model, and must pick a context model for 300 KiB of text), variants of them
with model.dedup and model.const, and two context models made by hand,
generates ranges at the start, across a block boundary and far into the
stream with seeds 0 and 2^64-1, and compares with `testdata gen like`.

Profiles of "version" 2 may hold a context model (`model.ctx`, format
version 8, docs/format.md "Context models (version 8)"); such documents are
generated only as far as they are read.
"""
import base64
import hashlib
import json
import subprocess
import sys
import tempfile

M64 = (1 << 64) - 1
P0 = 0xa0761d6478bd642f
P1 = 0xe7037ed1a0b428db
SLOTS = 4096
NX, NVC, NCAT, NBINS = 32, 64, 6, 4
OC_X, OC_B = 3, 3 + 32
NOC = OC_B + NVC
MINMATCH = 4
RETRY = 16
CAND = 4
INVALID = (1 << 32) - 1
BLOCK = 1 << 20
# Byte classes of the block permutations, in order; each sorted.
_FIXED = [0, 9, 10, 13, 32]
CLASSES = [[b] for b in _FIXED] + [
    [b for b in range(32) if b not in _FIXED] + [127],
    [b for b in range(33, 127) if not chr(b).isalnum()],
    list(range(48, 58)), list(range(65, 91)), list(range(97, 123)),
    list(range(128, 192)), list(range(192, 224)), list(range(224, 240)), list(range(240, 256))]


def wymix(a, b):
    t = (a & M64) * (b & M64)
    return ((t >> 64) ^ t) & M64


class Rng:
    def __init__(self, s):
        self.s = s & M64

    def next(self):
        self.s = (self.s + P0) & M64
        return wymix(self.s, self.s ^ P1)


def vbase(c):
    if c < 16:
        return c
    lg = (c - 16) // 2 + 4
    return (1 << lg) | (((c - 16) & 1) << (lg - 1))


def vspan(c):
    return 1 if c < 16 else 1 << ((c - 16) // 2 + 3)


def vcode(v):
    if v < 16:
        return v
    lg = v.bit_length() - 1
    return 16 + 2 * (lg - 4) + ((v >> (lg - 1)) & 1)


def pbin(pos):
    return 0 if pos < 2048 else 1 if pos < 16384 else 2 if pos < 131072 else 3


def slots(counts):
    """Largest-remainder table of 4096 entry indices."""
    T = sum(counts)
    assert T > 0
    q = [c * SLOTS // T for c in counts]
    rem = sorted(((-(c * SLOTS % T), i) for i, c in enumerate(counts) if c), key=lambda x: x)
    left = SLOTS - sum(q)
    for k in range(left):
        q[rem[k][1]] += 1
    out = []
    for i, n in enumerate(q):
        out.extend([i] * n)
    assert len(out) == SLOTS
    return out


# --- the model, read from the JSON form ---------------------------------------

def read_ctx(o):
    groups = []
    for g in o["groups"]:
        cnt = [0] * 256
        for k in range(0, len(g), 2):
            cnt[g[k]] = g[k + 1]
        groups.append(cnt)
    return {"map": list(o["map"]), "cnt": groups}


def read_model(m):
    seq = [[0] * NVC for _ in range(NOC)]
    for oc, c, n in m["seq"]:
        seq[oc][c] = n
    ml = [[0] * NVC for _ in range(NOC)]
    for oc, c, n in m["ml"]:
        ml[oc][c] = n
    same = [0] * NOC
    for oc, q in m["same"]:
        same[oc] = q
    lit = []
    for b in m["lit"]:
        d = read_ctx(b)
        d["cat"] = [list(b["cat"][0]), list(b["cat"][1])]
        lit.append(d)
    return {"doc": m["doc"], "dedup": m["dedup"], "const": list(m.get("const", [0, 0])),
            "dist": list(m["dist"]), "periods": list(m["periods"]),
            "seq": seq, "ml": ml, "same": same, "lit": lit, "jun": read_ctx(m["junction"])}


def ctx_json(c):
    s = '"map":[' + ",".join(str(x) for x in c["map"]) + '],"groups":['
    gs = []
    for cnt in c["cnt"]:
        gs.append("[" + ",".join("%d,%d" % (b, cnt[b]) for b in range(256) if cnt[b]) + "]")
    return s + ",".join(gs) + "]"


def canonical(M):
    """The canonical JSON of the model (docs/format.md): its BLAKE2b-256 is
    the profile's digest."""
    s = '{"doc":%d,"dedup":%d,' % (M["doc"], M["dedup"])
    if M["const"][1]:
        s += '"const":[%d,%d],' % tuple(M["const"])
    s += '"dist":[%s],"periods":[%d,%d],"seq":[' % (
        ",".join(str(d) for d in M["dist"]), M["periods"][0], M["periods"][1])
    s += ",".join("[%d,%d,%d]" % (oc, c, M["seq"][oc][c]) for oc in range(NOC) for c in range(NVC)
                  if M["seq"][oc][c])
    s += '],"ml":['
    s += ",".join("[%d,%d,%d]" % (oc, c, M["ml"][oc][c]) for oc in range(NOC) for c in range(NVC)
                  if M["ml"][oc][c])
    s += '],"same":['
    s += ",".join("[%d,%d]" % (oc, M["same"][oc]) for oc in range(NOC) if M["same"][oc])
    s += '],"lit":['
    bins = []
    for b in M["lit"]:
        bins.append('{"cat":[[%s],[%s]],' % (",".join(str(x) for x in b["cat"][0]),
                                             ",".join(str(x) for x in b["cat"][1])) + ctx_json(b) + "}")
    s += ",".join(bins) + '],"junction":{' + ctx_json(M["jun"]) + "}}"
    return s


# --- context models (format version 8) ---------------------------------------

def alias_table(w):
    """The alias table of counts w (docs/format.md, "Alias tables")."""
    n, T = len(w), sum(w)
    p = [x * n for x in w]
    thr = [T] * n
    alias = list(range(n))
    small = [q for q in range(n) if p[q] < T]
    large = [q for q in range(n) if p[q] >= T]
    while small and large:
        a = small.pop()
        g = large.pop()
        thr[a] = p[a]
        alias[a] = g
        p[g] -= T - p[a]
        (small if p[g] < T else large).append(g)
    return thr, alias


def read_ctxmodel(m):
    """The model of a context-model profile: records decoded from base64,
    checked against the rules of the section, with their alias tables."""
    assert set(m) <= {"doc", "dedup", "const", "ctx"}, sorted(m)
    c = m["ctx"]
    assert set(c) == {"order", "floor", "gap", "copies", "contexts"}, sorted(c)
    K, F, G = c["order"], c["floor"], c["gap"]
    assert 0 <= K <= 4 and 0 <= F <= 2048 and 0 <= G <= 1048576
    copies = [tuple(x) for x in c["copies"]]
    assert (1 <= len(copies) <= 256) if G else not copies
    for ln, d in copies:
        assert 1 <= ln <= 1048576 and 1 <= d <= 1048575
    raw = base64.b64decode(c["contexts"], validate=True)
    # padded, and the bits past the last byte zero (the library's decoder,
    # libsodium's, refuses others): the canonical JSON holds it as given
    assert base64.b64encode(raw).decode() == c["contexts"], "model.ctx.contexts: not canonical base64"
    assert 0 < len(raw) <= 49152
    recs = [{} for _ in range(K + 1)]  # per order: context bytes -> record
    i, last = 0, None
    while i < len(raw):
        k = raw[i]
        assert k <= K
        ctx = raw[i + 1:i + 1 + k]
        h, n = raw[i + 1 + k], raw[i + 2 + k] + 1
        assert len(ctx) == k and h <= 128
        i += 3 + k
        ent = raw[i:i + 3 * n]
        assert len(ent) == 3 * n
        i += 3 * n
        by = [ent[3 * e] for e in range(n)]
        w = [ent[3 * e + 1] | ent[3 * e + 2] << 8 for e in range(n)]
        assert all(by[e] < by[e + 1] for e in range(n - 1)) and min(w) >= 1
        assert last is None or (k, ctx) > last, "records out of order"
        assert (last is not None) or k == 0, "the first record is not of order 0"
        if k >= 2:
            assert ctx[:-1] in recs[k - 1], "a record's context without its newest byte is missing"
        last = (k, ctx)
        thr, alias = alias_table(w)
        recs[k][ctx] = (k, h, n, sum(w), bytes(by), thr, alias)
    return {"doc": m["doc"], "dedup": m["dedup"], "const": list(m.get("const", [0, 0])),
            "K": K, "F": F, "G": G, "copies": copies, "raw": raw, "recs": recs}


def canonical_ctx(M):
    s = '{"doc":%d,"dedup":%d,' % (M["doc"], M["dedup"])
    if M["const"][1]:
        s += '"const":[%d,%d],' % tuple(M["const"])
    s += '"ctx":{"order":%d,"floor":%d,"gap":%d,"copies":[%s],"contexts":"%s"}}' % (
        M["K"], M["F"], M["G"], ",".join("[%d,%d]" % lc for lc in M["copies"]),
        base64.b64encode(M["raw"]).decode())
    return s


class CtxDoc:
    """A document of a context model, made as far as it is read: its bytes
    before any point do not depend on where it is cut, so it is generated
    for the whole document's length and extended on demand."""

    def __init__(self, M, s, L):
        self.M, self.L = M, L
        self.rng = Rng(s)
        self.out = bytearray()
        self.recs = M["recs"]
        self.st = self.recs[0][b""]
        self.hist = [128] * 16
        self.hsum = 2048
        self.hi = 0
        self.next = None
        # how often each path was taken (--check asserts the hand-made
        # model takes them all)
        self.paths = M.setdefault("paths", {"copy": 0, "copy cut": 0, "copy too far": 0,
                                             "floor": 0, "alias": 0, "byte": 0})
        if M["G"] > 0:
            r = self.rng.next()
            self.next = ((r & 0xffffffff) * 2 * M["G"]) >> 32

    def state(self, pos, K):
        out, recs = self.out, self.recs
        for k in range(min(K, pos), 0, -1):
            rec = recs[k].get(bytes(out[pos - k:pos]))
            if rec is not None:
                return rec
        return recs[0][b""]

    def extend(self, need):
        M, L, out, rng = self.M, self.L, self.out, self.rng
        K, F, G, copies = M["K"], M["F"], M["G"], M["copies"]
        hist = self.hist
        pos = len(out)
        st = self.st
        while pos < L and pos < need:
            if self.next is not None and pos >= self.next:  # a copy
                r = rng.next()
                ln, dist = copies[((r >> 32) * len(copies)) >> 32]
                self.next = pos + (((r & 0xffffffff) * 2 * G) >> 32)
                if dist <= pos:
                    self.paths["copy"] += 1
                    if ln > L - pos:
                        self.paths["copy cut"] += 1
                    for _ in range(min(ln, L - pos)):
                        out.append(out[pos - dist])
                        pos += 1
                    st = self.state(pos, K)
                    continue
                self.paths["copy too far"] += 1
            c = st
            if F > 0 and self.hsum < F and st[0] > 1:  # the entropy floor
                c = self.state(pos, 1)
                self.paths["floor"] += 1
            self.hsum += c[1] - hist[self.hi]
            hist[self.hi] = c[1]
            self.hi = (self.hi + 1) & 15
            r = rng.next()
            q = ((r >> 32) * c[2]) >> 32
            if ((r & 0xffffffff) * c[3]) >> 32 >= c[5][q]:
                q = c[6][q]
                self.paths["alias"] += 1
            self.paths["byte"] += 1
            out.append(c[4][q])
            pos += 1
            st = self.state(pos, K)
        self.st = st


class Like:
    def __init__(self, profile_json, seed):
        m = json.loads(profile_json)["model"]
        self.isctx = "ctx" in m
        M = read_ctxmodel(m) if self.isctx else read_model(m)
        self.M = M
        digest = hashlib.blake2b((canonical_ctx(M) if self.isctx else canonical(M)).encode(),
                                 digest_size=32).digest()
        key = hashlib.blake2b(b"libtestdata/like/1" + (seed & M64).to_bytes(8, "little") + digest,
                              digest_size=32).digest()
        self.k = [int.from_bytes(key[8 * i:8 * i + 8], "little") for i in range(4)]
        self.L = M["doc"]
        self.ndocs = (BLOCK + self.L - 1) // self.L
        self.dd = None
        if M["dedup"] > 65536:
            dk = hashlib.blake2b(b"libtestdata/like/dedup/1" + (seed & M64).to_bytes(8, "little"),
                                 digest_size=32).digest()
            self.dd = (M["dedup"], int.from_bytes(dk[:8], "little"))
        self.cache = {}
        self.ctxdocs = {}
        if self.isctx:
            return
        flat = [M["seq"][oc][c] for oc in range(NOC) for c in range(NVC)]
        self.seq_tab = [(t // NVC, t % NVC) for t in slots(flat)]
        self.ml_tab = {}
        for oc in range(NOC):
            if sum(M["seq"][oc]):
                self.ml_tab[oc] = slots(M["ml"][oc])
        self.cat_tab = []
        for b in M["lit"]:
            rows = []
            for f in range(2):
                rows.append(slots(b["cat"][f]) if sum(b["cat"][f]) else [NCAT - 1] * SLOTS)
            self.cat_tab.append(rows)
        self.lit_tab = [[slots(cnt) for cnt in b["cnt"]] for b in M["lit"]]
        # A uniform bin: one group with 256 equal counts, and no category but "fresh".
        self.uniform = [len(b["cnt"]) == 1 and len(set(b["cnt"][0])) == 1 and
                        all(b["cat"][f][c] == 0 for f in range(2) for c in range(NCAT - 1))
                        for b in M["lit"]]
        self.jw = []
        for cnt in M["jun"]["cnt"]:
            T = sum(cnt)
            self.jw.append([c * 65536 // T + 1 for c in cnt])

    def ctx_doc(self, j, end):
        # Bytes [0, end) of document j of a context model.
        d = self.ctxdocs.get(j)
        if d is None:
            if len(self.ctxdocs) > 4:
                self.ctxdocs.clear()
            # L: the document's length, cut at the block's end; the bytes
            # before the cut do not depend on it.
            L = min(self.L, BLOCK - j * self.L)
            d = self.ctxdocs[j] = CtxDoc(self.M, wymix(self.k[0] ^ j, self.k[1] ^ P1) ^ self.k[2], L)
        d.extend(end)
        return d.out

    def doc(self, j, L):
        # Document j cut at L <= doc bytes (its bytes do not depend on L).
        if (j, L) in self.cache:
            return self.cache[(j, L)]
        M = self.M
        rng = Rng(wymix(self.k[0] ^ j, self.k[1] ^ P1) ^ self.k[2])
        out = bytearray(L)
        pos = 0
        rep = [0, 0, 0]
        nrep = 0
        lastd = 0
        pll = pml = 0
        have_prev = False
        rb = 10  # from the whole document's length, also when it is cut
        while rb < 16 and (1 << rb) < self.L:
            rb += 1
        recent = [0] * (1 << rb)
        rins = 0
        starts = []  # where the document's copies began, in order
        xd, per = M["dist"], M["periods"]
        while pos < L:
            r = rng.next()
            oc, lc = self.seq_tab[r & 4095]
            for _ in range(1, RETRY):
                if oc < OC_X:
                    need = 0 if oc < nrep else INVALID
                elif oc < OC_B:
                    need = xd[oc - OC_X]
                else:
                    need = vbase(oc - OC_B)
                if need != INVALID and need <= pos + vbase(lc):
                    break
                r = rng.next()
                oc, lc = self.seq_tab[r & 4095]
            ll = vbase(lc) + ((((r >> 12) & 0xfffff) * vspan(lc)) >> 20)
            mc = self.ml_tab[oc][(r >> 32) & 4095]
            ml = MINMATCH + vbase(mc) + ((((r >> 44) & 0xfffff) * vspan(mc)) >> 20)
            r2 = rng.next()
            if have_prev and ((r2 >> 32) & 0xffff) < M["same"][oc]:
                ll, ml = pll, pml
            pll, pml, have_prev = ll, ml, True
            rp = -1
            if oc < OC_X:
                dist = rep[oc] if oc < nrep else INVALID
                rp = oc
            elif oc < OC_B:
                dist = xd[oc - OC_X]
            else:
                b = oc - OC_B
                dist = vbase(b) + (((r2 & 0xffffffff) * vspan(b)) >> 32)
                if dist == 0:
                    dist = 1
            if ll == 0 and (dist == INVALID or dist > pos):
                ll = 1
            ll = min(ll, L - pos)
            phrase = None
            if oc >= OC_B:
                b = oc - OC_B
                rc = rng.next()
                cand = [dist]
                for c in range(1, CAND):
                    d = vbase(b) + ((((rc >> (21 * (c - 1))) & 0x1fffff) * vspan(b)) >> 21)
                    cand.append(d if d else 1)
                at = pos + ll  # where the copy will start
                if rc >> 63 and dist <= at:
                    # the most recent copy start at a distance in the bucket
                    lo, hi = max(vbase(b), 1), max(vbase(b) + vspan(b) - 1, 1)
                    for st in reversed(starts):
                        if at - st >= lo:
                            if at - st <= hi:
                                phrase = at - st
                            break
            raw = []
            for k in range(ll):
                bn = pbin(pos)
                first = 1 if (k == 0 and lastd != 0) else 0
                if self.uniform[bn] and not first:
                    if not raw:
                        raw = list(rng.next().to_bytes(8, "little"))
                    out[pos] = raw.pop(0)
                    pos += 1
                    continue
                rr = rng.next()
                cat = self.cat_tab[bn][first][(rr >> 40) & 4095]
                if cat < 3:
                    cd = rep[cat] if cat < nrep else 0
                elif cat < 5:
                    cd = per[cat - 3]
                else:
                    cd = 0
                if cat < 5 and cd and cd <= pos and not (first and out[pos - cd] == out[pos - lastd]):
                    byte = out[pos - cd]
                else:
                    g = M["lit"][bn]["map"][out[pos - 1] if pos else 0]
                    lt = self.lit_tab[bn][g]
                    byte = lt[rr & 4095]
                    if first:
                        bad = out[pos - lastd]
                        if byte == bad:
                            byte = lt[(rr >> 12) & 4095]
                        if byte == bad:
                            byte = lt[(rr >> 24) & 4095]
                        if byte == bad:
                            byte ^= 1
                out[pos] = byte
                pos += 1
            if pos >= L:
                break
            if phrase is not None:
                dist = phrase
            elif oc >= OC_B and dist <= pos:
                jw = self.jw[M["jun"]["map"][out[pos - 1]]]
                w = [jw[out[pos - d]] if d <= pos else 0 for d in cand]
                x = ((r2 >> 48) * sum(w)) >> 16
                for c in range(CAND):
                    if x < w[c]:
                        dist = cand[c]
                        break
                    x -= w[c]
            if dist == INVALID or dist > pos:
                lastd = 0
                continue
            if rp < 0 and phrase is None and dist + 4 <= pos:
                while rins + 4 <= pos:
                    v = int.from_bytes(out[rins:rins + 4], "little")
                    recent[((v * 2654435761) & 0xffffffff) >> (32 - rb)] = rins + 1
                    rins += 1
                sp = pos - dist
                v = int.from_bytes(out[sp:sp + 4], "little")
                q = recent[((v * 2654435761) & 0xffffffff) >> (32 - rb)]
                if q > sp + 1 and int.from_bytes(out[q - 1:q + 3], "little") == v:
                    dist = pos - (q - 1)
            ml = min(ml, L - pos)
            starts.append(pos)
            src = pos - dist
            if dist >= ml:
                out[pos:pos + ml] = out[src:src + ml]
            else:
                for t in range(ml):
                    out[pos + t] = out[src + t]
            pos += ml
            lastd = dist
            if rp == 1:
                rep[0], rep[1] = rep[1], rep[0]
            elif rp == 2:
                rep[0], rep[1], rep[2] = rep[2], rep[0], rep[1]
            elif rp < 0:
                rep = [dist, rep[0], rep[1]]
                nrep = min(nrep + 1, 3)
        if len(self.cache) > 4:
            self.cache.clear()
        self.cache[(j, L)] = bytes(out)
        return self.cache[(j, L)]

    def perm(self, bi):
        # Block bi's byte permutation: each class shuffled, Fisher-Yates
        # from the top, classes in order.
        rng = Rng(wymix(self.k[3] ^ bi, self.k[0] ^ P1))
        p = list(range(256))
        for c in CLASSES:
            v = list(c)
            for i in range(len(c) - 1, 0, -1):
                j = ((rng.next() >> 32) * (i + 1)) >> 32
                v[i], v[j] = v[j], v[i]
            for a, b in zip(c, v):
                p[a] = b
        return bytes(p)

    def docs_range(self, off, n):
        # Blocks of 2^20 bytes, each block 0's documents 0, ..., ndocs - 1
        # end to end (the last one cut at the block's end), through the
        # block's permutation.
        L = self.L
        out = bytearray()
        while n:
            bi, at = divmod(off, BLOCK)
            d, k0 = divmod(at, L)
            lim = min(L, BLOCK - d * L)
            k = min(lim - k0, n)
            src = self.ctx_doc(d, k0 + k) if self.isctx else self.doc(d, lim)
            out += bytes(src[k0:k0 + k]).translate(self.perm(bi))
            off += k
            n -= k
        return bytes(out)

    def dedup_src(self, i):
        # The generic dedup mapping (docs/format.md, "dedup") over 4 KiB
        # blocks, kind blocks of 2^20 bytes (m = 256).
        dq, key = self.dd
        m = BLOCK // 4096

        def U(n):
            return (n // dq) * 65536 + ((n % dq) * 65536 + dq - 1) // dq
        u = U(i)
        if U(i + 1) > u:
            return u
        started = (u + m - 1) // m
        return m * (wymix(key ^ i, (((i + 1) * P0) & M64) ^ P1) % started)

    def range(self, off, n):
        # 4 KiB blocks: the documents (through the dedup mapping when the
        # model has one), or one repeated byte (model.const).
        cbyte, cshare = self.M["const"]
        if not self.dd and not cshare:
            return self.docs_range(off, n)
        out = bytearray()
        while n:
            i, at = divmod(off, 4096)
            k = min(4096 - at, n)
            if wymix(self.k[2] ^ i, self.k[3] ^ P0) & 0xffff < cshare:
                out += bytes([cbyte]) * k
            else:
                out += self.docs_range((self.dedup_src(i) if self.dd else i) * 4096 + at, k)
            off += k
            n -= k
        return bytes(out)


def rec_bytes(ctx, h, entries):
    """One record of model.ctx.contexts: context bytes (oldest first), entropy
    h (1/16 bit), entries [(byte, count), ...] in increasing byte order."""
    out = bytes([len(ctx)]) + bytes(ctx) + bytes([h, len(entries) - 1])
    for b, w in entries:
        out += bytes([b]) + w.to_bytes(2, "little")
    return out


def hand_profile(doc=3000, floor=1000, gap=40, copies=((5, 3), (60, 7), (900, 40), (7, 2500)),
                 dedup=65536, const=None):
    """A small context model made by hand: order 2, records of every size
    (256, 5 and 1 entries), an order-1 context left out ('d', so its bytes
    fall back to order 0), entropies that make the floor switch on and off,
    copies that overlap, that reach before the document's start and that the
    document's end cuts (documents of 3000 bytes, the block's last one cut)."""
    alpha = b"abcd "
    recs = rec_bytes(b"", 128, [(b, 1000 if b in alpha else 1 + b % 3) for b in range(256)])
    o1 = {}
    for i, x in enumerate(b" abc"):  # no record of 'd'
        o1[x] = [(b, 1 + (b * 7 + i * 13) % 40 * 50) for b in sorted(alpha)]
    for x in sorted(o1):
        recs += rec_bytes(bytes([x]), 64, o1[x])
    o2 = {b"a ": [(ord("b"), 3)], b"aa": [(ord("b"), 9), (ord("c"), 1)],
          b"ab": [(ord(" "), 2), (ord("a"), 5), (ord("d"), 65535)], b"b ": [(ord("a"), 1)],
          b"ba": [(ord("a"), 1), (ord("b"), 1), (ord("c"), 30)], b"bb": [(ord("d"), 7)],
          b"c ": [(ord("c"), 4), (ord("d"), 4)], b"cd": [(ord(" "), 3), (ord("a"), 2)]}
    for x in sorted(o2):
        recs += rec_bytes(x, 4 + len(o2[x]), o2[x])
    model = {"doc": doc, "dedup": dedup}
    if const:
        model["const"] = list(const)
    model["ctx"] = {"order": 2, "floor": floor, "gap": gap, "copies": [list(c) for c in copies],
                    "contexts": base64.b64encode(recs).decode()}
    return json.dumps({"format": "libtestdata-profile", "version": 2, "name": "hand",
                       "model": model}, indent=1).encode()


def check(cli):
    import os
    import time
    ok = True
    t0 = time.time()

    def run(*args, **kw):
        return subprocess.run([cli] + [str(a) for a in args], stdout=subprocess.PIPE, check=True,
                              **kw).stdout

    def built(sample, path):
        # A profile the CLI builds from a sample (it picks an LZ or a
        # context model, whichever compares better).
        run("profile", "-", "-o", path, input=sample, stderr=subprocess.DEVNULL)
        return open(path, "rb").read()

    def kind(text):
        return "context" if "ctx" in json.loads(text)["model"] else "LZ"

    with tempfile.TemporaryDirectory() as tmp:
        profiles = {}
        for name in ("html", "source", "database", "jpeg"):
            profiles[name] = run("profile", "--dump", name)
        # An LZ model with the like kind's own dedup mapping and model.const
        # (a built-in one: the builder may pick context models for the
        # generated samples below).
        d = json.loads(profiles["source"])
        d["model"]["dedup"] = 3 * 65536 // 2
        d["model"]["const"] = [0xa5, 30000]
        profiles["source-dedup"] = json.dumps(d).encode()
        # A small sample: documents shorter than the kind's block when the
        # builder keeps the LZ model.
        sample = run("gen", "text", 30000, "--seed", 4)
        profiles["small"] = built(sample, os.path.join(tmp, "small.json"))
        # A sample with zero pages: the builder leaves them out of the parse
        # and the model puts them back (model.const), with and without dedup.
        zs = bytearray(sample[:20000])
        for at in (4096, 12288, 16384):
            zs[at:at + 4096] = bytes(4096)
        profiles["zeros"] = built(bytes(zs), os.path.join(tmp, "zeros.json"))
        d = json.loads(profiles["zeros"])
        if d["model"].get("const", [0, 0])[0] != 0:
            print("zeros: the profile has no model.const of byte 0:", d["model"].get("const"))
            ok = False
        d["model"]["const"] = [0xa5, 30000]
        d["model"]["dedup"] = 3 * 65536 // 2
        profiles["zeros-dedup"] = json.dumps(d).encode()
        # A context model (format 8) built from a text sample: the builder
        # picks one for it; fail if it does not, or this stops covering them.
        sample = run("gen", "text", "300K", "--seed", 3)
        profiles["text300k"] = built(sample, os.path.join(tmp, "text300k.json"))
        if kind(profiles["text300k"]) != "context":
            print("text300k: the builder did not pick a context model (no \"ctx\" in the model)")
            ok = False
        d = json.loads(profiles["text300k"])
        d["model"]["dedup"] = 3 * 65536 // 2
        profiles["text300k-dedup"] = json.dumps(d).encode()
        # Context models made by hand: the floor, copies and alias paths
        # for sure, cut documents; and one with neither floor nor copies,
        # with dedup and const.
        profiles["hand"] = hand_profile()
        profiles["hand-plain"] = hand_profile(doc=70000, floor=0, gap=0, copies=(),
                                              dedup=3 * 65536 // 2, const=(ord("a"), 20000))
        for name, text in profiles.items():
            pf = os.path.join(tmp, name + ".json")
            open(pf, "wb").write(text)
            print("%s: %s model" % (name, kind(text)))
            for seed in (0, M64):
                ref = Like(text, seed)
                for off, n in ((0, 150000), ((1 << 40) + 777, 70000), (3 * BLOCK - 40000, 80000)):
                    mine = ref.range(off, n)
                    theirs = run("gen", "like", n, "--profile", pf, "--seed", seed, "--offset", off)
                    same = mine == theirs
                    ok &= same
                    where = ""
                    if not same:
                        i = next((i for i in range(min(len(mine), len(theirs))) if mine[i] != theirs[i]),
                                 min(len(mine), len(theirs)))
                        where = " (first at byte %d: ref %s, C %s)" % (
                            off + i, mine[i:i + 1].hex() or "end", theirs[i:i + 1].hex() or "end")
                    print("%-14s seed %-20d offset %-14d %7d bytes: %s%s" % (
                        name, seed, off, n, "same" if same else "DIFFERENT", where))
            if ref.isctx:
                print("%-14s paths (seed 2^64-1): %s" % (name, ref.M["paths"]))
            if name == "hand":
                missing = [k for k, v in ref.M["paths"].items() if not v]
                if missing:
                    print("hand: paths never taken:", missing)
                    ok = False
    print("%.1f s" % (time.time() - t0))
    return ok


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(0 if check(sys.argv[2]) else 1)
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    like = Like(open(sys.argv[1], "rb").read(), int(sys.argv[2], 0))
    sys.stdout.buffer.write(like.range(int(sys.argv[3], 0), int(sys.argv[4], 0)))


if __name__ == "__main__":
    main()
