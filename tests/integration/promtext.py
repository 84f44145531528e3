# SPDX-License-Identifier: LGPL-2.1-or-later
"""A strict reader of the Prometheus text exposition format (version 0.0.4),
for the tests of `vmpressurectl metrics`. Stricter than Prometheus itself
where that catches our mistakes:

- every line is a `# HELP`, a `# TYPE` or a sample; no other comments, no
  blank lines but the final newline;
- every family has exactly one HELP and one TYPE, both before its first
  sample, and its samples are contiguous (one block per family);
- names and label names are valid, label values correctly escaped, no label
  twice, no series twice; values are Prometheus floats;
- counters are >= 0; a histogram series (its labels without `le`) has
  `_bucket` lines with strictly increasing `le` ending at `+Inf`, counts
  never decreasing, a `_count` equal to the `+Inf` bucket and a `_sum`.

parse(text) returns {family: Family}; a ValueError names the line."""

import math
import re

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL_NAME = r"[a-zA-Z_][a-zA-Z0-9_]*"
LABEL = re.compile(rf'({LABEL_NAME})="((?:[^"\\\n]|\\[\\"n])*)"')
FLOAT = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?Inf|NaN")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


class Family:
    def __init__(self, name):
        self.name = name
        self.help = None
        self.type = None
        self.samples = []       # (sample name, {label: value}, float)

    def value(self, sample=None, **labels):
        """The value of the one sample named sample (default: the family's
        name) whose labels are exactly labels; None when there is none."""
        sample = sample or self.name
        for n, l, v in self.samples:
            if n == sample and l == labels:
                return v
        return None

    def histograms(self):
        """{frozenset(labels without le): {"buckets": [(le, count)], "sum": x, "count": n}}."""
        out = {}
        for n, l, v in self.samples:
            key = frozenset((k, x) for k, x in l.items() if k != "le")
            h = out.setdefault(key, {"buckets": [], "sum": None, "count": None})
            if n.endswith("_bucket"):
                h["buckets"].append((_float(l["le"]), v))
            elif n.endswith("_sum"):
                h["sum"] = v
            else:
                h["count"] = v
        return out


def _float(s):
    if not FLOAT.fullmatch(s):
        raise ValueError(f"not a Prometheus float: {s!r}")
    return float(s.replace("Inf", "inf"))


def _unescape(s):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), s)


def _labels(text):
    labels = {}
    pos = 0
    while pos < len(text):
        m = LABEL.match(text, pos)
        if not m:
            raise ValueError(f"bad label at {text[pos:]!r}")
        if m.group(1) in labels:
            raise ValueError(f"label {m.group(1)} twice")
        labels[m.group(1)] = _unescape(m.group(2))
        pos = m.end()
        if pos < len(text):
            if text[pos] != ",":
                raise ValueError(f"expected ',' at {text[pos:]!r}")
            pos += 1
    return labels


def _family_of(families, name):
    """A histogram's _bucket/_sum/_count belong to the histogram family."""
    for suffix in HISTOGRAM_SUFFIXES:
        base = name[:-len(suffix)]
        if name.endswith(suffix) and base in families and families[base].type == "histogram":
            return families[base]
    fam = families.get(name)
    if fam is not None and fam.type == "histogram":
        raise ValueError(f"histogram {name} has a sample without _bucket/_sum/_count")
    return fam


def _check_histogram(fam):
    for key, h in fam.histograms().items():
        what = f"{fam.name}{{{','.join(f'{k}={v}' for k, v in sorted(key))}}}"
        les = [le for le, _ in h["buckets"]]
        counts = [c for _, c in h["buckets"]]
        if not les or les[-1] != math.inf:
            raise ValueError(f"{what}: no +Inf bucket last")
        if any(b <= a for a, b in zip(les, les[1:])):
            raise ValueError(f"{what}: le not strictly increasing: {les}")
        if any(b < a for a, b in zip(counts, counts[1:])):
            raise ValueError(f"{what}: bucket counts decrease: {counts}")
        if any(c < 0 or c != int(c) for c in counts):
            raise ValueError(f"{what}: bucket counts not whole numbers >= 0: {counts}")
        if h["count"] is None or h["sum"] is None:
            raise ValueError(f"{what}: _count or _sum missing")
        if h["count"] != counts[-1]:
            raise ValueError(f"{what}: _count {h['count']} != +Inf bucket {counts[-1]}")
        if h["count"] == 0 and h["sum"] != 0:
            raise ValueError(f"{what}: _sum {h['sum']} without observations")


def parse(text):
    families = {}
    seen = set()
    current = None
    finished = set()
    lines = text.split("\n")
    if lines[-1] != "":
        raise ValueError("the text does not end with a newline")
    for n, line in enumerate(lines[:-1], 1):
        try:
            if line.startswith("#"):
                m = re.fullmatch(rf"# (HELP|TYPE) ({NAME}) (.+)", line)
                if not m:
                    raise ValueError("a comment that is neither HELP nor TYPE")
                kind, name, rest = m.groups()
                fam = families.setdefault(name, Family(name))
                if fam.samples:
                    raise ValueError(f"{kind} for {name} after its samples")
                if kind == "HELP":
                    if fam.help is not None:
                        raise ValueError(f"second HELP for {name}")
                    fam.help = rest
                else:
                    if fam.type is not None:
                        raise ValueError(f"second TYPE for {name}")
                    if rest not in TYPES:
                        raise ValueError(f"unknown type {rest!r}")
                    fam.type = rest
                continue
            m = re.fullmatch(rf"({NAME})(?:\{{(.*)\}})? (\S+)", line)
            if not m:
                raise ValueError("not a sample line")
            name, labeltext, value = m.groups()
            labels = _labels(labeltext or "")
            fam = _family_of(families, name)
            if fam is None or fam.type is None or fam.help is None:
                raise ValueError(f"sample {name} without HELP and TYPE before it")
            if fam.name in finished:
                raise ValueError(f"samples of {fam.name} are not in one block")
            if current is not None and current is not fam:
                finished.add(current.name)
            current = fam
            series = (name, tuple(sorted(labels.items())))
            if series in seen:
                raise ValueError(f"series {name}{labels} twice")
            seen.add(series)
            v = _float(value)
            if fam.type == "counter" and not v >= 0:
                raise ValueError(f"counter {name} is {v}")
            if fam.type == "histogram" and name.endswith("_bucket") and "le" not in labels:
                raise ValueError(f"bucket {name} without le")
            fam.samples.append((name, labels, v))
        except ValueError as e:
            raise ValueError(f"line {n}: {e}: {line!r}") from None
    for fam in families.values():
        if fam.type is None or fam.help is None:
            raise ValueError(f"{fam.name}: HELP or TYPE missing")
        if fam.type == "histogram":
            _check_histogram(fam)
    return families


def self_test():
    """The checker must reject what it is there to reject."""
    good = ("# HELP h_seconds x\n# TYPE h_seconds histogram\n"
            'h_seconds_bucket{s="a",le="0.1"} 1\nh_seconds_bucket{s="a",le="+Inf"} 2\n'
            'h_seconds_sum{s="a"} 0.3\nh_seconds_count{s="a"} 2\n'
            '# HELP c_total y\n# TYPE c_total counter\nc_total{l="q\\"\\\\"} 3\n')
    fams = parse(good)
    assert fams["c_total"].value(l='q"\\') == 3
    bad = [
        good.replace('le="+Inf"} 2', 'le="+Inf"} 0'),                 # decreasing
        good.replace('h_seconds_count{s="a"} 2', 'h_seconds_count{s="a"} 3'),  # _count != +Inf
        good.replace('le="+Inf"', 'le="5"'),                           # no +Inf
        good.replace("# HELP c_total y\n", ""),                        # no HELP
        good.replace("# TYPE c_total counter\n", ""),                  # no TYPE
        good.replace("c_total{l=", "c_total{l=1,"),                    # bad label
        good + "c_total{l=\"x\"} -1\n",                                # negative counter
        good + 'h_seconds_count{s="b"} 0\n',                           # not one block
        good.replace("\nc_total", "\nc_total{l=\"x\"} 1\nc_total"),    # fine, then…
        good.rstrip("\n"),                                             # no final newline
        good + "# a comment\n",
    ]
    rejected = 0
    for i, text in enumerate(bad):
        try:
            parse(text)
        except ValueError:
            rejected += 1
            continue
        if i != 8:
            raise AssertionError(f"the checker accepted bad text #{i}:\n{text}")
    assert rejected == len(bad) - 1, rejected
