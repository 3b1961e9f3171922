#!/usr/bin/env python3
"""Reference implementation of the `text` kind, written from docs/format.md.

usage: tests/ref/ref_text.py SEED NBLOCKS [FIRST_BLOCK] > out
       tests/ref/ref_text.py --check path/to/testdata
Reads the model from libtestdata/text_model.c and writes NBLOCKS 64 KiB
blocks starting at block FIRST_BLOCK.  --check compares a few ranges with
the C implementation (via the CLI) and exits non-zero on a difference.
Standard library only; slow (about 1 MiB in a few seconds).
"""
import hashlib
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
src = open(os.path.join(ROOT, 'libtestdata', 'text_model.c')).read()
def arr(name):
    m = re.search(r'%s\[\d+\] = \{(.*?)\n\};' % name, src, re.S)
    return [int(x, 0) for x in re.findall(r'-?0x[0-9a-f]+|-?\d+', m.group(1))]
m = re.search(r'td_text_words\[TD_TEXT_VOCAB\]\[16\] = \{(.*?)\n\};', src, re.S)
words = [s.encode() for s in re.findall(r'"(.*?)",', m.group(1))]
L = arr('td_text_len'); succ = arr('td_text_succ'); uni = arr('td_text_unigram')
start = arr('td_text_start'); slen = arr('td_text_sentence_len'); plen = arr('td_text_paragraph_len')
endp = arr('td_text_end_punct')
M = (1 << 64) - 1
P0, P1 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
def mum(a, b):
    t = a * b
    return (t >> 64) ^ (t & M)
def key(seed):
    h = hashlib.blake2b(b"libtestdata/text/1" + seed.to_bytes(8, 'little'), digest_size=32).digest()
    return [int.from_bytes(h[8*i:8*i+8], 'little') for i in range(4)]
def bits(r, i, n): return (r >> i) & ((1 << n) - 1)
def block(k, b):
    B = 65536
    st = [mum(k[0] ^ b, k[1] ^ P1) ^ k[2]]
    def draw():
        st[0] = (st[0] + P0) & M
        return mum(st[0], st[0] ^ P1)
    out = bytearray(); col = 0; done = False
    def put(w, force):
        nonlocal col
        s = bytearray(words[w][:L[w]])
        if force or col + L[w] > 72:
            s[0] = 10; col = L[w] - 1
        else:
            col += L[w]
        out.extend(s)
    while not done:
        r = draw(); nsent = plen[bits(r, 0, 8)]
        j = 0
        while j < nsent and not done:
            r = draw()
            n = slen[bits(r, 0, 10)]; w = start[bits(r, 10, 12)]; endc = endp[bits(r, 22, 8)]
            if len(out) + L[w] + 4 > B:
                done = True; break
            if len(out) == 0:
                out.extend(words[w][1:L[w]]); col = L[w] - 1; fl = 0
            else:
                put(w, j == 0); fl = len(out) - L[w] + 1
            out[fl] &= 0xDF
            for i in range(1, n):
                if (i - 1) % 3 == 0: r = draw()
                h = r >> (21 * ((i - 1) % 3))
                t = succ[16 * w + bits(h, 0, 4)]
                x = uni[bits(h, 4, 16)] if t == 0xFFFF else t
                if len(out) + L[x] + 4 > B:
                    done = True; break
                w = x; put(w, False)
            if out[-1] in b',;:':
                out.pop(); col -= 1
            out.append(endc); col += 1
            j += 1
        if not done:
            out.append(10); col = 0
    out.extend(b'\n' * (B - len(out)))
    return bytes(out)


def check(cli):
    bad = 0
    for seed, first, n in ((0, 0, 3), (3, 1000, 2), (2**64 - 1, 2**24, 2), (1, 2**48 - 1, 1)):
        ref = b"".join(block(key(seed), first + i) for i in range(n))
        size = min(65536 * n, 2**64 - 1 - 65536 * first)  # the stream ends at 2^64 - 1
        ref = ref[:size]
        got = subprocess.run([cli, "gen", "text", str(size), "--seed", str(seed),
                              "--offset", str(65536 * first)], stdout=subprocess.PIPE,
                             check=True).stdout
        ok = got == ref
        bad += not ok
        print("seed %d blocks %d..%d: %s" % (seed, first, first + n - 1,
                                            "match" if ok else "DIFFER"))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2]))
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    seed = int(sys.argv[1], 0)
    nblocks = int(sys.argv[2])
    first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    k = key(seed)
    for i in range(nblocks):
        sys.stdout.buffer.write(block(k, first + i))
