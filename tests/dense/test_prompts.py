"""Query and passage prompts: read from the model's sentence-transformers config, overridable,
recorded in the dense index, and applied on both sides (checked against sentence-transformers itself)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nclue.corpus.store import PageStore
from nclue.errors import NclueError
from nclue.index.dense import build_dense_index, dense_settings, open_dense_index
from nclue.index.options import DenseOptions
from nclue.models.encoder import DEFAULT_BACKEND, describe
from nclue.models.identity import bundled_model_path, model_identity
from nclue.models.st_layout import Prompts, config_prompts, resolve_prompts
from nclue.systems.backbone import PageTable
from nclue.systems.dense import DenseBackbone
from tests.dense.handmade import E5_PROMPTS, e5_like, model_copy, write_collection

DOCS = {
    "a.pdf": ["The heat equation describes diffusion in a rod.", "Fourier series solve it on an interval."],
    "b.pdf": ["A sonnet has fourteen lines.", "", "Iambic pentameter sets its rhythm."],
}
QUERY = "how does heat spread"


@pytest.fixture(scope="module")
def e5(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return e5_like(tmp_path_factory.mktemp("models") / "e5-like")


@pytest.fixture(scope="module")
def sentence_transformer(e5: Path):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(e5), device="cpu", local_files_only=True)


@pytest.fixture()
def collection(tmp_path: Path) -> Path:
    return write_collection(tmp_path / "coll", DOCS)


def reference(model, texts: list[str]) -> np.ndarray:
    """sentence-transformers' own normalised embeddings, one text per call (no padding effects)."""
    return np.stack([model.encode([t], normalize_embeddings=True, convert_to_numpy=True)[0] for t in texts])


def test_minilm_declares_no_prompts():
    assert config_prompts(bundled_model_path()) == Prompts("", "")
    assert Prompts().to_json() is None


def test_e5_prompts_are_read(e5):
    assert resolve_prompts(e5) == Prompts(query="query: ", passage="passage: ")


def test_config_key_rules(tmp_path):
    """``document`` before ``passage``; ``default_prompt_name`` fills a side without its own key."""
    both = model_copy(tmp_path / "m1", prompts={"query": "q: ", "passage": "p: ", "document": "d: "})
    assert config_prompts(both) == Prompts("q: ", "d: ")
    instruct = model_copy(tmp_path / "m2", prompts={"query": "Instruct: find\nQuery:", "web": "w: "})
    assert config_prompts(instruct) == Prompts("Instruct: find\nQuery:", "")
    default = model_copy(tmp_path / "m3", prompts={"query": "q: ", "web": "w: "}, default_prompt_name="web")
    assert config_prompts(default) == Prompts("q: ", "w: ")
    bad = model_copy(tmp_path / "m4", prompts={"query": 3})
    with pytest.raises(NclueError, match="'prompts' must map prompt names to strings"):
        config_prompts(bad)


def test_explicit_prompts_win(e5):
    assert resolve_prompts(e5, query="search: ") == Prompts("search: ", "passage: ")
    assert resolve_prompts(e5, query="", passage="") == Prompts("", "")
    assert resolve_prompts(bundled_model_path(), passage="doc: ") == Prompts("", "doc: ")


def test_pooling_without_prompt_tokens_is_refused(tmp_path):
    model = e5_like(tmp_path / "m")
    pooling = model / "1_Pooling" / "config.json"
    pooling.write_text(json.dumps({**json.loads(pooling.read_text()), "include_prompt": False}))
    with pytest.raises(NclueError, match="include_prompt=false"):
        resolve_prompts(model)
    assert resolve_prompts(model, query="", passage="") == Prompts("", "")


def test_index_applies_and_records_the_config_prompts(collection, e5, sentence_transformer):
    path = build_dense_index(collection, DenseOptions(model_path=e5, backend="torch"))
    index = open_dense_index(collection)
    assert index.manifest["prompts"] == E5_PROMPTS
    texts = PageStore.open(collection).texts
    spans = [index.chunks.span(texts, i) for i in range(len(index.chunks))]
    assert index.chunks.texts(texts) == ["passage: " + s for s in spans]
    # independent check: sentence-transformers encoding the prefixed text, and its own prompt_name path
    np.testing.assert_allclose(
        index.vectors, reference(sentence_transformer, ["passage: " + s for s in spans]), atol=1e-5
    )
    by_name = sentence_transformer.encode(spans, prompt_name="passage", normalize_embeddings=True)
    np.testing.assert_allclose(index.vectors, by_name, atol=1e-5)
    unprompted = reference(sentence_transformer, spans)
    assert np.abs(index.vectors - unprompted).max() > 1e-2  # the prompt changes the vectors
    backbone = DenseBackbone(index, PageTable.from_store(PageStore.open(collection)))
    np.testing.assert_allclose(
        backbone.encode([QUERY])[0], reference(sentence_transformer, ["query: " + QUERY])[0], atol=1e-5
    )
    assert path.name.startswith("e5-like-p") and path.name.endswith(f"-{model_identity(e5).sha256[:12]}-torch")


def test_overrides_are_recorded_and_used_at_query_time(collection, e5, sentence_transformer):
    options = DenseOptions(model_path=e5, backend="torch", query_prompt="search: ", passage_prompt="")
    build_dense_index(collection, options)
    index = open_dense_index(collection)
    assert index.manifest["prompts"] == {"query": "search: ", "passage": ""}
    texts = PageStore.open(collection).texts
    np.testing.assert_allclose(index.vectors, reference(sentence_transformer, index.chunks.texts(texts)), atol=1e-5)
    assert index.chunks.prompt == ""
    encoder = index.load_encoder()
    assert describe(encoder)["prompt"] == "search: " and "prompt" not in describe(index.load_encoder(queries=False))
    query = encoder.encode([QUERY])[0]
    np.testing.assert_allclose(query, reference(sentence_transformer, ["search: " + QUERY])[0], atol=1e-5)


def test_prompts_name_the_index(collection, e5):
    """Another prompt is another index: never the old one reused, and no prompt keeps the old name."""
    config = dense_settings(collection, DenseOptions(model_path=e5, backend="torch"))
    other = dense_settings(collection, DenseOptions(model_path=e5, backend="torch", query_prompt="search: "))
    none = dense_settings(collection, DenseOptions(model_path=e5, backend="torch", query_prompt="", passage_prompt=""))
    assert len({config["key"], other["key"], none["key"]}) == 3
    assert none["key"] == f"{model_identity(e5).key}-torch" and "prompts" not in none["settings"]
    assert config["settings"]["prompts"] == E5_PROMPTS


def test_minilm_default_settings_unchanged(collection):
    """The bundled MiniLM without options: the pre-prompt key and manifest fields (no new keys)."""
    wanted = dense_settings(collection, DenseOptions())
    assert wanted["key"] == f"{model_identity(bundled_model_path()).key}-{DEFAULT_BACKEND}"
    assert not {"prompts", "span_pages"} & set(wanted["settings"]) and wanted["settings"]["window"] == 254


def test_window_is_bounded_by_the_model(collection, e5):
    with pytest.raises(NclueError, match=r"--dense-window 3072 exceeds .* leaves 254 tokens per chunk"):
        dense_settings(collection, DenseOptions(window=3072, overlap=256))
    # "passage: " is two word pieces: the default window leaves room for them
    assert dense_settings(collection, DenseOptions(model_path=e5))["settings"]["window"] == 252
    with pytest.raises(NclueError, match="leaves 252 tokens"):
        dense_settings(collection, DenseOptions(model_path=e5, window=254))


def test_cli_prompt_options(collection, e5, cli):
    result = cli(
        "index", collection, "--dense", e5, "--dense-backend", "torch", "--dense-query-prompt", "q: ",
        "--dense-passage-prompt", "",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert open_dense_index(collection).manifest["prompts"] == {"query": "q: ", "passage": ""}
    refused = cli("index", collection, "--dense", "minilm", "--dense-window", "3072", "--dense-overlap", "256")
    assert refused.exit_code != 0 and "254" in refused.output


def test_maxsim_recomputes_pages_without_the_query_prompt(collection, e5, sentence_transformer):
    """Without a token index MaxSim encodes a page's chunks as passages: the query prompt goes on queries only."""
    from nclue.systems.late_interaction import MaxSimBackbone

    build_dense_index(
        collection, DenseOptions(model_path=e5, backend="torch", query_prompt="search: ", passage_prompt="")
    )
    index = open_dense_index(collection)
    backbone = MaxSimBackbone(DenseBackbone(index, PageTable.from_store(PageStore.open(collection))))
    page = PageStore.open(collection).texts[0]
    tokens = sentence_transformer.encode([page], output_value="token_embeddings", convert_to_numpy=True)[0]
    expected = np.asarray(tokens, dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(backbone.page_vectors(0), expected, atol=1e-4)
    query = backbone.encode(QUERY)[1]
    assert len(query) == len(sentence_transformer.tokenize(["search: " + QUERY])["input_ids"][0])
