"""Damaged JSON files nclue wrote, and hostile JSON it reads (issue 28, causes 10 and 11): a freeze's
``method.json``, an audit's ``key.jsonl`` and ``*.admin.json``, exports and blocks files nested
200,000 deep. Each is one ``error:`` line naming the file and the fix, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nclue.io import dumps_canonical, sha256_bytes, sha256_file
from tests.audit.simulate import answers, payload_of, write_export
from tests.robustness.robust_helpers import assert_clean
from tests.select.conftest import EXAMPLES, HashingEncoder

DEEP = "[" * 200_000 + "]" * 200_000


@pytest.fixture(scope="module")
def frozen_source(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(task set, freeze folder)``: the example task set frozen with the dense selector (read-only)."""
    from nclue.select.freeze import freeze

    root = tmp_path_factory.mktemp("damaged-freeze")
    shutil.copytree(EXAMPLES, root / "tasks")
    done = freeze(root / "tasks", root / "frz", encoder=HashingEncoder(), selectors=["dense"])
    return root / "tasks", done.path


@pytest.fixture
def frozen(frozen_source: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A private copy of the task set and its freeze, free to damage."""
    tasks, frz = frozen_source
    shutil.copytree(tasks, tmp_path / "tasks")
    shutil.copytree(frz, tmp_path / "frz" / frz.name)
    return tmp_path / "tasks", tmp_path / "frz" / frz.name


def _evaluate(cli, tasks: Path, frz: Path, out: Path):  # noqa: ANN001, ANN202 - the cli fixture and its Result
    return cli("coverage", "evaluate", tasks, frz, "--judgments", tasks / "judgments.jsonl", "-o", out)


def _rehash_method(frz: Path) -> None:
    """Update the manifest to the edited ``method.json``, as a careful hand would (the hashes match)."""
    from nclue.select.freeze import MANIFEST_FILE, METHOD_FILE

    manifest = json.loads((frz / MANIFEST_FILE).read_text())
    manifest["outputs"][METHOD_FILE] = sha256_file(frz / METHOD_FILE)
    manifest["method_sha256"] = sha256_bytes(dumps_canonical(json.loads((frz / METHOD_FILE).read_text())).encode())
    (frz / MANIFEST_FILE).write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("damage", "rehash", "said"),
    [
        ('{"k": 5, "selectors": [', False, "not a complete JSON file"),
        ("[5]", True, "expected a JSON object, got an array"),
    ],
    ids=["truncated", "array"],
)
def test_a_damaged_method_json_is_named(frozen, cli, tmp_path: Path, damage: str, rehash: bool, said: str) -> None:  # noqa: ANN001
    tasks, frz = frozen
    assert _evaluate(cli, tasks, frz, tmp_path / "ok").exit_code == 0
    (frz / "method.json").write_text(damage)
    if rehash:
        _rehash_method(frz)
    done = _evaluate(cli, tasks, frz, tmp_path / "out")
    assert_clean(done, 2, "method.json", said, "re-run `nclue coverage freeze`")


@pytest.fixture(scope="module")
def audit_source(release: Path, indexed_source: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A 6-pair audit of the robustness release, its blind packet and one complete export (read-only)."""
    from nclue.audit.audit_params import SampleParams
    from nclue.audit.packet import build_packet
    from nclue.audit.sample import sample

    root = tmp_path_factory.mktemp("damaged-audit")
    sample(release, root / "audit", SampleParams(pairs=6))
    packet = build_packet(root / "audit", indexed_source, root / "packet.html")
    payload = payload_of(root / "audit", packet.packet_id)
    export = write_export(root / "A.json", payload, "A", answers(payload))
    return {"audit": root / "audit", "packet_id": packet.packet_id, "payload": payload, "export": export}


@pytest.fixture
def audit(audit_source: dict, tmp_path: Path) -> dict:
    """A private copy of the audit directory, free to damage."""
    shutil.copytree(audit_source["audit"], tmp_path / "audit")
    return {**audit_source, "audit": tmp_path / "audit"}


def test_lost_key_rows_name_the_packet_and_items(audit: dict, cli) -> None:  # noqa: ANN001
    key = audit["audit"] / "key.jsonl"
    admin = json.loads((audit["audit"] / "packets" / f"{audit['packet_id']}.admin.json").read_text())
    item = audit["payload"]["items"][0]["id"]
    lost = admin["items"][item]["pair"]
    rows = [line for line in key.read_text().splitlines() if json.loads(line)["pair"] != lost]
    key.write_text("".join(line + "\n" for line in rows))
    done = cli("audit", "score", audit["audit"], audit["export"])
    assert_clean(
        done, 2, "key.jsonl: rows lost", f"item {item} (pair {lost}) of packet {audit['packet_id']} has no key row",
        "cannot be scored", "restore it from a backup",
    )  # fmt: skip


def test_a_deleted_admin_file_says_so(audit: dict, cli) -> None:  # noqa: ANN001
    pid = audit["packet_id"]
    (audit["audit"] / "packets" / f"{pid}.admin.json").unlink()
    done = cli("audit", "score", audit["audit"], audit["export"])
    out = assert_clean(
        done, 2, f"{pid}.admin.json: the administrator file of packet {pid} is missing", "cannot be scored",
        "restore it from a backup",
    )  # fmt: skip
    assert "no packet" not in out


def test_a_deeply_nested_export_is_one_line(audit_source: dict, cli, tmp_path: Path) -> None:  # noqa: ANN001
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    done = cli("audit", "score", audit_source["audit"], deep)
    assert_clean(done, 2, "deep.json", "nested too deeply", "export it again from the packet")


def test_a_deeply_nested_blocks_file_is_one_line(release: Path, run_file: Path, cli, tmp_path: Path) -> None:  # noqa: ANN001
    deep = tmp_path / "blocks.json"
    deep.write_text(DEEP)
    other = tmp_path / "other.jsonl"
    rows = [json.loads(line) for line in run_file.read_text().splitlines() if line.strip()]
    other.write_text("".join(json.dumps({**row, "run": "other"}) + "\n" for row in rows))
    done = cli("compare", release, run_file, other, "--blocks", deep, "--draws", 10, "--bootstrap", 10)
    assert_clean(done, 2, "blocks.json", "nested too deeply", "blocks file")


def _hostile_json(tmp_path: Path) -> dict[str, Path]:
    """A folder where a file is expected, a truncated file, NaN, and 200,000-deep nesting."""
    files = {"folder": tmp_path / "folder.json", "truncated": tmp_path / "cut.json", "nan": tmp_path / "nan.json"}
    files["folder"].mkdir()
    files["truncated"].write_text('{"conditions": {')
    files["nan"].write_text('{"conditions": NaN}')
    files["deep"] = tmp_path / "deep.json"
    files["deep"].write_text(DEEP)
    return files


HOSTILE_SAID = {
    "folder": "cannot read",
    "truncated": "not a complete",
    "nan": "NaN is not a valid number",
    "deep": "nested too deeply",
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_SAID))
def test_user_json_files_are_read_by_the_one_reader(tmp_path: Path, kind: str) -> None:
    """``--rubric``, adjudication ``--overrides``, a calibration file and a report's ``frozen.json``
    gave ``IsADirectoryError`` or ``RecursionError`` tracebacks before they used ``nclue.io.read_json``."""
    from nclue.audit.adjudicate import _read_overrides
    from nclue.audit.rubric import load_overrides
    from nclue.errors import NclueError
    from nclue.evidence.model import Calibration
    from nclue.report.reproduce import verify

    path = _hostile_json(tmp_path)[kind]
    report = tmp_path / "report"
    report.mkdir()
    frozen = report / "frozen.json"
    if kind == "folder":
        frozen.mkdir()
    else:
        frozen.write_bytes(path.read_bytes())
    readers = {
        "rubric": (lambda: load_overrides(path), 'write {"conditions"'),
        "overrides": (lambda: _read_overrides(path), 'write {"overrides"'),
        "calibration": (lambda: Calibration.load(path), "nclue evidence fit"),
        "frozen": (lambda: verify(tmp_path, tmp_path, report), "`nclue report"),
    }
    folder_said = {"calibration": "calibration file not found", "frozen": "nothing frozen here"}
    for name, (read, fix) in readers.items():
        said = folder_said.get(name, HOSTILE_SAID[kind]) if kind == "folder" else HOSTILE_SAID[kind]
        with pytest.raises(NclueError) as caught:
            read()
        message = str(caught.value)
        assert "\n" not in message and said in message and fix in message, (name, message)


@pytest.mark.parametrize(
    ("content", "named"),
    [("{", "not a complete ONNX export record"), (DEEP, "nested too deeply"), ('{"quantized": true}', "'model'")],
)
def test_damaged_onnx_export_record_is_named(tmp_path: Path, content: str, named: str) -> None:
    """A user's ONNX export folder with a truncated, deep or identity-less record: one NclueError
    naming the record and the fix (before: JSONDecodeError, RecursionError, KeyError)."""
    from nclue.errors import NclueError
    from nclue.models.onnx_encoder import OnnxMeanPoolEncoder
    from nclue.models.onnx_export import META_FILE

    (tmp_path / META_FILE).write_text(content, encoding="utf-8")
    with pytest.raises(NclueError) as caught:
        OnnxMeanPoolEncoder(tmp_path)
    message = str(caught.value)
    assert META_FILE in message and named in message and "export_onnx()" in message


def test_damaged_structure_stamp_rebuilds_parts() -> None:
    """A half-written ``stamp.json`` in the structure parts folder reads as no stamp (the parts are
    rebuilt), not as a JSONDecodeError mid-ingest."""
    import tempfile

    from nclue.corpus.structure import _stamp

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stamp.json"
        path.write_text('{"pages_sha256": "ab', encoding="utf-8")
        assert _stamp(path) is None
        path.write_text(DEEP, encoding="utf-8")
        assert _stamp(path) is None
        path.write_text('{"format_version": 3}', encoding="utf-8")
        assert _stamp(path) == {"format_version": 3}
