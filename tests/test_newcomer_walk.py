"""A newcomer's walk: the README's first sections run as written, in a shell, on the 12 real fixture PDFs.

Every command of "Start from your PDFs", "Evaluate your own run" and the query-syntax table is
taken from ``README.md`` and run by ``bash`` in a fresh folder holding only ``./my-pdfs`` (and
``my-run.trec``, the user's run), with the installed ``nclue`` on ``PATH``. Along the way the
walk checks what the README promises a newcomer (issue 24): one dense index after
``index --all``, shell-safe run files that carry their system name, coverage said and refused,
standard measures, a report that writes nothing into its inputs and reproduces, and each query
form accepted. The Python section runs in ``tests/test_readme_python.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SAFE = re.compile(r"[A-Za-z0-9_+@][A-Za-z0-9._+@-]*")

pytestmark = pytest.mark.slow


def section(title: str) -> str:
    """The text of the README section ``## title``."""
    text = README.read_text(encoding="utf-8")
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def commands(title: str) -> list[str]:
    """The shell commands of the section's ```bash blocks, continuation lines joined, comments kept out."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", section(title), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                out.append(" ".join(shlex.quote(w) if not any(c in w for c in "*") else w for w in words))
    return out


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "200"}
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file()
    }


def test_the_readme_walk_from_pdfs_to_a_reproduced_report(small_pdf_dir: Path, tmp_path: Path) -> None:
    import shutil

    shutil.copytree(small_pdf_dir, tmp_path / "my-pdfs")
    walk = commands("Start from your PDFs")
    assert [c.split()[1] for c in walk] == [
        "ingest", "collection", "index", "search", "build", "run", "evaluate", "report", "reproduce",
    ]  # fmt: skip
    small_build = re.search(
        r"`(nclue build ./coll -o ./bench --judge embedding --min-df[^`]*)`", section("Start from your PDFs")
    )
    assert small_build, "the README names the build line for a dozen PDFs"
    inputs: dict[str, dict[str, str]] = {}
    for command in walk:
        verb = command.split()[1]
        if verb == "report":
            inputs = {name: tree(tmp_path / name) for name in ("bench", "runs")}
        done = shell(command, tmp_path)
        if verb == "build":  # twelve documents hold too few rare conjunctions: the README says so, and what to run
            assert done.returncode != 0 and "no valid conjunction" in done.stderr + done.stdout
            assert "relax --max-golds or --min-df, or add documents" in done.stderr + done.stdout
            done = shell(small_build[1], tmp_path)
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        if verb == "index":
            assert len([d for d in (tmp_path / "coll" / "index" / "dense").iterdir() if d.is_dir()]) == 1
        if verb == "search":
            assert "line numbering" in done.stdout and "footnotes" in done.stdout
        if verb == "run":
            manifest = json.loads((tmp_path / "runs" / "matrix.json").read_text())
            for name, entry in manifest["runs"].items():
                assert all(SAFE.fullmatch(f) for f in entry["files"]), entry["files"]
                jsonl = next(f for f in entry["files"] if f.endswith(".jsonl"))
                first = json.loads((tmp_path / "runs" / jsonl).read_text().splitlines()[0])
                assert first["run"] == name
        if verb == "evaluate":
            assert "| bm25.and |" in done.stdout and "rrf(bm25.and, dense.joint(ptop3))" in done.stdout
    assert {name: tree(tmp_path / name) for name in ("bench", "runs")} == inputs  # the report read, never wrote
    assert (tmp_path / "report" / "frozen.json").is_file() and (tmp_path / "report" / "index.html").is_file()

    # "Evaluate your own run": the user's run is a TREC file of their own, tagged their way
    rows = [json.loads(line) for line in (tmp_path / "runs" / "bm25.cover.jsonl").read_text().splitlines()]
    lines = [
        f"{r['qid']} Q0 {d['doc_id']} {i} {d['score']} mine\n" for r in rows for i, d in enumerate(r["docs"], start=1)
    ]
    (tmp_path / "my-run.trec").write_text("".join(lines))
    for command in commands("Evaluate your own run"):
        done = shell(command, tmp_path)
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        if " -m " in command:
            assert all(m in done.stdout for m in ("nDCG@10", "AP", "R@100"))
        assert "my-run" in done.stdout or "my-run" in done.stderr
    # ... and the same run answering half the queries is said to, then refused with --strict
    half = {r["qid"] for r in rows[: len(rows) // 2]}
    (tmp_path / "half.trec").write_text("".join(line for line in lines if line.split()[0] in half))
    said = shell("nclue evaluate ./bench half.trec", tmp_path)
    assert said.returncode == 0 and f"answers {len(half)} of {len(rows)} queries" in said.stdout + said.stderr
    refused = shell("nclue evaluate ./bench half.trec --strict", tmp_path)
    assert refused.returncode != 0 and f"answers {len(half)} of {len(rows)} queries" in refused.stdout + refused.stderr

    # the query-syntax table: every form it shows is accepted by `nclue search`
    table = [m for m in re.findall(r"^\| `(.+?)` \|", section("Query syntax"), re.M)]
    assert len(table) == 4
    for typed in table:
        done = shell(f"nclue search ./coll {typed} -k 3", tmp_path)
        assert done.returncode == 0, f"{typed}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        if not typed.startswith(("'", "--")):
            assert "conditions split from the sentence" in done.stderr
