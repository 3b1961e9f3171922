"""Independent reference implementation of the tree format (docs/format.md,
"Trees"): the number of files, their sizes and paths, written from that text
with Python's standard library only (Python floats are IEEE-754 doubles, and
+ - * /, sqrt, floor, frexp and ldexp are correctly rounded, as in C).

    python3 tests/ref/ref_tree.py --files 10 --sizes lognormal:median=4K,sigma=1
    python3 tests/ref/ref_tree.py --check path/to/testdata

--check compares the manifests (path and size of every file) of a set of
trees with `testdata tree list` (CTest ref.tree).
"""
import argparse
import hashlib
import math
import struct
import subprocess
import sys
import tempfile

MASK64 = (1 << 64) - 1
QN = 1 << 16
MAX_FILE = 1 << 36
LN2 = 0.69314718055994530942
SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50,
          "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15}


def parse_size(text):
    i = len(text)
    while i and not text[i - 1].isdigit():
        i -= 1
    unit = text[i:].replace("iB", "")
    return int(text[:i]) * SUFFIX[unit]


def d_log(x):
    m, e = math.frexp(x)
    if m < 0.70710678118654752440:
        m *= 2
        e -= 1
    z = (m - 1) / (m + 1)
    z2, term, s = z * z, z, 0.0
    for j in range(1, 60, 2):
        s = s + term / j
        term = term * z2
    return 2 * s + e * LN2


def d_exp(x):
    if x > 700:
        return math.inf
    if x < -700:
        return 0.0
    kf = math.floor(x / LN2 + 0.5)
    r = x - kf * LN2
    term, s = 1.0, 1.0
    for n in range(1, 30):
        term = term * r / n
        s = s + term
    return math.ldexp(s, int(kf))


A = [-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
     1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00]
B = [-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
     6.680131188771972e+01, -1.328068155288572e+01]
C = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
     -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00]
D = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
     3.754408661907416e+00]


def probit(p):
    def tail(q):
        return ((((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) /
                ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1))
    if p < 0.02425:
        return tail(math.sqrt(-2 * d_log(p)))
    if p > 1 - 0.02425:
        return -tail(math.sqrt(-2 * d_log(1 - p)))
    q = p - 0.5
    r = q * q
    return ((((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q /
            (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1))


def splitmix(z):
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK64
    return z ^ (z >> 31)


def point_u(k):
    if k == 0:
        return 1.0 / 1048576.0
    if k == QN:
        return 1.0 - 1.0 / 1048576.0
    return k / QN


def clamp(u):
    return min(max(u, 1.0 / 1048576.0), 1.0 - 1.0 / 1048576.0)


def to_size(x, mx):
    if not x > 0:
        return 0
    x = x + 0.5
    return mx if x >= mx else int(x)


def table(fn, mx):
    return [to_size(fn(point_u(k)), mx) for k in range(QN + 1)]


def hist_bin(s):
    if s < 256:
        return s
    e = s.bit_length() - 1
    return 256 + (e - 8) * 64 + ((s >> (e - 6)) & 63)


def hist_table(sizes):
    bins = {}
    for s, c in sizes:
        b = bins.setdefault(hist_bin(s), [s, s, 0])
        b[0], b[1], b[2] = min(b[0], s), max(b[1], s), b[2] + c
    order = sorted(bins)
    total = sum(bins[b][2] for b in order)
    q, bi, before = [], 0, 0
    for k in range(QN + 1):
        pos = total * k
        if k == QN:
            bi, before = len(order) - 1, total - bins[order[-1]][2]
        else:
            while (before + bins[order[bi]][2]) * QN <= pos and bi + 1 < len(order):
                before += bins[order[bi]][2]
                bi += 1
        mn, mx, n = bins[order[bi]]
        inside = min(pos - before * QN, n * QN)
        q.append(mn + (mx - mn) * inside // (n * QN))
    return q


def distribution(text):
    """('fixed', S) | ('uniform', A, B) | ('table', Q)."""
    name, _, params = text.partition(":")
    if name == "fixed":
        return ("fixed", parse_size(params))
    if name == "uniform":
        a, b = params.split(",")
        return ("uniform", parse_size(a), parse_size(b))
    if name == "empirical":
        sizes = []
        for line in open(params):
            f = line.split()
            if f and not f[0].startswith("#"):
                sizes.append((parse_size(f[0]), int(f[1]) if len(f) > 1 else 1))
        return ("table", hist_table(sizes))
    kv = dict(p.split("=") for p in params.split(",") if p)
    mx = parse_size(kv.get("max", "1G" if name == "default" else "64G"))
    if name == "lognormal":
        m, s = float(parse_size(kv["median"])), float(kv["sigma"])
        return ("table", table(lambda u: m * d_exp(s * probit(u)), mx))
    if name == "pareto":
        xm, a = float(parse_size(kv["min"])), float(kv["alpha"])
        return ("table", table(lambda u: xm * d_exp(-d_log(1 - u) / a), mx))
    assert name == "default"
    w = 0.99994

    def q(u):
        if u < w:
            return d_exp(9.48 + 2.46 * probit(clamp(u / w)))
        return 536870912.0 * d_exp(-d_log(1 - clamp((u - w) / (1 - w))) / 0.91)
    return ("table", table(q, mx))


class Tree:
    def __init__(self, files=None, total=None, sizes="default", depth=None, fanout=8, seed=0,
                 kind="random"):
        self.dist = distribution(sizes)
        key = hashlib.blake2b(b"libtestdata tree v1" + struct.pack("<Q", seed),
                              digest_size=32).digest()
        self.k0, self.k1, k2, k3 = struct.unpack("<QQQQ", key)
        self.rk = [splitmix((k2 + k * k3) & MASK64) for k in range(4)]
        if files is not None:
            n = files
        elif total is not None:
            m = self.mean()
            n = 0 if total == 0 else max(1, (total + m // 2) // m if m else 1)
        else:
            n = 100
        self.n, self.total = n, total
        self.half_bits = 1
        while self.half_bits < 32 and (1 << (2 * self.half_bits)) < n:
            self.half_bits += 1
        raws = [self.raw(i) for i in range(n)]
        if total is not None:
            self.R = sum(raws)
            if self.R:
                self.E = total - sum(r * total // self.R for r in raws)
        self.F = fanout
        if depth is None:
            depth, dirs, level = 0, 1, 1
            while depth < 16 and dirs * 32 < n:
                level *= fanout
                dirs += level
                depth += 1
        self.D = depth
        self.first = [sum(fanout ** j for j in range(l)) for l in range(depth + 2)]
        self.M = self.first[depth + 1]
        self.ext = ".txt" if kind == "text" else ".bin"

    def mean(self):
        d = self.dist
        if d[0] == "fixed":
            return d[1]
        if d[0] == "uniform":
            return d[1] + (d[2] - d[1]) // 2
        q = d[1]
        return sum(q[k] + q[k + 1] for k in range(QN)) // (2 * QN)

    def permute(self, i):
        h, x = self.half_bits, i
        mask = (1 << h) - 1
        while True:
            l, r = x >> h, x & mask
            for k in range(4):
                l, r = r, l ^ (splitmix(r ^ self.rk[k]) & mask)
            x = (l << h) | r
            if x < self.n:
                return x

    def draw(self, i):
        j = splitmix((self.k0 + (i + 1) * 0x9e3779b97f4a7c15) & MASK64) ^ self.k1
        return ((self.permute(i) << 64) | j) // self.n

    def raw(self, i):
        r, d = self.draw(i), self.dist
        if d[0] == "fixed":
            return d[1]
        if d[0] == "uniform":
            return d[1] + (r * (d[2] - d[1] + 1) >> 64)
        q, t, f = d[1], r >> 48, (r >> 16) & 0xFFFFFFFF
        a, b = q[t], q[t + 1]
        return a + ((b - a) * f >> 32) if b >= a else a - ((a - b) * f >> 32)

    def size(self, i):
        raw = self.raw(i)
        if self.total is None:
            return raw
        if self.R == 0:
            return self.total // self.n + (i < self.total % self.n)
        return raw * self.total // self.R + (i < self.E)

    def path(self, i):
        j = next(j for j in range(self.M) if j * self.n // self.M <= i < (j + 1) * self.n // self.M)
        level = max(l for l in range(self.D + 1) if self.first[l] <= j)
        off, digits = j - self.first[level], []
        for _ in range(level):
            digits.append(off % self.F)
            off //= self.F
        w = len(str(self.F - 1))
        parts = [f"d{x:0{w}d}" for x in reversed(digits)]
        return "/".join(parts + [f"f{i:0{len(str(max(self.n - 1, 0)))}d}{self.ext}"])

    def manifest(self):
        return [(self.path(i), self.size(i)) for i in range(self.n)]


CASES = [
    dict(files=1000, seed=1),
    dict(files=7, total=1000003),
    dict(files=2000, sizes="lognormal:median=16K,sigma=1.5", seed=9),
    dict(files=1500, sizes="pareto:min=1K,alpha=1.2,max=1G", depth=3, fanout=4),
    dict(files=300, sizes="uniform:0,100000", kind="text"),
    dict(total=2 << 30, seed=7),
    dict(files=500, total=10**9, sizes="default:max=64M", seed=2**64 - 1, depth=2, fanout=11),
    dict(files=800, sizes="empirical:{hist}", seed=4),
    dict(files=200, total=12345, sizes="fixed:0"),
]


def cli_args(case, hist):
    out = []
    for k, v in case.items():
        out += [f"--{k}", str(v).replace("{hist}", hist)]
    return out


def check(cli):
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as h:
        h.write("0\n17 3\n4096 40\n4100\n65536 7\n1000000\n123456789 2\n")
        h.flush()
        for case in CASES:
            case = {k: (v.replace("{hist}", h.name) if isinstance(v, str) else v)
                    for k, v in case.items()}
            want = Tree(**case).manifest()
            out = subprocess.run([cli, "tree", "list", *cli_args(case, h.name)],
                                 capture_output=True, check=True).stdout.decode()
            got = [(p, int(s)) for p, s, _, _ in (ln.split("\t") for ln in out.splitlines())]
            if got != want:
                bad = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b) \
                    if len(got) == len(want) else "count"
                print(f"MISMATCH {case}: first at {bad}", file=sys.stderr)
                return 1
            print(f"ok {case}: {len(want)} files, {sum(s for _, s in want)} bytes")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", metavar="TESTDATA")
    ap.add_argument("--files", type=int)
    ap.add_argument("--total", type=parse_size)
    ap.add_argument("--sizes", default="default")
    ap.add_argument("--depth", type=int)
    ap.add_argument("--fanout", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kind", default="random")
    a = ap.parse_args()
    if a.check:
        return check(a.check)
    t = Tree(a.files, a.total, a.sizes, a.depth, a.fanout, a.seed, a.kind)
    for p, s in t.manifest():
        print(f"{p}\t{s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
