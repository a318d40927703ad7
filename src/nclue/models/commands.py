"""CLI: ``nclue model info|export-onnx|distill`` — inspect and prepare local models."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    """Add the ``model`` command group to the ``nclue`` app."""
    model_app = typer.Typer(help="Inspect and prepare local encoder models (nothing is downloaded).", no_args_is_help=True)
    app.add_typer(model_app, name="model")

    @model_app.command("info")
    def info_command(
        model_path: str = typer.Argument("minilm", help="Local sentence-transformers directory, or `minilm` (bundled)."),
    ) -> None:
        """Print a model's identity (name, SHA-256 of its files, index key) and layout.

        Example: nclue model info minilm
        """
        from nclue.models.encoder import resolve_model_path
        from nclue.models.identity import model_identity
        from nclue.models.st_layout import read_layout

        path = resolve_model_path(model_path)
        layout = read_layout(path)
        identity = model_identity(path)
        typer.echo(f"path\t{path}")
        typer.echo(f"name\t{identity.name}")
        typer.echo(f"sha256\t{identity.sha256}")
        typer.echo(f"key\t{identity.key}")
        typer.echo(f"pooling\t{layout.pooling}")
        typer.echo(f"normalize\t{str(layout.normalize).lower()}")
        typer.echo(f"max_seq_length\t{layout.max_seq_length}")

    @model_app.command("export-onnx")
    def export_command(
        model_path: str = typer.Argument("minilm", help="Local sentence-transformers directory, or `minilm` (bundled)."),
        out: Path = typer.Option(None, "--out", help="Export cache directory (default: $NCLUE_CACHE/models/onnx)."),
        int8: bool = typer.Option(False, "--int8", help="Also quantise the weights to int8 (dynamic quantisation)."),
    ) -> None:
        """Export the model's transformer to ONNX (cached by the model's SHA-256); print the directory.

        Example: nclue model export-onnx minilm --int8
        """
        from nclue.models.encoder import resolve_model_path
        from nclue.models.identity import cache_dir
        from nclue.models.onnx_export import export_onnx

        typer.echo(str(export_onnx(resolve_model_path(model_path), out or cache_dir() / "onnx", quantize_int8=int8)))

    @model_app.command("distill")
    def distill_command(
        model_path: str = typer.Argument("minilm", help="Local sentence-transformers directory, or `minilm` (bundled)."),
        dims: int = typer.Option(256, "--dims", help="PCA dimensions of the static vectors."),
    ) -> None:
        """Distil a static model2vec encoder from the model (cached); print its directory.

        Example: nclue model distill minilm --dims 256
        """
        from nclue.models.encoder import resolve_model_path
        from nclue.models.static import distill_static

        typer.echo(str(distill_static(resolve_model_path(model_path), pca_dims=dims)))
