"""Tables for the benchmark results (Markdown, so docs/benchmarks.md can
paste them as printed).

Every function takes ``rows``: a list of result dicts as ``run_peer.py``
prints them (``framework``, ``figure``, the figure's keys, or ``error``).
"""


def _fmt(value, digits=2):
    if value is None:
        return "–"
    if isinstance(value, str):
        return value
    return "{:.{}f}".format(value, digits)


def _table(header, lines):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(line) + " |" for line in lines]
    return "\n".join(out)


def _name(row):
    name = row["framework"]
    if row.get("version") and row["version"] != "dev":
        name += " " + row["version"]
    return name


def _by_figure(rows, figure):
    return [r for r in rows if r.get("figure") == figure]


def _error_line(row, width):
    text = "**not measured**: " + row["error"].replace("|", "/")
    return [_name(row), text] + [""] * (width - 2)


def perop_table(rows):
    header = ["framework", "NumPy", "fwd µs/op", "bwd µs/op",
              "NumPy f+b µs/op", "fwd/np", "bwd/np", "**(f+b)/np**",
              "range", "best", "sin·mul (f+b)/np", "sin·mul best"]
    sin = {r["framework"]: r for r in _by_figure(rows, "perop_sinmul")}
    lines = []
    for r in _by_figure(rows, "perop_muladd"):
        if "error" in r:
            lines.append(_error_line(r, len(header)))
            continue
        s = sin.get(r["framework"], {})
        sin_text = ("error" if "error" in s else _fmt(s.get("r_total")))
        sin_best = ("" if "error" in s else _fmt(s.get("r_total_best")))
        lines.append([
            _name(r), r.get("numpy", "?"), _fmt(r["fwd"]), _fmt(r["bwd"]),
            _fmt(r["np_fwd"] + r["np_bwd"]), _fmt(r["r_fwd"], 1),
            _fmt(r["r_bwd"], 1), "**{}**".format(_fmt(r["r_total"])),
            "{}–{}".format(*[_fmt(v) for v in r["r_total_range"]]),
            _fmt(r.get("r_total_best")), sin_text, sin_best])
    return _table(header, lines)


def mlp_table(rows):
    header = ["framework", "step ms", "NumPy ms (same process)", "**ratio**",
              "range", "best", "first loss"]
    lines = []
    for r in _by_figure(rows, "mlp"):
        if "error" in r:
            lines.append(_error_line(r, len(header)))
            continue
        lines.append([_name(r), _fmt(r["ms"]), _fmt(r["np_ms"]),
                      "**{}**".format(_fmt(r["ratio"], 3)),
                      "{}–{}".format(*[_fmt(v, 3) for v in r["ratio_range"]]),
                      _fmt(r.get("ratio_best"), 3), _fmt(r["first_loss"], 6)])
    return _table(header, lines)


def deep_table(rows):
    header = ["framework", "fwd s", "bwd s", "NumPy f+b s", "(f+b)/np",
              "peak MiB", "held after backward MiB", "after release MiB",
              "memory read by"]
    lines = []
    for r in _by_figure(rows, "deep"):
        if "error" in r:
            lines.append(_error_line(r, len(header)))
            continue
        m = r["memory"]
        lines.append([_name(r), _fmt(r["fwd"], 3), _fmt(r["bwd"], 3),
                      _fmt(r["np_fwd"] + r["np_bwd"], 3), _fmt(r["ratio"], 1),
                      _fmt(m["peak"], 1), _fmt(m["after_backward"], 1),
                      _fmt(m["after_release"], 1), r["memory_method"]])
    return _table(header, lines)


def forget_table(rows):
    header = ["framework", "plain s", "plain/np", "forget s", "forget/plain",
              "plain MiB", "forget MiB", "forget/bound", "memory read by"]
    lines = []
    numpy_row = None
    for r in _by_figure(rows, "forget"):
        if "error" in r:
            lines.append(_error_line(r, len(header)))
            continue
        if numpy_row is None:
            numpy_row = r
        lines.append([
            _name(r), _fmt(r.get("plain_s")), _fmt(r.get("plain_ratio")),
            _fmt(r.get("forget_s")), _fmt(r.get("forget_over_plain")),
            _fmt(r.get("plain_mib"), 1), _fmt(r.get("forget_mib"), 1),
            _fmt(r.get("forget_over_bound")), r["memory_method"]])
    if numpy_row is not None:
        r = numpy_row
        np_line = ["numpy (by hand, recompute)", _fmt(r["np_plain_s"]), "1",
                   _fmt(r["np_forget_s"]),
                   _fmt(r["np_forget_s"] / r["np_plain_s"]),
                   _fmt(r["np_plain_mib"], 1), _fmt(r["np_forget_mib"], 1),
                   _fmt(r["np_forget_mib"] / r["analytic_forget_mib"]),
                   "tracemalloc"]
        lines.insert(0, np_line)
        lines.append(["analytic", "", "", "", "4/3 ≈ 1.33",
                      _fmt(r["analytic_plain_mib"], 1),
                      _fmt(r["analytic_forget_mib"], 1), "1", ""])
    return _table(header, lines)


def all_tables(rows):
    parts = []
    for title, fn, figures in (
            ("Per-op overhead: 2 000-op chain of `x*c`, `x+c` on 10 float32",
             perop_table, ("perop_muladd",)),
            ("MLP 784-512-512-10, batch 256, softmax CE, SGD", mlp_table,
             ("mlp",)),
            ("100 000-op chain", deep_table, ("deep",)),
            ("forget net: 64 × tanh(linear), 256×1024 float32, forget per 8",
             forget_table, ("forget",))):
        if any(r.get("figure") in figures for r in rows):
            parts.append("### " + title + "\n\n" + fn(rows))
    return "\n\n".join(parts)
