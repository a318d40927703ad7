"""``nclue model info|export-onnx|distill`` — inspect and prepare local models (nothing is downloaded)."""

from __future__ import annotations

from pathlib import Path

import typer

model_app = typer.Typer(
    help="Inspect and prepare local encoder models (nothing is downloaded).\n\nExample: nclue model info minilm",
    no_args_is_help=True,
)
MODEL_ARG = "Local sentence-transformers directory, or `minilm` (bundled)."


def info(model_path: str = typer.Argument("minilm", help=MODEL_ARG)) -> None:
    """Print a model's identity (name, SHA-256 of its files, index key) and layout.

    Example: nclue model info minilm
    """
    from nclue.models.encoder import resolve_model_path
    from nclue.models.identity import model_identity
    from nclue.models.st_layout import read_layout

    path = resolve_model_path(model_path)
    layout = read_layout(path)
    identity = model_identity(path)
    for key, value in (
        ("path", path),
        ("name", identity.name),
        ("sha256", identity.sha256),
        ("key", identity.key),
        ("pooling", layout.pooling),
        ("normalize", str(layout.normalize).lower()),
        ("max_seq_length", layout.max_seq_length),
    ):
        typer.echo(f"{key}\t{value}")


def export_onnx(
    model_path: str = typer.Argument("minilm", help=MODEL_ARG),
    out: Path = typer.Option(None, "--out", help="Export cache directory (default: $NCLUE_CACHE/models/onnx)."),
    int8: bool = typer.Option(False, "--int8", help="Also quantise the weights to int8 (dynamic quantisation)."),
) -> None:
    """Export the model's transformer to ONNX (cached by the model's SHA-256); print the directory.

    Example: nclue model export-onnx minilm --int8
    """
    from nclue.models.encoder import resolve_model_path
    from nclue.models.identity import cache_dir
    from nclue.models.onnx_export import export_onnx as export

    typer.echo(str(export(resolve_model_path(model_path), out or cache_dir() / "onnx", quantize_int8=int8)))


def distill(
    model_path: str = typer.Argument("minilm", help=MODEL_ARG),
    dims: int = typer.Option(256, "--dims", min=1, help="PCA dimensions of the static vectors."),
) -> None:
    """Distil a static model2vec encoder from the model (cached); print its directory.

    Example: nclue model distill minilm --dims 256
    """
    from nclue.models.encoder import resolve_model_path
    from nclue.models.static import distill_static

    typer.echo(str(distill_static(resolve_model_path(model_path), pca_dims=dims)))


model_app.command("info")(info)
model_app.command("export-onnx")(export_onnx)
model_app.command("distill")(distill)


def register(app: typer.Typer) -> None:
    """Add the ``model`` group."""
    app.add_typer(model_app, name="model")
