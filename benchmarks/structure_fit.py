"""Fit the ``struct`` evidence calibration on one benchmark's construction inventory.

The calibration (:func:`nclue.systems.structure.fit_calibration`) is a logistic model of
``P(page establishes condition)`` over the evidence features of ``docs/structure.md#evidence``,
fit on ``RELEASE/inventory.jsonl`` of one or more releases of one collection (every establishing
page of every condition — not the qrels), e.g. its sections and its lexical benchmark. Score it on a *different* corpus only
(``docs/structure.md#circularity``): the shipped ``src/nclue/systems/structure_calibration.json``
was written by

    .venv/bin/python benchmarks/structure_fit.py SHIFT_COLL SHIFT_SECTIONS SHIFT_LEXICAL \
        -o src/nclue/systems/structure_calibration.json

(the ``debian-docs-shift`` collection's sections and lexical benchmarks, both built with seed 11),
and the cross-corpus check's reverse direction by
``benchmarks/structure_fit.py DEV_COLL DEV_SECTIONS DEV_LEXICAL -o SHIFT_COLL/calibration/dev.json``
(then ``struct:dev.cover`` on the shift collection).

Usage: .venv/bin/python benchmarks/structure_fit.py COLLECTION RELEASE [RELEASE ...] -o OUT.json [--seed 11]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from nclue.io import write_json
from nclue.systems.structure import FEATURES, fit_calibration


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collection", type=Path)
    parser.add_argument("releases", type=Path, nargs="+")
    parser.add_argument("-o", "--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    start = time.perf_counter()
    calibration = fit_calibration(args.releases, args.collection, seed=args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, calibration.to_json())
    print(f"fit in {time.perf_counter() - start:.1f} s on {calibration.fit_on}")
    for name, weight in zip(FEATURES, calibration.weights):
        print(f"  {name:>10}: {weight:+.3f}")
    print(f"  {'bias':>10}: {calibration.bias:+.3f}")


if __name__ == "__main__":
    main()
