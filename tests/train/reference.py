"""An independent reference of `fmtcheck train` in numpy + ml_dtypes.

It shares no code with the C++ emulator: casts are ml_dtypes' and numpy's
(gfloat's for the IEEE P3109 members), the tensor-core GEMM under the
`exact` model is an exact integer sum of products rounded once (Python integers and fractions), float32 FMA is a
round-to-odd double sum rounded to float32, and exp/log are computed to 60
digits with `decimal` and rounded once. The model, the order of every
float32 operation and the recipes follow the definitions in
lib/include/fmtcheck/train/*.hpp and docs/training.md.
"""
import collections
import decimal
import fractions
import gzip
import math

import ml_dtypes
import numpy as np
from gfloat import Domain, RoundMode, Signedness, round_ndarray
from gfloat.formats import format_info_p3109

F32 = np.float32
F64 = np.float64
np.seterr(all="ignore")  # overflow to inf and NaN are outcomes the tests compare, not errors

# --- exact rounding -------------------------------------------------------


def round_rational_f32(num, den):
    """num/den (den > 0) rounded once to float32, nearest even."""
    if num == 0:
        return F32(0.0)
    sign = -1.0 if num < 0 else 1.0
    num = abs(num)
    e = num.bit_length() - den.bit_length()
    if (num << max(0, -e)) < (den << max(0, e)):
        e -= 1
    q = max(e - 23, -149)
    n2, d2 = (num, den << q) if q >= 0 else (num << -q, den)
    r, rem = divmod(n2, d2)
    if 2 * rem > d2 or (2 * rem == d2 and r & 1):
        r += 1
    if r * 2.0 ** q >= 2.0 ** 128:
        return F32(sign * math.inf)
    return F32(sign * math.ldexp(r, q))


decimal.getcontext().prec = 60


def _round_decimal(d):
    f = fractions.Fraction(d)
    return round_rational_f32(f.numerator, f.denominator)


def _correctly_rounded(x, fast, exact):
    """fast(x) in float64 (numpy's, error below an ulp) rounded to float32,
    except where that double lies within 4 ulps of a float32 midpoint or
    outside float32's normal range: there, 60 decimal digits."""
    x = np.asarray(x, dtype=F32)
    y = fast(x.astype(F64))
    low = y.view(np.int64) & ((1 << 29) - 1)
    doubtful = (np.abs(low - (1 << 28)) <= 4) | ~(np.abs(y) >= np.finfo(F32).tiny) | ~(np.abs(y) <= np.finfo(F32).max)
    out = y.astype(F32)
    for idx in zip(*np.nonzero(doubtful)):
        v = float(x[idx])
        if np.isfinite(v) and (fast is np.exp or v > 0):  # log's other inputs give 0, -inf or NaN exactly
            out[idx] = _round_decimal(exact(decimal.Decimal(v)))
    return out


def exp32(x):
    return _correctly_rounded(x, np.exp, lambda d: d.exp())


def log32(x):
    return _correctly_rounded(x, np.log, lambda d: d.ln())


def fma32(a, b, c):
    """float32 fma: the exact double product plus c, rounded to odd in double, then to float32."""
    p = a.astype(F64) * b.astype(F64)
    c64 = c.astype(F64)
    s = p + c64
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)
    fix = (err != 0) & ((s.view(np.int64) & 1) == 0)
    s = np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s.astype(F32)


def matmul_fma(a, b):
    """a (m×k) · bᵀ (b n×k): acc = fma(a_k, b_k, acc) for k in order."""
    acc = np.zeros((a.shape[0], b.shape[0]), dtype=F32)
    for p in range(a.shape[1]):
        acc = fma32(a[:, p][:, None], b[:, p][None, :], acc)
    return acc


def column_sums(x):
    s = np.zeros(x.shape[1], dtype=F32)
    for row in x:
        s = s + row
    return s


def _exact_sums_f32(terms):
    """The exact sum of each row of float64 terms (each term exact) rounded
    once to float32. math.fsum gives the sum rounded to double; that rounds
    to the same float32 unless it is itself a float32 midpoint (a float32
    midpoint is a double, so the exact sum cannot cross one without landing
    on it). On a midpoint, the sign of the exact remainder (fsum of the terms
    and -d, correctly rounded, so zero only when it is zero) decides."""
    rows = terms.tolist()
    d = np.array([math.fsum(r) for r in rows], dtype=F64)
    f = d.astype(F32)
    g = np.nextafter(f, np.where(d > f, F32(np.inf), F32(-np.inf)).astype(F32))
    tie = np.isfinite(d) & (f.astype(F64) != d) & (f.astype(F64) + g.astype(F64) == 2.0 * d)
    for i in np.nonzero(tie)[0]:
        remainder = math.fsum(rows[i] + [-d[i]])
        if remainder != 0:  # else a true tie, which numpy rounded to even
            f[i] = max(f[i], g[i]) if remainder > 0 else min(f[i], g[i])
    return f


def gemm_exact(a, b, scale):
    """(scale) · a·bᵀ under the `exact` tensor-core model: the exact sum of
    products (each exact in double) rounded once to float32, then multiplied
    by the float32 scale with one rounding (the epilogue's fma with C = 0).
    Any NaN, inf·0 or inf - inf gives NaN, else an infinite term its infinity."""
    a, b = np.asarray(a, dtype=F64), np.asarray(b, dtype=F64)
    terms = a[:, None, :] * b[None, :, :]  # m × n × k
    finite = np.isfinite(terms).all(axis=2)
    totals = _exact_sums_f32(np.where(finite[:, :, None], terms, 0).reshape(-1, a.shape[1])).reshape(finite.shape)
    for i, j in zip(*np.nonzero(~finite)):
        row = terms[i, j]
        infinite = row[np.isinf(row)]
        if np.isnan(row).any() or (infinite > 0).any() and (infinite < 0).any():
            totals[i, j] = F32(np.nan)
        else:
            totals[i, j] = F32(infinite[0])
    return (totals.astype(F64) * float(scale)).astype(F32)


# --- casts ----------------------------------------------------------------

FORMATS = {
    "fp16": (np.float16, 65504.0),
    "bf16": (ml_dtypes.bfloat16, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)),
    "e4m3": (ml_dtypes.float8_e4m3fn, 448.0),
    "e5m2": (ml_dtypes.float8_e5m2, 57344.0),
    "tf32": (None, float(np.finfo(F32).max)),  # cast() truncates float32 bits
    "tf32-rne": (None, float(np.finfo(F32).max)),  # tf32 rounded to nearest even, by cast()
    "e2m1": (ml_dtypes.float4_e2m1fn, 6.0),  # MX elements (always saturated here)
    "e2m3": (ml_dtypes.float6_e2m3fn, 7.5),
    "e3m2": (ml_dtypes.float6_e3m2fn, 28.0),
}
# IEEE P3109 members, cast by gfloat (dtype None there: cast() asks gfloat).
P3109 = {name: format_info_p3109(8, p, Signedness.Signed, Domain.Extended) for name, p in
         (("binary8p3se", 3), ("binary8p2se", 2), ("binary8p4se", 4))}
FORMATS.update({name: (None, float(fi.max)) for name, fi in P3109.items()})


class Stats:
    def __init__(self):
        self.amax = F32(0)
        self.scale = F32(1)
        self.underflowed = self.overflowed = self.flushed = self.saturated = 0


def amax_of(x):
    x = np.asarray(x, dtype=F32)
    if np.isnan(x).any():
        return F32(np.nan)
    return F32(np.max(np.abs(x))) if x.size else F32(0)


# Formats without infinity: a value overflows from the midpoint of the largest
# finite value and the next step above it (max + half its ulp), the midpoint
# included (each max's significand is odd, so the tie rounds up, past it).
OVERFLOW_FROM = {"e2m1": 6.0 + 1.0, "e2m3": 7.5 + 0.25, "e3m2": 28.0 + 2.0}


def cast(x, fmt, saturate, stats):
    """x (float32) rounded to fmt; returns the values as float64; counts into stats.
    tf32 operands: the float32 bits with the low 13 cleared (a tensor core's
    reading of fp32 registers); tf32-rne: rounded there to nearest even (cuBLAS)."""
    x = np.asarray(x, dtype=F32)
    if fmt in ("tf32", "tf32-rne"):
        bits = np.ascontiguousarray(x).view(np.uint32).astype(np.uint64)
        if fmt == "tf32-rne":  # half a tf32 ulp less one, plus its last bit: a tie carries from an odd one
            bits = bits + 0xFFF + ((bits >> 13) & 1)
        q = (bits & 0xFFFFE000).astype(np.uint32).view(F32).astype(F64)
        if fmt == "tf32-rne":
            q[np.isnan(x)] = np.nan  # (the carry would run into a NaN's sign)
        if stats is not None:
            stats.underflowed += int(np.sum(np.isfinite(x) & (x != 0) & (q == 0)))
        return q
    dtype, fmax = FORMATS[fmt]
    with np.errstate(over="ignore", invalid="ignore"):
        if fmt in P3109:
            unbounded = round_ndarray(P3109[fmt], x.astype(F64), RoundMode.TiesToEven, sat=False)
            q = round_ndarray(P3109[fmt], x.astype(F64), RoundMode.TiesToEven, sat=True) if saturate else unbounded
        else:
            unbounded = x.astype(dtype).astype(F64)
            q = np.clip(x, -fmax, fmax).astype(dtype).astype(F64) if saturate else unbounded
    finite = np.isfinite(x)
    overflowed = finite & ~np.isfinite(unbounded)
    if fmt in OVERFLOW_FROM:  # no infinity: ml_dtypes saturates, the value still overflowed
        overflowed = finite & (np.abs(x) >= OVERFLOW_FROM[fmt])
    if stats is not None:
        stats.underflowed += int(np.sum(finite & (x != 0) & (q == 0)))
        stats.overflowed += int(np.sum(overflowed))
        stats.saturated += int(np.sum(overflowed | np.isinf(x))) if saturate else 0
    return q


def fp8_scale_from_amax(amax, fmax, margin, previous):
    if not (amax > 0) or not np.isfinite(amax):
        return previous
    with np.errstate(over="ignore"):
        s = (F32(fmax) / F32(amax)) / F32(2.0 ** margin)
    return F32(np.finfo(F32).max) if np.isinf(s) else F32(s)


class Delayed:
    def __init__(self, fmax, history, margin):
        self.fmax, self.history, self.margin = fmax, history, margin
        self.scale = F32(1)
        self.amaxes = collections.deque()

    def update(self, amax):
        self.amaxes.append(F32(amax))
        while len(self.amaxes) > self.history:
            self.amaxes.popleft()
        window = self.amaxes[-1]
        for a in self.amaxes:
            window = F32(np.nan) if (np.isnan(a) or np.isnan(window)) else max(window, a)
        self.scale = fp8_scale_from_amax(window, self.fmax, self.margin, self.scale)


RECIPES = {  # forward, gradient, activation, saturating operand casts, scaling, loss scaling
    "fp32": (None, None, None, False, None, False),
    "tf32": ("tf32", "tf32", None, False, None, False),
    "tf32-rne": ("tf32-rne", "tf32-rne", None, False, None, False),
    "fp16": ("fp16", "fp16", "fp16", False, None, True),
    "bf16": ("bf16", "bf16", "bf16", False, None, False),
    "fp8-delayed": ("e4m3", "e5m2", "bf16", True, "delayed", False),
    "fp8-current": ("e4m3", "e5m2", "bf16", True, "current", False),
    "mxfp8": ("e4m3", "e4m3", "bf16", True, "mx", False),
    # fp8-current's machinery with other formats (recipe.hpp's scaled_recipe_syntax)
    "mx:e2m1": ("e2m1", "e2m1", "bf16", True, "mx", False),
    "mx:e3m2": ("e3m2", "e3m2", "bf16", True, "mx", False),
    "current:e3m2/e2m3": ("e3m2", "e2m3", "bf16", True, "current", False),
    "delayed:e2m3/e3m2": ("e2m3", "e3m2", "bf16", True, "delayed", False),
    "current:binary8p3se/binary8p2se": ("binary8p3se", "binary8p2se", "bf16", True, "current", False),
    "delayed:binary8p4se": ("binary8p4se", "binary8p4se", "bf16", True, "delayed", False),
}


# Pure low-precision training: the autocast recipe, the weights' (and
# gradients') format, the optimizer states' format (None: float32) and how
# the weight takes its update.
PURE = {}
for _base in ["bf16", "fp16"]:
    PURE[_base + "-pure"] = (_base, _base, _base, "nearest")
    PURE[_base + "-pure-sr"] = (_base, _base, _base, "sr")
    PURE[_base + "-pure-kahan"] = (_base, _base, _base, "kahan")
    PURE[_base + "-pure-fp32-states"] = (_base, _base, None, "nearest")


def store(x, fmt):
    """A float32 tensor kept in fmt (to nearest even), as float32 values."""
    return cast(x, fmt, False, None).astype(F32)


def draws(seed, first, count):
    """Stochastic rounding's draws at positions first.. of the stream: half
    of splitmix64(seed, q // 2), the low 32 bits for even q, the high for odd."""
    return np.array([(splitmix64(seed, q >> 1) >> (32 * (q & 1))) & 0xFFFFFFFF for q in range(first, first + count)],
                    dtype=np.uint64)


def stochastic_round(x, fmt, bits, seed, first):
    """x (float32) rounded to the 16-bit fmt stochastically: between the
    neighbours lo (toward zero) and hi, the discarded fraction f = (|x| -
    |lo|) / (|hi| - |lo|) rounds away iff floor(f·2^bits) + draw mod 2^bits
    >= 2^bits (finite x whose neighbours are finite)."""
    dtype = FORMATS[fmt][0]
    x = np.asarray(x, dtype=F32).ravel()
    near = x.astype(dtype)
    ax = np.abs(x.astype(F64))
    code = near.view(np.uint16).astype(np.int64)
    lo = np.where(np.abs(near.astype(F64)) > ax, code - 1, code)  # one code toward zero
    value = lambda c: np.abs(c.astype(np.uint16).view(dtype).astype(F64))
    lo_v, hi_v = value(lo), value(lo + 1)
    top = np.floor((ax - lo_v) / (hi_v - lo_v) * 2.0 ** bits).astype(np.uint64)
    mask = np.uint64((1 << bits) - 1)
    away = (ax != lo_v) & (top + (draws(seed, first, x.size) & mask) > mask)
    return np.where(away, lo + 1, lo).astype(np.uint16).view(dtype).astype(F32)


class WeightStore:
    """Applies float32 updates u to weights: p + u in float32, rounded to
    the weight format (nearest, stochastic or Kahan-compensated) under pure
    recipes; counts the nonzero updates and those lost (p unchanged)."""

    def __init__(self, pure, sr_bits=16, sr_seed=0):
        self.weights, self.states, self.update = (pure[1], pure[2], pure[3]) if pure else (None, None, None)
        self.sr_bits, self.sr_seed, self.position = sr_bits, sr_seed, 0
        self.compensation = {}

    def keep_state(self, x):
        return store(x, self.states) if self.states else x

    def in_weight_format(self, g):
        return store(g, self.weights) if self.weights else g

    def apply(self, key, p, u):
        """The new weight and (nonzero, lost) counts."""
        kahan = self.weights and self.update == "kahan"
        y = (u + self.compensation.get(key, np.zeros_like(u))).astype(F32) if kahan else u
        total = (p + y).astype(F32)
        if self.weights is None:
            new = total
        elif self.update == "sr":
            new = stochastic_round(total, self.weights, self.sr_bits, self.sr_seed, self.position).reshape(p.shape)
            self.position += total.size
        else:
            new = store(total, self.weights)
        if kahan:
            self.compensation[key] = store(((p - new).astype(F32) + y).astype(F32), self.weights)
        nonzero = u != 0
        return new, (int(np.sum(nonzero)), int(np.sum(nonzero & (new == p))))


def mx_exponent(amax, fmax):
    """The smallest e with 2^e >= amax / fmax, within E8M0's -127..127; 0 for amax 0, inf or NaN."""
    if not (amax > 0) or not np.isfinite(amax):
        return 0
    r = fractions.Fraction(float(amax)) / fractions.Fraction(fmax)
    e = r.numerator.bit_length() - r.denominator.bit_length()
    while fractions.Fraction(2) ** e < r:
        e += 1
    while fractions.Fraction(2) ** (e - 1) >= r:
        e -= 1
    return max(-127, min(127, e))


class Autocast:
    def __init__(self, recipe, history=1024, margin=0):
        self.forward, self.gradient, self.activation, self.saturate, self.scaling, _ = RECIPES[recipe]
        self.history, self.margin = history, margin
        self.delayed = {}
        self.step = {}

    def float32(self):
        return self.forward is None

    def record(self, name):
        assert name not in self.step
        self.step[name] = Stats()
        return self.step[name]

    def operand(self, name, role, x):
        fmt = self.forward if role == "forward" else self.gradient
        s = self.record(name)
        s.amax = amax_of(x)
        fmax = FORMATS[fmt][1]
        if self.scaling == "current":
            s.scale = fp8_scale_from_amax(s.amax, fmax, self.margin, F32(1))
        elif self.scaling == "delayed":
            d = self.delayed.setdefault(name, Delayed(fmax, self.history, self.margin))
            s.scale = d.scale
            d.update(s.amax)
        scale_inv = F32(1)
        if self.scaling == "mx":
            x = np.asarray(x, dtype=F32)
            exponents = np.zeros(x.shape, dtype=np.int64)
            for r in range(x.shape[0]):
                for b in range(0, x.shape[1], 32):
                    exponents[r, b:b + 32] = mx_exponent(amax_of(x[r, b:b + 32]), fmax)
            elements = cast(np.ldexp(x, -exponents).astype(F32), fmt, True, s)
            return np.ldexp(elements, exponents), scale_inv
        if s.scale != F32(1):
            x = (np.asarray(x, dtype=F32) * s.scale).astype(F32)
            scale_inv = F32(1) / s.scale
        return cast(x, fmt, self.saturate, s), scale_inv

    def columnwise(self, name, role, rowwise, source):
        """The operand transposed; MX casts the transposed source again along its rows."""
        if self.scaling != "mx":
            return T(rowwise)
        return self.operand(name + ".t", role, np.ascontiguousarray(np.asarray(source).T))

    def gemm(self, a, b):
        (va, ia), (vb, ib) = a, b
        return gemm_exact(va, vb, F32(ia * ib))

    def to_activation(self, name, x):
        if self.activation is None:
            return x
        s = None
        if name:
            s = self.step.setdefault(name, Stats())  # attention adds every sequence and head
            amax = amax_of(x)
            s.amax = F32(np.nan) if np.isnan(s.amax) or np.isnan(amax) else max(s.amax, amax)
        return cast(x, self.activation, False, s).astype(F32)

    def activation_matmul(self, name, a, b):
        """a·bᵀ in the activation format (attention's GEMMs); an FMA chain in
        fp32; tf32 operands with a float32 result under tf32."""
        if self.float32():
            return matmul_fma(np.asarray(a, dtype=F32), np.asarray(b, dtype=F32))
        fmt = self.activation or self.forward
        qa = cast(a, fmt, False, None)
        qb = cast(b, fmt, False, None)
        return self.to_activation(name, gemm_exact(qa, qb, F32(1)))


def T(q):
    return q[0].T, q[1]


# --- model ------------------------------------------------------------------

MASK = (1 << 64) - 1


def splitmix64(seed, position):
    z = (seed + (position + 1) * 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


class Init:
    def __init__(self, seed):
        self.seed, self.position = seed, 0

    def uniform(self, fan_in, count):
        bound = float(F32(1) / np.sqrt(F32(fan_in)))
        out = np.empty(count, dtype=F32)
        for i in range(count):
            u = (splitmix64(self.seed, self.position) >> 11) * 2.0 ** -53
            self.position += 1
            out[i] = F32((2.0 * u - 1.0) * bound)
        return out


class Linear:
    def __init__(self, name, n_in, n_out, init):
        self.name, self.n_in, self.n_out = name, n_in, n_out
        self.w = init.uniform(n_in, n_out * n_in).reshape(n_out, n_in)
        self.b = init.uniform(n_in, n_out)

    def forward(self, ac, x):
        self.x = x
        if ac.float32():
            y = matmul_fma(x, self.w)
            b = self.b
        else:
            self.qx = ac.operand(self.name + ".input", "forward", x)
            self.qw = ac.operand(self.name + ".weight", "forward", self.w)
            y = ac.gemm(self.qx, self.qw)
            b = ac.to_activation("", self.b)
        y = (y + b[None, :]).astype(F32)
        return ac.to_activation(self.name + ".output", y)

    def backward(self, ac, dy, want_dx):
        dx = None
        if ac.float32():
            if want_dx:
                dx = matmul_fma(dy, self.w.T)
            self.gw = matmul_fma(dy.T, self.x.T)
            self.gb = column_sums(dy)
            return dx
        qdy = ac.operand(self.name + ".grad_output", "gradient", dy)
        if want_dx:
            w_t = ac.columnwise(self.name + ".weight", "forward", self.qw, self.w)
            dx = ac.to_activation(self.name + ".grad_input", ac.gemm(qdy, w_t))
        dy_t = ac.columnwise(self.name + ".grad_output", "gradient", qdy, dy)
        x_t = ac.columnwise(self.name + ".input", "forward", self.qx, self.x)
        self.gw = ac.to_activation(self.name + ".grad_weight", ac.gemm(dy_t, x_t))
        self.gb = ac.to_activation(self.name + ".grad_bias", column_sums(dy))
        return dx


def relu(x):
    return np.where(x > 0, x, F32(0)).astype(F32)


def softmax_cross_entropy(logits, labels, loss_scale):
    rows, classes = logits.shape
    top = logits.max(axis=1)
    correct = int(np.sum(np.argmax(logits, axis=1) == labels))
    shifted = (logits - top[:, None]).astype(F32)
    s = np.zeros(rows, dtype=F32)
    for c in range(classes):
        s = s + exp32(shifted[:, c])
    logp = (shifted - log32(s)[:, None]).astype(F32)
    total = F32(0)
    for i in range(rows):
        total = F32(total + (-logp[i, labels[i]]))
    g = F32(loss_scale) / F32(rows)
    grad = (exp32(logp) * g).astype(F32)
    grad[np.arange(rows), labels] = grad[np.arange(rows), labels] - g
    return F32(total / F32(rows)), grad, correct


class Mlp:
    def __init__(self, seed):
        init = Init(seed)
        self.fc1 = Linear("fc1", 64, 32, init)
        self.fc2 = Linear("fc2", 32, 10, init)

    def params(self):
        return [(self.fc1, "w"), (self.fc1, "b"), (self.fc2, "w"), (self.fc2, "b")]

    def forward_backward(self, ac, x, labels, loss_scale):
        z = self.fc1.forward(ac, x)
        logits = self.fc2.forward(ac, relu(z))
        loss, grad, _ = softmax_cross_entropy(logits, labels, loss_scale)
        dlogits = ac.to_activation("logits.grad", grad)
        da = self.fc2.backward(ac, dlogits, True)
        self.fc1.backward(ac, np.where(z > 0, da, F32(0)).astype(F32), False)
        return loss

    def evaluate(self, x, labels, recipe="fp32"):
        ac = Autocast(recipe)
        logits = self.fc2.forward(ac, relu(self.fc1.forward(ac, x)))
        loss, _, correct = softmax_cross_entropy(logits, labels, F32(1))
        return loss, correct / len(labels)


class GradScaler:
    def __init__(self, init=65536.0, growth=2.0, backoff=0.5, interval=2000):
        self.scale, self.growth, self.backoff, self.interval, self.tracker = init, growth, backoff, interval, 0

    def update(self, found_inf):
        if found_inf:
            self.scale *= self.backoff
            self.tracker = 0
            return True
        self.tracker += 1
        if self.tracker == self.interval:
            self.scale *= self.growth
            self.tracker = 0
        return False


def read_digits(path):
    rows = [list(map(int, line.split(","))) for line in gzip.open(path, "rt").read().splitlines() if line]
    data = np.array(rows)
    return (data[:, :64].astype(F32) / F32(16)).astype(F32), data[:, 64]


def train(recipe, data_path, steps, batch, lr=0.05, momentum=0.9, seed=0, init_scale=65536.0,
          growth_interval=2000, train_images=1500, optimizer="sgd", clip=0.0,
          beta1=0.9, beta2=0.999, eps=1e-8, sr_bits=16, sr_seed=0, infer=()):
    """Yields one dict per step, then the evaluation as a final dict (with
    the held-out loss and accuracy under each recipe of `infer`)."""
    pixels, labels = read_digits(data_path)
    tx, ty = pixels[:train_images], labels[:train_images]
    model = Mlp(seed)
    pure = PURE.get(recipe)
    base = pure[0] if pure else recipe
    weights = WeightStore(pure, sr_bits, sr_seed)
    for layer in [model.fc1, model.fc2]:
        layer.w, layer.b = weights.in_weight_format(layer.w), weights.in_weight_format(layer.b)
    ac = Autocast(base)
    scaler = GradScaler(init_scale, interval=growth_interval) if RECIPES[base][5] else None
    buffers = {}
    updates = 0
    for step in range(steps):
        ac.step = {}
        idx = [(step * batch + i) % train_images for i in range(batch)]
        scale = F32(scaler.scale) if scaler else F32(1)
        loss = model.forward_backward(ac, tx[idx], ty[idx], scale)
        grads = {}
        found_inf = False
        inverse = F32(1.0 / scaler.scale) if scaler else None
        for layer, kind in model.params():
            g = weights.in_weight_format(layer.gw if kind == "w" else layer.gb)
            if scaler:
                found_inf = found_inf or not np.isfinite(g).all()
                g = weights.in_weight_format((g * inverse).astype(F32))
            grads[(layer.name, kind)] = g
        total = F32(0)
        for g in grads.values():
            for v in g.ravel():
                total = F32(total + F32(v * v))
        norm = np.sqrt(total)
        skipped = scaler.update(found_inf) if scaler else False
        if not skipped and clip > 0:
            coefficient = min(F32(clip) / F32(norm + F32(1e-6)), F32(1))
            grads = {k: weights.in_weight_format((g * coefficient).astype(F32)) for k, g in grads.items()}
        lost = {}
        if not skipped:
            updates += 1
            c1 = 1.0 - float(F32(beta1)) ** updates
            c2 = 1.0 - float(F32(beta2)) ** updates
            step_size, c2_sqrt = F32(float(F32(lr)) / c1), F32(math.sqrt(c2))
            for layer, kind in model.params():
                g = grads[(layer.name, kind)]
                key = (layer.name, kind)
                p = layer.w if kind == "w" else layer.b
                if optimizer == "sgd":
                    buf = g.copy() if updates == 1 or momentum == 0 else (buffers[key] * F32(momentum) + g).astype(F32)
                    buf = weights.keep_state(buf)
                    buffers[key] = buf
                    u = -(F32(lr) * buf).astype(F32)
                else:
                    m, v = buffers.get(key, (np.zeros_like(g), np.zeros_like(g)))
                    m = weights.keep_state((m + (F32(1) - F32(beta1)) * (g - m)).astype(F32))
                    v = weights.keep_state((v * F32(beta2) + (F32(1) - F32(beta2)) * (g * g)).astype(F32))
                    buffers[key] = (m, v)
                    denom = (np.sqrt(v) / c2_sqrt + F32(eps)).astype(F32)
                    u = ((-step_size) * (m / denom)).astype(F32)
                p, lost[f"{layer.name}.{'weight' if kind == 'w' else 'bias'}"] = weights.apply(key, p, u)
                if kind == "w":
                    layer.w = p
                else:
                    layer.b = p
        yield {"step": step, "loss": loss, "grad_norm": norm, "loss_scale": scale, "skipped": skipped,
               "tensors": ac.step, "updates": lost}
    held_out = pixels[train_images:], labels[train_images:]
    loss, accuracy = model.evaluate(*held_out)
    yield {"eval_loss": loss, "accuracy": accuracy, "inference": {r: model.evaluate(*held_out, r) for r in infer}}
