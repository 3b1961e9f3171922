#!/usr/bin/env python3
"""Derive the statistical model of the `text` kind from an English corpus.

usage: tools/gen_text_model.py CORPUS_DIR [-o libtestdata/text_model.c]

Reads CORPUS_DIR/*.txt (sorted by name) and writes a C file of constant
tables (see docs/format.md, section "text").  Only word statistics are kept
(vocabulary, frequencies, successor lists, punctuation rates, sentence and
paragraph length distributions); no running text of the corpus is copied.
The script uses the standard library only and is deterministic: the same
corpus and parameters always give the same file.
"""
import argparse
import collections
import glob
import os
import re
import sys

# ---- parameters (changing any changes the bytes: bump TD_FORMAT_VERSION) ----
UNI_BITS = 16       # unigram table: 2^16 slots
START_BITS = 12     # sentence-start table: 2^12 slots
SUCC = 16           # successor slots per word (power of two)
SLEN_BITS = 10      # sentence-length table
PLEN_BITS = 8       # paragraph-length table
MAX_LETTERS = 14    # longest token kept (entry = space + token <= 15 bytes)
MAX_SENT = 60       # longest sentence (words) kept in the length table
MAX_PARA = 30       # longest paragraph (sentences) kept
LAMBDA_MAX = 0.8    # cap of the successor-list weight (limits regurgitation)
LAMBDA_T = 0.7     # Witten-Bell weight: n / (n + LAMBDA_T * distinct)

NEXT_UNIGRAM = 0xFFFF  # successor slot meaning "draw from the unigram table"

TOKEN_RE = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*|[.!?]+|[,;:]")
PARA_RE = re.compile(r"\n[ \t]*\n")


def quantize(counts, total_slots):
    """Largest-remainder apportionment of total_slots over (key, count) items.

    items: list of (key, count), already in a deterministic order.  Returns a
    list of (key, slots) with slots > 0, in the same order."""
    total = sum(c for _, c in counts)
    base = []
    rems = []
    for i, (k, c) in enumerate(counts):
        q, r = divmod(c * total_slots, total)
        base.append(q)
        rems.append((-r, i))
    left = total_slots - sum(base)
    rems.sort()
    for _, i in rems[:left]:
        base[i] += 1
    return [(k, s) for (k, _), s in zip(counts, base) if s > 0]


def expand(slots):
    out = []
    for k, s in slots:
        out.extend([k] * s)
    return out


def parse(corpus_dir):
    files = sorted(glob.glob(os.path.join(corpus_dir, "*.txt")))
    if not files:
        sys.exit("no *.txt in %s" % corpus_dir)
    paragraphs = []  # list of list of sentences; sentence = (words, puncts_after, end)
    for f in files:
        with open(f, "rb") as fh:
            text = fh.read().decode("latin-1").replace("\r", "")
        for para in PARA_RE.split(text):
            sents = []
            words, after = [], []
            for tok in TOKEN_RE.findall(para):
                c = tok[0]
                if c.isalpha():
                    words.append(tok)
                    after.append(None)
                elif c in ",;:":
                    if words and after[-1] is None:
                        after[-1] = c
                else:
                    if words:
                        sents.append((words, after, c))
                    words, after = [], []
            if words:
                sents.append((words, after, None))  # unterminated tail
            if sents:
                paragraphs.append(sents)
    return files, paragraphs


def main():
    global SUCC, UNI_BITS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus_dir")
    ap.add_argument("-o", "--output", default="libtestdata/text_model.c")
    ap.add_argument("--lambda-max", type=float, default=LAMBDA_MAX)
    ap.add_argument("--lambda-t", type=float, default=LAMBDA_T)
    ap.add_argument("--succ", type=int, default=SUCC)
    ap.add_argument("--uni-bits", type=int, default=UNI_BITS)
    args = ap.parse_args()
    SUCC, UNI_BITS = args.succ, args.uni_bits

    files, paragraphs = parse(args.corpus_dir)

    # Case forms: a word is stored capitalised when, away from the start of a
    # sentence, it is written capitalised more often than in lower case.
    freq = collections.Counter()
    lower_n = collections.Counter()
    title_n = collections.Counter()
    for sents in paragraphs:
        for words, _, _ in sents:
            for i, w in enumerate(words):
                k = w.lower()
                freq[k] += 1
                if i == 0 or (len(w) > 1 and w.isupper()):
                    continue
                if w[0].isupper():
                    title_n[k] += 1
                else:
                    lower_n[k] += 1

    def form(k):
        return k.capitalize() if title_n[k] > lower_n[k] else k

    # Tokens: a lower-case word plus the punctuation mark that follows it
    # inside its sentence ("said" and "said," are two tokens).  The last word
    # of a sentence is taken without its mark (the end mark follows).
    def tokens(words, after):
        ks = [w.lower() for w in words]
        return [k + (after[i] if after[i] and i + 1 < len(ks) else "")
                for i, k in enumerate(ks)]

    tfreq = collections.Counter()
    for sents in paragraphs:
        for words, after, _ in sents:
            tfreq.update(tokens(words, after))

    def letters(t):
        return t.rstrip(",;:")

    cands = [(t, c) for t, c in tfreq.items() if len(t) <= MAX_LETTERS]
    cands.sort(key=lambda kc: (-kc[1], kc[0]))
    uni = quantize(cands, 1 << UNI_BITS)
    vocab = [k for k, _ in uni]
    vid = {k: i for i, k in enumerate(vocab)}
    V = len(vocab)
    assert V < 65535

    # Transitions between consecutive tokens of a sentence.
    succ = collections.defaultdict(collections.Counter)
    starts = collections.Counter()
    ends = collections.Counter()
    slen = collections.Counter()
    plen = collections.Counter()
    for sents in paragraphs:
        nterm = 0
        for words, after, end in sents:
            ts = tokens(words, after)
            if ts[0] in vid:
                starts[ts[0]] += 1
            for i in range(len(ts) - 1):
                if ts[i] in vid and ts[i + 1] in vid:
                    succ[ts[i]][ts[i + 1]] += 1
            if end is not None:
                nterm += 1
                ends[end] += 1
                if len(ts) <= MAX_SENT:
                    slen[len(ts)] += 1
        if 0 < nterm <= MAX_PARA:
            plen[nterm] += 1

    def ordered(counter, key=None):
        items = list(counter.items())
        items.sort(key=lambda kc: (-kc[1], key(kc[0]) if key else kc[0]))
        return items

    start_tab = expand(quantize([(vid[k], c) for k, c in ordered(starts)], 1 << START_BITS))
    uni_tab = expand([(vid[k], s) for k, s in uni])
    slen_tab = expand(quantize(sorted(slen.items()), 1 << SLEN_BITS))
    plen_tab = expand(quantize(sorted(plen.items()), 1 << PLEN_BITS))
    end_tab = expand(quantize(ordered(ends), 256))

    # Successor slots: round(SUCC * lambda) slots share out the observed
    # successors by count, the rest hold NEXT_UNIGRAM (draw from the unigram
    # table instead).  lambda = min(LAMBDA_MAX, n / (n + LAMBDA_T * distinct)).
    succ_tab = []
    for k in vocab:
        sc = succ.get(k)
        tab = []
        if sc:
            tot = sum(sc.values())
            wb = min(args.lambda_max, tot / (tot + args.lambda_t * len(sc)))
            nb = int(wb * SUCC + 0.5)
            if nb:
                tab = expand(quantize([(vid[s], c) for s, c in
                                       ordered(sc, key=lambda s: vid[s])], nb))
        tab += [NEXT_UNIGRAM] * (SUCC - len(tab))
        succ_tab.extend(tab)

    # ---- write C ----
    out = []
    w = out.append
    w("/* Generated by tools/gen_text_model.py from %s; do not edit. */"
      % ", ".join(os.path.basename(f) for f in files))
    w("/* The model of the `text` kind, specified in docs/format.md. */")
    w('#include "text_model.h"')
    w("")

    def arr(ctype, name, vals, per=16, fmt="%d"):
        w("const %s %s[%d] = {" % (ctype, name, len(vals)))
        for i in range(0, len(vals), per):
            w("    " + ", ".join(fmt % v for v in vals[i:i + per]) + ",")
        w("};")
        w("")

    w("/* Word i: ' ' + word, padded with spaces to 16 bytes. */")
    w("const char td_text_words[TD_TEXT_VOCAB][16] = {")
    for k in vocab:
        s = " " + form(letters(k)) + k[len(letters(k)):]
        w('    "%s",' % (s + " " * (15 - len(s))))
    w("};")
    w("")
    w("/* Length of word i, with its leading space. */")
    arr("uint8_t", "td_text_len", [len(k) + 1 for k in vocab], 32)
    arr("uint16_t", "td_text_succ", succ_tab)
    arr("uint16_t", "td_text_unigram", uni_tab)
    arr("uint16_t", "td_text_start", start_tab)
    arr("uint8_t", "td_text_sentence_len", slen_tab, 32)
    arr("uint8_t", "td_text_paragraph_len", plen_tab, 32)
    arr("char", "td_text_end_punct", [ord(c) for c in end_tab], 32)

    hdr = """/* Generated by tools/gen_text_model.py; do not edit. */
#ifndef TD_TEXT_MODEL_H
#define TD_TEXT_MODEL_H

#include <stdint.h>

#define TD_TEXT_VOCAB %d
#define TD_TEXT_SUCC %d
#define TD_TEXT_SUCC_BITS %d
#define TD_TEXT_UNI_BITS %d
#define TD_TEXT_START_BITS %d
#define TD_TEXT_SLEN_BITS %d
#define TD_TEXT_PLEN_BITS %d
#define TD_TEXT_MAX_SENT %d
#define TD_TEXT_NEXT_UNIGRAM 0xFFFFu

extern const char td_text_words[TD_TEXT_VOCAB][16];
extern const uint8_t td_text_len[TD_TEXT_VOCAB];
extern const uint16_t td_text_succ[TD_TEXT_VOCAB * TD_TEXT_SUCC];
extern const uint16_t td_text_unigram[1u << TD_TEXT_UNI_BITS];
extern const uint16_t td_text_start[1u << TD_TEXT_START_BITS];
extern const uint8_t td_text_sentence_len[1u << TD_TEXT_SLEN_BITS];
extern const uint8_t td_text_paragraph_len[1u << TD_TEXT_PLEN_BITS];
extern const char td_text_end_punct[256];

#endif
""" % (V, SUCC, SUCC.bit_length() - 1, UNI_BITS, START_BITS, SLEN_BITS, PLEN_BITS, MAX_SENT)
    base = os.path.splitext(args.output)[0]
    with open(args.output, "w") as fh:
        fh.write("\n".join(out))
    with open(base + ".h", "w") as fh:
        fh.write(hdr)
    print("vocab %d, unigram %d, start %d, sentences %d, paragraphs %d" %
          (V, len(uni_tab), len(start_tab), sum(slen.values()), sum(plen.values())),
          file=sys.stderr)


if __name__ == "__main__":
    main()
