"""Draws the SVG plots of docs/tensor-core.md from the CSVs `fmtcheck gemm-error`
wrote (commands in that page). Plain SVG, no plotting library: mean correct
bits (-log2 of the mean relative error) against K.

    python3 docs/tensor-core-gemm-error-plot.py

tensor-core-gemm-error.svg: one panel, a line per model, promotion and
distribution. tensor-core-gemm-error-archs.svg: a panel per distribution, a
line per model and input type (Hopper, Blackwell and MI300X side by side)."""
import csv, math, pathlib

here = pathlib.Path(__file__).parent
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"]
KMIN, KMAX, YMIN, YMAX = 5, 14, 0, 30


def panel(out, x0, width, height, top, bottom, series, title):
    """One panel at x0: axes, grid and a polyline per series {key: (color, dash, [(k, bits)])}."""
    left = x0 + 50
    x = lambda k: left + (math.log2(k) - KMIN) / (KMAX - KMIN) * (width - 60)
    y = lambda v: top + (1 - (min(v, YMAX) - YMIN) / (YMAX - YMIN)) * (height - top - bottom)
    out.append(f'<text x="{left}" y="{top - 8}">{title}</text>')
    for v in range(YMIN, YMAX + 1, 5):
        out.append(f'<line x1="{left}" x2="{x0 + width - 10}" y1="{y(v)}" y2="{y(v)}" stroke="#ddd"/>'
                   f'<text x="{left - 8}" y="{y(v) + 4}" text-anchor="end">{v}</text>')
    for e in range(KMIN, KMAX + 1):
        out.append(f'<text x="{x(2 ** e)}" y="{height - bottom + 16}" text-anchor="middle">2^{e}</text>')
    out.append(f'<text x="{(left + x0 + width) / 2}" y="{height - 10}" text-anchor="middle">K</text>')
    for color, dash, pts in series.values():
        path = " ".join(f"{x(k):.1f},{y(v):.1f}" for k, v in sorted(pts))
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="2"{dash} points="{path}"/>')


def legend(out, x0, top, series):
    for i, (key, (color, dash, _)) in enumerate(series.items()):
        out.append(f'<line x1="{x0}" x2="{x0 + 20}" y1="{top + 14 * i}" y2="{top + 14 * i}" stroke="{color}" '
                   f'stroke-width="2"{dash}/><text x="{x0 + 24}" y="{top + 14 * i + 4}" font-size="10">{key}</text>')


def svg(width, height, body):
    return "\n".join([f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
                      f'font-family="sans-serif" font-size="12">', f'<rect width="{width}" height="{height}" fill="white"/>',
                      *body, "</svg>"]) + "\n"


def deepseek_plot():
    rows = list(csv.DictReader(open(here / "tensor-core-gemm-error.csv")))
    series = {}
    for r in rows:
        key = f'{r["model"]}, {"promote " + r["promote"] if r["promote"] != "0" else "no promotion"}, {r["dist"]}'
        series.setdefault(key, []).append((int(r["k"]), float(r["bits_mean"])))
    styled = {key: (COLORS[i % len(COLORS)], ' stroke-dasharray="5,3"' if "lognormal" in key else "", pts)
              for i, (key, pts) in enumerate(sorted(series.items()))}
    body = []
    panel(body, 10, 530, 420, 30, 50, styled, "FP8 e4m3 GEMM, C = 0: mean correct bits vs K (fmtcheck gemm-error)")
    legend(body, 550, 30, styled)
    (here / "tensor-core-gemm-error.svg").write_text(svg(780, 420, body))


def architectures_plot():
    rows = list(csv.DictReader(open(here / "tensor-core-gemm-error-archs.csv")))
    keys = list(dict.fromkeys((r["model"], r["type"]) for r in rows))  # in the CSV's order
    style = {mt: (COLORS[i % len(COLORS)], ' stroke-dasharray="6,4"' if i % 2 else "") for i, mt in enumerate(keys)}
    body = []
    for p, dist in enumerate(("normal", "lognormal")):
        series = {}
        for r in rows:
            if r["dist"] != dist:
                continue
            mt = (r["model"], r["type"])
            series.setdefault(f"{mt[0]} ({mt[1]})", (*style[mt], []))[2].append((int(r["k"]), float(r["bits_mean"])))
        panel(body, 10 + p * 400, 390, 420, 50, 50, series, f"{dist} entries, no promotion")
    body.insert(0, '<text x="60" y="18">FP8 GEMM, C = 0: mean correct bits vs K, per tensor-core model '
                   '(fmtcheck gemm-error)</text>')
    legend(body, 820, 50, {f"{m} ({t})": (*style[(m, t)], []) for m, t in keys})
    (here / "tensor-core-gemm-error-archs.svg").write_text(svg(1040, 420, body))


deepseek_plot()
architectures_plot()
