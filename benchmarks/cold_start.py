"""Cold start of one-shot commands: fresh ``nclue search`` processes against a bare bm25s process.

Run: ``.venv/bin/python benchmarks/cold_start.py COLLECTION [--system bm25.cover] [--repeats 9]``
(the collection needs its lexical index, ``nclue index COLLECTION --lexical``).

Each repeat starts a new interpreter, as a user typing the command does, and times it to exit:

* ``nclue --version`` — the floor of any command (interpreter, entry point, CLI tree);
* ``nclue search COLLECTION QUERY --system SYSTEM -k 5`` — the command measured by issue 27's
  "cold ``nclue search`` ≤ 0.5 s for lexical systems";
* **peer**: a bare ``python -c`` that imports bm25s, loads the collection's stored bm25s document index
  (``index/lexical/docs``) and
  retrieves the query's words (no conditions, no pages, no printing) — what the lexical search
  cannot go below.

Reported: the median and minimum of each over the repeats, the typer version and whether the
search process imported pydantic (typer 0.29 requires it and imports it for every command).
Byte-code is written on the first run (``PYTHONDONTWRITEBYTECODE`` is unset for the children) so
the figures are for a warm disk cache and compiled modules, as a user's second command sees.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

QUERY = '"package"; "module"'
PEER = (
    "import bm25s, sys; r = bm25s.BM25.load(sys.argv[1]); "
    "r.retrieve(bm25s.tokenize([sys.argv[2]], show_progress=False), k=5, show_progress=False)"
)


def timed(command: list[str], env: dict[str, str], repeats: int) -> list[float]:
    """Wall seconds of ``repeats`` fresh runs of ``command`` (after one untimed warm-up run)."""
    first = subprocess.run(command, env=env, capture_output=True, text=True)
    if first.returncode:
        raise SystemExit(f"{' '.join(command)} failed (exit {first.returncode}):\n{first.stderr or first.stdout}")
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True)
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection")
    parser.add_argument("--system", default="bm25.cover")
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"HF_HUB_OFFLINE": "1"}
    nclue = str(Path(sys.executable).with_name("nclue"))
    bm25_dir = Path(args.collection) / "index" / "lexical" / "docs"
    if not (bm25_dir / "params.index.json").is_file():
        parser.error(f"{bm25_dir}: no stored bm25s index; build it with `nclue index {args.collection} --lexical`")
    search = [nclue, "search", args.collection, QUERY, "--system", args.system, "-k", "5"]
    rows = {
        "nclue --version": timed([nclue, "--version"], env, args.repeats),
        f"nclue search --system {args.system}": timed(search, env, args.repeats),
        "peer: bare bm25s load + retrieve": timed(
            [sys.executable, "-c", PEER, str(bm25_dir), "package module"], env, args.repeats
        ),
    }
    trace = subprocess.run([sys.executable, "-X", "importtime", *search], env=env, capture_output=True, text=True)
    pydantic = any(line.rstrip().endswith(" pydantic") for line in trace.stderr.splitlines())
    print(f"load average {os.getloadavg()}; typer {version('typer')}; search imports pydantic: {pydantic}")
    print("| command | median s | min s |")
    print("|---|---|---|")
    for name, values in rows.items():
        print(f"| {name} | {statistics.median(values):.3f} | {min(values):.3f} |")


if __name__ == "__main__":
    main()
