"""Checks pulsarc_client_metrics output with prometheus_client's parser.

Usage: validate.py METRICS_FILE EXPECT_FILE

EXPECT_FILE holds one expectation a line, fields separated by tabs:
  family NAME TYPE              the family exists with this type
  labels NAME L1,L2,...         every sample of NAME has exactly these labels
                                (a histogram's le aside)
  value SAMPLE K=V;K=V... N     the sample with exactly these labels is N
  atleast SAMPLE K=V;K=V... N   the sample with exactly these labels is >= N
  series NAME N                 NAME has N distinct label sets
Every family must also have HELP text. Prints each mismatch; exit 1 if any.
"""
import sys

from prometheus_client.parser import text_string_to_metric_families


def load(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    # The parser is lazy: list() makes it read (and reject) everything now.
    return {fam.name: fam for fam in text_string_to_metric_families(text)}


def labels_of(sample):
    return {k: v for k, v in sample.labels.items() if k != "le"}


def parse_labels(spec):
    out = {}
    for part in filter(None, spec.split(";")):
        k, _, v = part.partition("=")
        out[k] = v
    return out


def main():
    metrics_path, expect_path = sys.argv[1], sys.argv[2]
    families = load(metrics_path)
    problems = []
    for fam in families.values():
        if not fam.documentation:
            problems.append(f"{fam.name}: no HELP text")
    with open(expect_path, encoding="utf-8") as f:
        expectations = [ln.rstrip("\n").split("\t") for ln in f if ln.strip()]
    for exp in expectations:
        kind = exp[0]
        if kind == "family":
            name, typ = exp[1], exp[2]
            fam = families.get(name)
            if fam is None:
                problems.append(f"family {name} missing (have {sorted(families)})")
            elif fam.type != typ:
                problems.append(f"family {name} is {fam.type}, want {typ}")
        elif kind == "labels":
            name, want = exp[1], set(exp[2].split(","))
            fam = families.get(name)
            for s in fam.samples if fam else []:
                if set(labels_of(s)) != want:
                    problems.append(f"{s.name} labels {sorted(labels_of(s))}, want {sorted(want)}")
        elif kind == "series":
            name, want = exp[1], int(exp[2])
            fam = families.get(name)
            got = {tuple(sorted(labels_of(s).items())) for s in fam.samples} if fam else set()
            if len(got) != want:
                problems.append(f"{name}: {len(got)} label sets, want {want}: {sorted(got)}")
        elif kind in ("value", "atleast"):
            sample, want_labels, want = exp[1], parse_labels(exp[2]), float(exp[3])
            found = [s.value for fam in families.values() for s in fam.samples
                     if s.name == sample and s.labels == want_labels]
            if kind == "value" and found != [want]:
                problems.append(f"{sample}{want_labels}: {found}, want [{want}]")
            if kind == "atleast" and (len(found) != 1 or found[0] < want):
                problems.append(f"{sample}{want_labels}: {found}, want one value >= {want}")
        else:
            problems.append(f"unknown expectation {exp}")
    for p in problems:
        print("metrics:", p)
    print(f"metrics: {len(expectations)} expectations, {len(problems)} problems,"
          f" {len(families)} families parsed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
