#!/usr/bin/env python3
"""tests/golden/rng_ref.py: golden values for tests/unit/core/test_rng.c, from the published algorithms.

Independent of lib/core/rng.c: plain Python integers, written from
  - xoshiro256** 1.0, David Blackman and Sebastiano Vigna, "Scrambled linear
    pseudorandom number generators" (ACM TOMS, 2021) and their reference
    code xoshiro256starstar.c: result = rotl(s1 * 5, 7) * 9, then the linear
    engine with shifts 17 and rotation 45;
  - splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
    generators", OOPSLA 2014; Vigna's splitmix64.c), the seeding the authors
    recommend;
  - what seed_rng(3) and <seed/rng.h> document on top of them: the seeding of
    a (seed, stream) pair, 53 and 24 random bits for doubles and floats,
    Lemire's multiply-shift with rejection for below(), Box-Muller normals.

Before printing anything the script checks itself against the published
first outputs of both generators (below); it refuses to print golden values
from a reference that does not reproduce them.

Usage: python3 tests/golden/rng_ref.py > tests/golden/rng_golden.h
"""
import math

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


class SplitMix64:
    GAMMA = 0x9E3779B97F4A7C15

    def __init__(self, x):
        self.x = x & M64

    def next(self):
        self.x = (self.x + self.GAMMA) & M64
        z = self.x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)


class Xoshiro256ss:
    def __init__(self, s):
        assert len(s) == 4 and any(s)
        self.s = [w & M64 for w in s]

    def next(self):
        s = self.s
        result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result


# Published known answers.  splitmix64 seeded with 1234567 (Rosetta Code,
# "Pseudo-random numbers/Splitmix64", from Vigna's splitmix64.c);
# xoshiro256** from the state {1, 2, 3, 4} (the reference C code's output,
# as quoted by many ports), and from {0, 0, 0, 1}.
SPLITMIX_1234567 = [6457827717110365317, 3203168211198807973, 9817491932198370423,
                    4593380528125082431, 16408922859458223821]
XOSHIRO_1234 = [11520, 0, 1509978240, 1215971899390074240, 1216172134540287360,
                607988272756665600, 16172922978634559625, 8476171486693032832,
                10595114339597558777, 2904607092377533576]
XOSHIRO_0001 = [0x0, 0x0, 0x1680, 0x02D0000000001680, 0x02D0005A2D001680,
                0x0000005A2D0B4120, 0x68B45A5A2D0B57A0, 0x68B48716AD000120,
                0x1CB48716B2A00288, 0x11B10070BDEB59BC]


def self_check():
    sm = SplitMix64(1234567)
    assert [sm.next() for _ in SPLITMIX_1234567] == SPLITMIX_1234567, "splitmix64"
    x = Xoshiro256ss([1, 2, 3, 4])
    assert [x.next() for _ in XOSHIRO_1234] == XOSHIRO_1234, "xoshiro256** {1,2,3,4}"
    x = Xoshiro256ss([0, 0, 0, 1])
    assert [x.next() for _ in XOSHIRO_0001] == XOSHIRO_0001, "xoshiro256** {0,0,0,1}"


# seed_rng's documented layer on top of the two generators.

STREAM_MUL = 0xD1342543DE82EF95
STREAM_ADD = 0x2545F4914F6CDD1D


def init(seed, stream):
    """seed_rng_init: y = splitmix64(seed) ^ (stream * MUL + ADD); the four
    state words are the next four splitmix64 outputs from y."""
    y = SplitMix64(seed).next() ^ ((stream * STREAM_MUL + STREAM_ADD) & M64)
    sm = SplitMix64(y)
    return Xoshiro256ss([sm.next() for _ in range(4)])


def to_double(u):
    return float(u >> 11) * 2.0 ** -53  # exact: 53 bits times a power of two


def to_float(u):
    return float(u >> 40) * 2.0 ** -24  # exact in binary32 as well


def uniform(g, lo, hi):
    """lo + (hi - lo) * double, in [lo, hi): a sum that rounds up to hi
    becomes the largest double below hi (seed_rng(3))."""
    x = lo + (hi - lo) * to_double(g.next())
    return x if x < hi else math.nextafter(hi, lo)


def below(g, n):
    """Lemire, "Fast random integer generation in an interval" (ACM TOMACS
    2019), on the high 32 bits of each 64-bit output.  Returns the value and
    the number of 64-bit outputs it used."""
    used = 1
    m = (g.next() >> 32) * n
    lo = m & M32
    if lo < n:
        threshold = ((1 << 32) - n) % n
        while lo < threshold:
            used += 1
            m = (g.next() >> 32) * n
            lo = m & M32
    return m >> 32, used


def normal(g):
    u1 = 1.0 - to_double(g.next())
    u2 = to_double(g.next())
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2)


def u64(x):
    return "0x%016xULL" % x


def wrap(items, indent="\t"):
    """Items joined by commas, a few to a line, so the header stays readable."""
    lines, line = [], ""
    for it in items:
        piece = it + ","
        if line and len(line) + 1 + len(piece) > 96:
            lines.append(indent + line)
            line = piece
        else:
            line = line + " " + piece if line else piece
    if line:
        lines.append(indent + line)
    return "\n".join(lines)


def main():
    self_check()
    out = []
    w = out.append
    w("/* tests/golden/rng_golden.h: generated by tests/golden/rng_ref.py; do not edit. */")
    w("#ifndef SEED_TESTS_RNG_GOLDEN_H")
    w("#define SEED_TESTS_RNG_GOLDEN_H")
    w("#include <stdint.h>")
    w("")
    w("/* Published first outputs (checked by the script against its own reference). */")
    w("static const uint64_t golden_xoshiro_1234[%d] = {\n%s\n};" % (len(XOSHIRO_1234), wrap(u64(v) for v in XOSHIRO_1234)))
    w("static const uint64_t golden_xoshiro_0001[%d] = {\n%s\n};" % (len(XOSHIRO_0001), wrap(u64(v) for v in XOSHIRO_0001)))
    # A state whose first output is all ones (2^64 - 1): s[1] solved from
    # rotl(s1 * 5, 7) * 9 = 2^64 - 1 with the inverses of 9 and 5 mod 2^64.
    t = (M64 * pow(9, -1, 1 << 64)) & M64
    s1 = (rotl(t, 57) * pow(5, -1, 1 << 64)) & M64
    assert Xoshiro256ss([0, s1, 0, 0]).next() == M64
    # From it, uniform(2, 3) is where the rounding of the sum reaches hi.
    assert 2.0 + 1.0 * to_double(M64) == 3.0
    assert uniform(Xoshiro256ss([0, s1, 0, 0]), 2.0, 3.0) == math.nextafter(3.0, 2.0)
    w("/* The state {0, s1, 0, 0} with this s1 first outputs 2^64 - 1. */")
    w("static const uint64_t golden_all_ones_s1 = %s;" % u64(s1))
    w("")

    # State after seeding, and the first outputs, for (seed, stream) pairs.
    pairs = [(0, 0), (1, 0), (0, 1), (42, 0), (42, 1), (42, 2), (1234567, 7),
             (M64, M64), (0x0123456789ABCDEF, 1 << 63)]
    NOUT = 8
    w("#define GOLDEN_NOUT %d" % NOUT)
    w("static const struct golden_seeding {")
    w("\tuint64_t seed, stream;")
    w("\tuint64_t state[4];        /* s[0..3] after seed_rng_init */")
    w("\tuint64_t out[GOLDEN_NOUT]; /* the first seed_rng_u64 outputs */")
    w("} golden_seedings[] = {")
    for seed, stream in pairs:
        g = init(seed, stream)
        st = list(g.s)
        outs = [g.next() for _ in range(NOUT)]
        w("\t{%s, %s,\n\t {%s},\n\t {\n%s\n\t }}," % (u64(seed), u64(stream), ", ".join(u64(v) for v in st),
                                                   wrap((u64(v) for v in outs), "\t  ")))
    w("};")
    w("")

    # Doubles, floats and uniforms: exact, printed as hexadecimal floats.
    g = init(7, 3)
    w("/* seed 7, stream 3: seed_rng_double, then seed_rng_float, then")
    w(" * seed_rng_uniform(-2.5, 4) draws, each from the next output. */")
    w("#define GOLDEN_NDRAW 16")
    w("static const double golden_double[GOLDEN_NDRAW] = {\n%s\n};" % wrap(to_double(g.next()).hex() for _ in range(16)))
    w("static const float golden_float[GOLDEN_NDRAW] = {\n%s\n};" % wrap(to_float(g.next()).hex() + "f" for _ in range(16)))
    w("static const double golden_uniform[GOLDEN_NDRAW] = {\n%s\n};" % wrap(
        uniform(g, -2.5, 4.0).hex() for _ in range(16)))
    w("static const uint64_t golden_after_draws = %s; /* the next seed_rng_u64 */" % u64(g.next()))
    w("")

    # below(n): values and how many outputs each draw consumed.  n = 2^31+1
    # rejects about half the draws, so the rejection path is walked.
    w("/* seed 11, stream 5: 24 seed_rng_below(n) draws per n, in order of n,")
    w(" * then the next seed_rng_u64 (so the draws used the right number of")
    w(" * outputs, rejections included). */")
    ns = [1, 2, 3, 6, 7, 10, 1000, 1 << 31, (1 << 31) + 1, 3000000000, M32]
    g = init(11, 5)
    w("#define GOLDEN_NBELOW 24")
    w("static const struct golden_below {")
    w("\tuint32_t n;")
    w("\tuint32_t value[GOLDEN_NBELOW];")
    w("\tint used; /* 64-bit outputs used, rejections included */")
    w("} golden_below[] = {")
    for n in ns:
        vals, used = [], 0
        for _ in range(24):
            v, u = below(g, n)
            assert 0 <= v < n
            vals.append(v)
            used += u
        w("\t{%du,\n\t {\n%s\n\t },\n\t %d}," % (n, wrap(("%du" % v for v in vals), "\t  "), used))
    w("};")
    w("static const uint64_t golden_after_below = %s;" % u64(g.next()))
    w("")

    # Normals: libm's log and cos, so compared with a tolerance.
    g = init(5, 9)
    w("/* seed 5, stream 9: seed_rng_normal draws (Box-Muller, two outputs each);")
    w(" * computed with Python's math.log and math.cos, so compare to ~1e-12. */")
    w("#define GOLDEN_NNORMAL 12")
    w("static const double golden_normal[GOLDEN_NNORMAL] = {\n%s\n};" % wrap(repr(normal(g)) for _ in range(12)))
    w("static const uint64_t golden_after_normal = %s;" % u64(g.next()))
    w("")
    w("#endif")
    print("\n".join(out))


if __name__ == "__main__":
    main()
