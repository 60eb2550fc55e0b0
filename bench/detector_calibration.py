"""Whether the detector's p-values are calibrated on null series (issue 28): per noise family,
metric and arm, the share of evaluations whose p-value falls under 0.0005, 0.005 and 0.05
(nominal: those levels, less where an arm's p-value carries a multiplicity factor) and the
spread of the arm's z (estimate / standard error; 1 when the standard error is right).

Runs the real detector (alerts.detection.detector.assess_together, no alert ever opened: every
evaluation is against a freshly fitted baseline) after every run of null pairs from
bench/detector_generators.py's tuning families (or, with --held, issue 28's held-out ones).

    python bench/detector_calibration.py [--pairs 20] [--days 60] [--seed 7] [--held]
                                         [--family NAME] [--set field=value ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokspeed.settings")

import django  # noqa: E402

django.setup()

import detector_generators as generators  # noqa: E402
import detector_heldout as heldout  # noqa: E402
from detector_generators import EPOCH_S, FAMILIES  # noqa: E402

from alerts.config import detector_config  # noqa: E402
from alerts.detection.detector import SeriesInput, assess_together  # noqa: E402
from alerts.detection.rules import DECODE, TTFT, DetectorConfig  # noqa: E402
from alerts.detection.runs import Runs  # noqa: E402

METRICS = (DECODE, TTFT)
LEVELS = (0.0005, 0.005, 0.05)
AGES = ((0, 7), (7, 14), (14, 21), (21, 29))


def arm_kind(name: str) -> str:
    """An arm's name without its slot's hours (every slot arm is one kind)."""
    return "slot" if name.startswith("slot") else name


def null_evaluations(pair, config: DetectorConfig):
    """(metric, arm kind, p-value, z, baseline days) of every arm at every run of one pair."""
    seconds = np.round(pair.hours * 3600) + pair.truth.get("epoch_s", EPOCH_S)
    histories = [
        Runs.from_samples(values.ravel(), np.repeat(seconds, values.shape[1]))
        for values in (pair.decode, pair.ttft)
    ]
    for now in seconds:
        items = [
            SeriesInput(h.between(-np.inf, now), config.rules[m])
            for h, m in zip(histories, METRICS, strict=True)
        ]
        for metric, test in zip(
            METRICS, assess_together(items, now=now, config=config), strict=True
        ):
            if not test.enough:
                continue
            age = (test.baseline.end - test.baseline.start) / 86_400.0
            for arm in test.arms:
                z = arm.shift / arm.sd if arm.sd > 0 else 0.0
                yield metric, arm_kind(arm.name), arm.p_value, z, age
            yield metric, "smallest", min(a.p_value for a in test.arms), 0.0, age


def _config(overrides: list[str]) -> DetectorConfig:
    """The settings' detector configuration with `field=value` overrides."""
    config = detector_config()
    for item in overrides:
        key, value = item.split("=", 1)
        kind = type(getattr(config, key))
        parsed = value == "1" if kind is bool else kind(float(value))
        config = dataclasses.replace(config, **{key: parsed})
    return config


def _family_rows(family, gen, args, config: DetectorConfig) -> dict:
    """(metric, arm kind) → [(p-value, z, baseline days)] over the family's null pairs."""
    index = FAMILIES.index(family) if family in FAMILIES else 100 + heldout.HELD.index(family)
    rng = np.random.default_rng([args.seed, index])
    rows: dict = defaultdict(list)
    for _ in range(args.pairs):
        pair = gen.make_pair(rng, family, days=args.days)
        for metric, kind, p, z, age in null_evaluations(pair, config):
            rows[(metric, kind)].append((p, z, age))
    return rows


def _arm_line(name: str, metric: str, kind: str, values) -> str:
    v = np.array(values)
    young = v[v[:, 2] < 14, 1]
    shares = " | ".join(f"{np.mean(v[:, 0] < level):.4f}" for level in LEVELS)
    sd_young = f"{np.std(young):.2f} (n={len(young)})" if len(young) > 20 else "–"
    return (
        f"| {name} | {metric} | {kind} | {len(v)} | {shares} | {np.std(v[:, 1]):.2f} | {sd_young} |"
    )


def _age_line(name: str, metric: str, values) -> str:
    v = np.array(values)
    cells = []
    for lo, hi in AGES:
        p = v[(v[:, 2] >= lo) & (v[:, 2] < hi), 0]
        cells.append(f"{np.mean(p < 0.0005):.4f} / {np.mean(p < 0.005):.4f} (n={len(p)})")
    return f"| {name} | {metric} | " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--held", action="store_true", help="issue 28's held-out families")
    parser.add_argument("--family", default="")
    parser.add_argument("--set", nargs="*", default=[], help="override a DetectorConfig field")
    args = parser.parse_args()
    config = _config(args.set)
    if args.held:
        families, gen = heldout.HELD, heldout
    else:
        families, gen = [f for f in FAMILIES if f.tune], generators
    families = [f for f in families if args.family in f.name]
    print(f"seed {args.seed}, {args.pairs} null pairs a family, {args.days} days; {args.set}")
    print("| family | metric | arm | evals | p<0.0005 | p<0.005 | p<0.05 | sd(z) | sd(z) < 14 d |")
    print("|---|---|---|---|---|---|---|---|---|")
    ages = []
    for family in families:
        rows = _family_rows(family, gen, args, config)
        for (metric, kind), values in sorted(rows.items()):
            print(_arm_line(family.name, metric, kind, values))
        ages.extend(_age_line(family.name, m, rows[(m, "smallest")]) for m in METRICS)
        sys.stdout.flush()
    print("\nsmallest p of an evaluation under 0.0005 / 0.005, by the baseline's age (days)\n")
    print("| family | metric | " + " | ".join(f"{lo}-{hi} d" for lo, hi in AGES) + " |")
    print("|---|---|" + "---|" * len(AGES))
    print("\n".join(ages))


if __name__ == "__main__":
    main()
