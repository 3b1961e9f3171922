#!/usr/bin/python3
"""Independent reference implementation of the `like` kind (docs/format.md,
section "like"), written from the specification: standard library only,
slow, for checking the C library byte for byte.

  ref_like.py PROFILE.json SEED OFFSET LEN > bytes
  ref_like.py --check path/to/testdata     (CTest `ref.like`)

--check takes profiles from the CLI (`testdata profile --dump NAME`, and a
profile it builds from a small sample), generates ranges at the start and
far into the stream with seeds 0 and 2^64-1, and compares with
`testdata gen like`.
"""
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


class Like:
    def __init__(self, profile_json, seed):
        M = read_model(json.loads(profile_json)["model"])
        self.M = M
        digest = hashlib.blake2b(canonical(M).encode(), digest_size=32).digest()
        key = hashlib.blake2b(b"libtestdata/like/1" + (seed & M64).to_bytes(8, "little") + digest,
                              digest_size=32).digest()
        self.k = [int.from_bytes(key[8 * i:8 * i + 8], "little") for i in range(4)]
        self.L = M["doc"]
        self.ndocs = (BLOCK + self.L - 1) // self.L
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
        self.dd = None
        if M["dedup"] > 65536:
            dk = hashlib.blake2b(b"libtestdata/like/dedup/1" + (seed & M64).to_bytes(8, "little"),
                                 digest_size=32).digest()
            self.dd = (M["dedup"], int.from_bytes(dk[:8], "little"))
        self.cache = {}

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
            out += self.doc(d, lim)[k0:k0 + k].translate(self.perm(bi))
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


def check(cli):
    import os
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        profiles = {}
        for name in ("html", "source", "database", "jpeg"):
            profiles[name] = subprocess.run([cli, "profile", "--dump", name], stdout=subprocess.PIPE,
                                            check=True).stdout
        # A small sample: documents shorter than the kind's block.
        sample = subprocess.run([cli, "gen", "text", "30000", "--seed", "4"], stdout=subprocess.PIPE,
                                check=True).stdout
        p = os.path.join(tmp, "small.json")
        subprocess.run([cli, "profile", "-", "-o", p], input=sample, check=True, stderr=subprocess.DEVNULL)
        profiles["small"] = open(p, "rb").read()
        # The same small profile with the dedup of its model set (exercises
        # the like kind's own dedup mapping).
        d = json.loads(profiles["small"])
        d["model"]["dedup"] = 3 * 65536 // 2
        profiles["small-dedup"] = json.dumps(d).encode()
        # A sample with zero pages: the builder leaves them out of the parse
        # and the model puts them back (model.const), with and without dedup.
        zs = bytearray(sample[:20000])
        for at in (4096, 12288, 16384):
            zs[at:at + 4096] = bytes(4096)
        p = os.path.join(tmp, "zeros.json")
        subprocess.run([cli, "profile", "-", "-o", p], input=bytes(zs), check=True,
                       stderr=subprocess.DEVNULL)
        profiles["zeros"] = open(p, "rb").read()
        d = json.loads(profiles["zeros"])
        if d["model"].get("const", [0, 0])[0] != 0:
            print("zeros: the profile has no model.const of byte 0:", d["model"].get("const"))
            ok = False
        d["model"]["const"] = [0xa5, 30000]
        d["model"]["dedup"] = 3 * 65536 // 2
        profiles["zeros-dedup"] = json.dumps(d).encode()
        for name, text in profiles.items():
            pf = os.path.join(tmp, name + ".json")
            open(pf, "wb").write(text)
            for seed in (0, M64):
                ref = Like(text, seed)
                for off, n in ((0, 150000), ((1 << 40) + 777, 70000), (3 * BLOCK - 40000, 80000)):
                    mine = ref.range(off, n)
                    theirs = subprocess.run([cli, "gen", "like", str(n), "--profile", pf, "--seed",
                                             str(seed), "--offset", str(off)], stdout=subprocess.PIPE,
                                            check=True).stdout
                    same = mine == theirs
                    ok &= same
                    print("%-12s seed %-20d offset %-14d %7d bytes: %s" % (name, seed, off, n,
                                                                          "same" if same else "DIFFERENT"))
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
