"""One dense index per collection unless asked; the plain ``dense`` always names one (issue 24, item 6)."""

from __future__ import annotations

import pytest

from nclue.index.dense import default_dense_index, list_dense_indexes
from nclue.index.tokens import token_dir


@pytest.mark.slow
def test_a_second_backend_replaces_the_first_unless_asked(tiny_indexed, cli) -> None:  # noqa: ANN001
    """The tour's sequence: the default index, then `--dense minilm --dense-backend onnx`."""
    from nclue.systems.registry import Workspace

    (first,) = list_dense_indexes(tiny_indexed)
    done = cli("index", tiny_indexed, "--dense", "minilm", "--dense-backend", "onnx", "--tokens")
    assert done.exit_code == 0, done.output
    (second,) = list_dense_indexes(tiny_indexed)
    assert second.name != first.name and second.name.endswith("-onnx")
    assert f"replaced the dense index {first.name}" in done.output and "--add-dense" in done.output
    assert not token_dir(tiny_indexed, first.name).exists() and token_dir(tiny_indexed, second.name).is_dir()
    workspace = Workspace(tiny_indexed)
    assert workspace.backbone("dense").index.key == second.name
    assert workspace.backbone("maxsim").name == "maxsim"  # its token index came with the onnx build

    kept = cli("index", tiny_indexed, "--dense", "minilm", "--dense-backend", "torch-bf16", "--add-dense")
    assert kept.exit_code == 0, kept.output
    assert {d.name for d in list_dense_indexes(tiny_indexed)} == {first.name, second.name}
    assert default_dense_index(tiny_indexed).name == first.name  # the one built last
    workspace = Workspace(tiny_indexed)
    assert workspace.backbone("dense").index.key == first.name
    assert workspace.backbone("dense:onnx").index.key == second.name
    page = workspace.store.texts[5]
    scores = workspace.backbone("dense:onnx").page_scores([page])[0]
    assert scores.argmax() == 5  # the onnx index answers, and finds the page the text came from
