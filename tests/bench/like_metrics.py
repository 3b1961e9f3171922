"""Fidelity measures of data against a sample, for bench_like.py.

Every function takes bytes and returns plain numbers, so the same code
measures a sample, data generated from its profile, and the peers.
Compressors run in process (the Python bindings of the Debian libraries),
so their CPU time is time.process_time() around the call.
"""
import bz2
import hashlib
import lzma
import time
import zlib

import brotli
import lz4.block
import lz4.frame
import numpy as np
import snappy
import zstandard

# name -> compress(bytes) -> bytes.  As the command-line tools write them
# (gzip/zstd/lz4/xz/bzip2/brotli frames; snappy's raw block format, as
# python3-snappy's compress()).
def _gzip(level):
    def f(b):
        c = zlib.compressobj(level, zlib.DEFLATED, 31)
        return c.compress(b) + c.flush()
    return f


def _zstd(level):
    def f(b):
        return zstandard.ZstdCompressor(level=level).compress(b)
    return f


def _lz4(level):
    def f(b):
        return lz4.frame.compress(b, compression_level=level, block_size=lz4.frame.BLOCKSIZE_MAX4MB,
                                  content_checksum=True)
    return f


CODECS = {
    "gzip-1": _gzip(1),
    "gzip-6": _gzip(6),
    "zstd-3": _zstd(3),
    "zstd-19": _zstd(19),
    "lz4-1": _lz4(0),
    "lz4-9": _lz4(9),
    "xz-6": lambda b: lzma.compress(b, preset=6),
    "bzip2-9": lambda b: bz2.compress(b, 9),
    "brotli-5": lambda b: brotli.compress(b, quality=5),
    "snappy": lambda b: snappy.compress(b),
}
RATIO_CODECS = list(CODECS)
COST_CODECS = ["gzip-6", "zstd-3", "lz4-1", "xz-6", "brotli-5"]
FAST_CODECS = ["gzip-6", "zstd-3", "lz4-1", "snappy"]


def ratio(codec, data):
    if not data:
        return 1.0
    return len(data) / len(CODECS[codec](data))


def ratios(data, codecs=RATIO_CODECS):
    return {c: ratio(c, data) for c in codecs}


def cost_ns(codec, data, piece=None, min_total=1 << 20, reps=3):
    """CPU ns per input byte of compressing data in pieces of `piece` bytes
    (default: all of it at once), at least min_total bytes (pieces repeat
    from the start if needed), best of reps, less the cost of compressing
    an empty input (the codec's fixed start-up, which dominates tiny
    samples)."""
    return cost_ns_many(codec, [data], piece, min_total, reps)[0]


def _work(data, piece, min_total, runs=1):
    """The pieces compressed for one data set: pieces of `piece` bytes, at
    least min_total bytes in all (cycling from the start when the data is
    short), each distinct piece `runs` times in a row."""
    piece = piece or len(data)
    pieces = [data[i:i + piece] for i in range(0, len(data), piece)]
    pieces = [p for p in pieces if len(p) == piece] or pieces[:1]
    work = []
    total = 0
    i = 0
    while total < min_total or not work:
        p = pieces[i % len(pieces)]
        for _ in range(runs):
            work.append(p)
            total += len(p)
        i += 1
        if i >= 4096:
            break
    return work, total


def cost_ns_many(codec, datas, piece=None, min_total=1 << 20, reps=3, f=None, same_regime=False):
    """cost_ns of each of datas (a sample and what is compared with it),
    measured in turns, best of reps each: a load spike then slows one round
    of all of them rather than one data set's every run, so the ratios of
    the results are steadier than separate measurements' (a ratio, not the
    absolute figure, is what the targets are about).  f: a compress
    function instead of CODECS[codec].

    same_regime: a sample shorter than min_total is compressed R times in
    a row, and a compressor gets faster on an input it has just seen (the
    branch predictors and caches learn it: gzip -6 costs 2.7 times less per
    byte on one 4 KB man page repeated than on 250 distinct ones, docs/
    benchmarks.md, "Cost of a repeated sample").  With same_regime the
    other data sets are measured alike: pieces of theirs, each compressed
    runs = R // k times in a row, k = min(8, max(1, R // 8)) distinct
    pieces, so that each piece is seen at least 8 times (or as often as
    the sample) and the totals match."""
    f = f or CODECS[codec]
    works = [_work(datas[0], piece, min_total)]
    runs = 1
    if same_regime:
        plen = len(works[0][0][0])
        r = len(works[0][0]) if plen == len(datas[0]) else 1  # one piece, repeated
        k = min(8, max(1, r // 8))
        runs = max(1, r // k)
    works += [_work(d, piece, min_total, runs) for d in datas[1:]]
    best = [[float("inf"), float("inf")] for _ in datas]
    for _ in range(reps):
        for k, (work, total) in enumerate(works):
            t = time_pieces(f, work)
            best[k] = [min(best[k][0], t[0]), min(best[k][1], t[1])]
    return [ns_per_byte(b, w[1]) for b, w in zip(best, works)]


def time_pieces(f, work):
    """CPU seconds of f over the pieces of work, and of f over as many
    one-byte inputs (the codec's fixed start-up)."""
    t0 = time.process_time()
    for p in work:
        f(p)
    t1 = time.process_time()
    for p in work:
        f(b"x")
    return t1 - t0, time.process_time() - t1


def ns_per_byte(best, total):
    """ns per byte from the least time of the pieces and, apart, of the
    one-byte inputs over several rounds: the least of each difference would
    take a round whose one-byte inputs were slowed by a load spike (down to
    no cost at all)."""
    return max(best[0] - best[1], 1e-9) / total * 1e9


def block_ratio(codec, data, bs):
    """Independent blocks of bs bytes (the last may be short), as a file
    system or array compresses them: raw lz4 blocks, zstd frames."""
    if codec == "lz4":
        f = lambda b: lz4.block.compress(b, mode="default", store_size=False)
    elif codec == "zstd-3":
        cctx = zstandard.ZstdCompressor(level=3, write_content_size=False, write_checksum=False)
        f = cctx.compress
    else:
        raise ValueError(codec)
    tot = 0
    comp = 0
    for i in range(0, len(data), bs):
        b = data[i:i + bs]
        tot += len(b)
        comp += min(len(f(b)), len(b))  # a file system stores a block raw when it does not shrink
    return tot / comp


def chunk_quantiles(data, chunk=65536, qs=(10, 50, 90)):
    """p10/p50/p90 of per-chunk zstd -3 ratios.  A short last chunk counts
    only when it is the only one or at least a quarter of a chunk."""
    cctx = zstandard.ZstdCompressor(level=3)
    rs = []
    for i in range(0, len(data), chunk):
        b = data[i:i + chunk]
        if len(b) < chunk // 4 and rs:
            continue
        rs.append(len(b) / len(cctx.compress(b)))
    a = np.array(rs)
    return [float(np.percentile(a, q)) for q in qs]


def dedup_ratio(data, bs=4096):
    n = len(data) // bs
    if n == 0:
        return 1.0
    s = {hashlib.blake2b(data[i * bs:(i + 1) * bs], digest_size=16).digest() for i in range(n)}
    return n / len(s)


def _window_hashes(a, w):
    """64-bit polynomial hashes of every w-byte window of uint8 array a."""
    n = len(a) - w + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    h = np.zeros(n, dtype=np.uint64)
    P = np.uint64(0x100000001b3)
    with np.errstate(over="ignore"):
        for j in range(w):
            h = h * P + a[j:j + n].astype(np.uint64)
    return h


# A shared window is "runs" when at most LOOSE_MAX of its bytes lie outside
# runs of RUN_MIN or more equal bytes (in the samples, the edges of runs of
# zeros, spaces or fill bytes: "\r\n" and 30 spaces; 31 zeros and 0x1d; 23
# bytes 0x03 and 9 bytes 0x15), or when it repeats with a period of at most
# PERIOD_MAX bytes (a table: 00 00 00 01 00 00 00 01 ...).  Either says
# little about the sample; the rest is "content".
RUN_MIN = 4
LOOSE_MAX = 8
PERIOD_MAX = 4


def periodic(win):
    """Whether win repeats with a period of 2 to PERIOD_MAX bytes."""
    return any(win[p:] == win[:-p] for p in range(2, PERIOD_MAX + 1))


def loose_bytes(win):
    """Bytes of win outside its maximal runs of RUN_MIN or more equal bytes."""
    loose, i, n = 0, 0, len(win)
    while i < n:
        j = i
        while j < n and win[j] == win[i]:
            j += 1
        if j - i < RUN_MIN:
            loose += j - i
        i = j
    return loose


def shared_windows(sample, data, w=32):
    """The w-byte windows of data that also occur in sample, by kind: a dict
    with the counts "all", "const" (one repeated byte), "runs" (else at most
    LOOSE_MAX bytes outside runs of RUN_MIN, or periodic()) and "content"
    (the rest); "loose_max", the most such bytes in a "runs" window;
    "content_examples", up to 8 distinct "content" windows; "example", the
    offset in data of the first window not one repeated byte, or -1.  Every
    one-byte window is counted, and the first 200,000 of the others."""
    sa = np.frombuffer(sample, dtype=np.uint8)
    da = np.frombuffer(data, dtype=np.uint8)
    out = {"all": 0, "const": 0, "runs": 0, "content": 0, "loose_max": 0, "content_examples": [],
           "example": -1}
    hs = np.unique(_window_hashes(sa, w))
    hd = _window_hashes(da, w)
    if len(hs) == 0 or len(hd) == 0:
        return out
    hit = np.nonzero(np.isin(hd, hs))[0]
    # one repeated byte (allowed, not verified further), counted at once: a
    # window is constant when its w - 1 neighbouring pairs are all equal
    eq = np.concatenate(([0], np.cumsum(da[1:] == da[:-1], dtype=np.int64)))
    const = eq[hit + w - 1] - eq[hit] == w - 1
    out["const"] = int(np.count_nonzero(const))
    out["all"] = out["const"]
    found = {}  # window -> whether the sample has it: the same windows recur
    for off in hit[~const][:200000]:
        win = data[off:off + w]
        if win not in found:
            found[win] = sample.find(win) >= 0
        if not found[win]:
            continue  # a hash collision
        out["all"] += 1
        if out["example"] < 0:
            out["example"] = int(off)
        loose = loose_bytes(win)
        if loose <= LOOSE_MAX or periodic(win):
            out["runs"] += 1
            if loose <= LOOSE_MAX:
                out["loose_max"] = max(out["loose_max"], loose)
        else:
            out["content"] += 1
            if len(out["content_examples"]) < 8 and win not in out["content_examples"]:
                out["content_examples"].append(win)
    return out


def shared_runs(sample, data, w=32):
    """Number of w-byte windows of data that also occur in sample, and how
    many of them are not one repeated byte.  Returns (all, non_constant,
    example_offset or -1)."""
    s = shared_windows(sample, data, w)
    return s["all"], s["all"] - s["const"], s["example"]


def speed_mbs(codec, data, reps=3):
    """Compression speed, MB (10^6 B) per CPU second, best of reps."""
    f = CODECS[codec]
    best = None
    for _ in range(reps):
        t0 = time.process_time()
        f(data)
        t = time.process_time() - t0
        best = t if best is None else min(best, t)
    return len(data) / max(best, 1e-9) / 1e6
