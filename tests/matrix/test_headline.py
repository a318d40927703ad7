"""The matrix spec's ``[headline]``: parsed and checked, written into ``matrix.json``, read back as ``RunSet.headline``.

Table S1i's pair used to be two system names fixed in ``nclue.report.paper``; it is now the spec's
``[headline]`` pair, and a folder whose manifest predates the key keeps that old pair.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nclue.errors import NclueError
from nclue.matrix.runset import MANIFEST, RunSet
from nclue.matrix.spec import load_matrix

FUSION = "rrf(bm25.and, dense.joint(ptop3))"
SPEC = """
{headline}
[[run]]
system = "bm25.and"

[[run]]
system = "bm25.joint"

[[contrast]]
name = "Pooling"
base = "bm25.joint"
variants = ["bm25.and"]
"""


def _spec(tmp_path: Path, headline: str) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(SPEC.format(headline=headline), encoding="utf-8")
    return path


def test_spec_headline_is_a_pair_of_its_runs(tmp_path: Path) -> None:
    spec = load_matrix(_spec(tmp_path, '[headline]\nbase = "bm25.and"\nvariant = "bm25.joint"\n'))
    assert spec.headline == ("bm25.and", "bm25.joint")
    assert [c.name for c in spec.contrasts] == ["Pooling"]  # the pair is not added to the tested family
    assert load_matrix(_spec(tmp_path, "")).headline is None


@pytest.mark.parametrize(
    ("headline", "message"),
    [
        ('[headline]\nbase = "bm25.and"\nvariant = "bm25.ptop3"\n', "'bm25.ptop3' is not a run of this matrix"),
        ('[headline]\nbase = "bm25.and"\n', "must be a table with exactly base"),
        ('headline = "Pooling"\n', "must be a table with exactly base"),
        ('[headline]\nbase = "bm25.and"\nvariant = "bm25.and"\n', "base and variant are the same run"),
        ('[headline]\nbase = "bm25.and"\nvariant = 3\n', "'variant' must be a string"),
    ],
)
def test_a_bad_spec_headline_is_refused_naming_the_file(tmp_path: Path, headline: str, message: str) -> None:
    path = _spec(tmp_path, headline)
    with pytest.raises(NclueError, match=message) as err:
        load_matrix(path)
    assert f"{path}: [headline]" in str(err.value)


def test_shipped_specs_name_fusion_minus_bm25_and_keep_their_contrasts() -> None:
    for name, contrasts in ((None, 11), ("shift", 8)):
        spec = load_matrix(name)
        assert spec.headline == ("bm25.and", FUSION), name
        assert len(spec.contrasts) == contrasts, name


def _folder(tmp_path: Path, runs: list[str], **extra: object) -> Path:
    """A run folder whose ``matrix.json`` records ``runs`` and one contrast (and ``extra`` keys)."""
    root = tmp_path / "runs"
    root.mkdir(exist_ok=True)
    manifest = {
        "spec": {"k": 10, "form": "clean_v2"},
        "contrasts": [{"name": "Pooling", "base": "bm25.joint", "variants": ["bm25.and"]}],
        "runs": {n: {"system": n} for n in runs},
        **extra,
    }
    (root / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return root


def test_runset_headline_is_the_pair_the_manifest_records(tmp_path: Path) -> None:
    pair = {"base": "bm25.and", "variant": "bm25.joint"}
    runs = ["bm25.joint", "bm25.and", FUSION]
    assert RunSet.open(_folder(tmp_path, runs, headline=pair)).headline == ("bm25.and", "bm25.joint")
    assert RunSet.open(_folder(tmp_path, runs, headline=None)).headline is None


@pytest.mark.parametrize(
    "recorded",
    ["Pooling", {"base": "bm25.and"}, {"base": "bm25.and", "variant": "bm25.and"}, {"base": 1, "variant": "x"}],
)
def test_runset_refuses_a_damaged_manifest_headline(tmp_path: Path, recorded: object) -> None:
    root = _folder(tmp_path, ["bm25.joint", "bm25.and"], headline=recorded)
    with pytest.raises(NclueError, match=r"matrix\.json: headline .* is not a base and a different variant run"):
        RunSet.open(root)


def test_an_interrupted_matrix_without_the_headline_runs_yet_opens(tmp_path: Path) -> None:
    """The runner records the headline before producing its runs; a folder stopped in between opens."""
    root = _folder(tmp_path, ["bm25.joint"], headline={"base": "bm25.and", "variant": "bm25.joint"})
    assert RunSet.open(root).headline is None


def test_a_manifest_without_the_key_keeps_the_old_pair(tmp_path: Path) -> None:
    assert RunSet.open(_folder(tmp_path, ["bm25.joint", "bm25.and", FUSION])).headline == ("bm25.and", FUSION)
    assert RunSet.open(_folder(tmp_path, ["bm25.joint", "bm25.and"])).headline is None


def test_a_folder_without_a_manifest_keeps_the_old_pair(tmp_path: Path) -> None:
    from nclue.runfile import run_path

    for name in ("bm25.and", FUSION):
        run_path(tmp_path, name).write_text(json.dumps({"qid": "q1", "run": name, "docs": []}) + "\n", encoding="utf-8")
    assert RunSet.open(tmp_path).headline == ("bm25.and", FUSION)
    run_path(tmp_path, FUSION).unlink()
    assert RunSet.open(tmp_path).headline is None
