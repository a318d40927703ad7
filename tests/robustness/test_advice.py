"""Every ``nclue …`` command that nclue's source suggests (in an error's advice or a docstring)
names a real command, real options and valid choices: each is parsed by the real CLI parser."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer

SRC = Path(__file__).resolve().parents[2] / "src" / "nclue"
SUGGESTED = re.compile(r"`(nclue [^`\n]{1,300})`")
PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def suggested_commands() -> list[tuple[str, str]]:
    """``(file:line, command)`` for every backticked ``nclue …`` command in the source; a word
    listing alternatives (``info|export-onnx|distill``) gives one command per alternative."""
    out = []
    for path in sorted(SRC.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for command in SUGGESTED.findall(line):
                words = command.split(" ")
                choice = next((i for i, w in enumerate(words[:3]) if "|" in w and not w.startswith("-")), None)
                options = words[choice].split("|") if choice is not None else [None]
                for option in options:
                    text = command if option is None else " ".join([*words[:choice], option, *words[choice + 1 :]])
                    out.append((f"{path.relative_to(SRC.parent)}:{number}", text))
    return out


def parse(words: list[str]) -> str:
    """Parse ``words`` (after ``nclue``) down the command tree; raises the parser's usage errors
    for an unknown command, an unknown option or an invalid choice. Returns the command's path.

    typer ships its own copy of click, so the tree is walked by duck typing (a group has
    ``resolve_command``) and its exceptions are told apart by class name."""
    from nclue.cli import app

    command = typer.main.get_command(app)
    ctx = command.make_context("nclue", list(words), resilient_parsing=False)
    path = ["nclue"]
    while hasattr(command, "resolve_command"):
        # the subcommand's name sits in protected_args (``_protected_args`` in typer's click copy)
        protected = getattr(ctx, "_protected_args", None) or getattr(ctx, "protected_args", None) or []
        rest = [*protected, *ctx.args]
        if not rest or rest[0] == "X":
            break  # no subcommand named, or a placeholder for one ("nclue audit …")
        name, command, remaining = command.resolve_command(ctx, rest)
        path.append(name)
        ctx = command.make_context(name, remaining, parent=ctx)
    return " ".join(path)


def words_of(command: str) -> list[str] | None:
    """The words after ``nclue``, placeholders (``{base}``) and ellipses made plain arguments."""
    text = PLACEHOLDER.sub("X", command).replace("…", "X").replace("...", "X")
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    return words[1:]


COMMANDS = suggested_commands()


def test_the_source_suggests_commands() -> None:
    assert len(COMMANDS) >= 50  # the scan finds the advice (81 on 2026-12-02)


@pytest.mark.parametrize(("where", "command"), COMMANDS, ids=[f"{w} {c}" for w, c in COMMANDS])
def test_suggested_command_names_real_flags(where: str, command: str) -> None:
    words = words_of(command)
    if words is None:
        pytest.fail(f"{where}: {command!r} is not a shell line")
    try:
        path = parse(words)
    except Exception as exc:  # noqa: BLE001 - typer's vendored click exceptions, told apart by name
        kind = type(exc).__name__
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        if kind == "Exit":
            return  # --help / --version
        if kind == "NoSuchOption":
            pytest.fail(f"{where}: `{command}` names an option the CLI lacks: {message}")
        if kind == "BadOptionUsage" and "requires an argument" not in message:
            pytest.fail(f"{where}: `{command}`: {message}")
        if kind in ("BadOptionUsage", "NoArgsIsHelpError"):
            return  # an option named without its value, or a group shown its help
        if kind in ("UsageError", "BadParameter", "MissingParameter", "BadArgumentUsage"):
            # arguments left as placeholders may be missing or extra; commands, options and choices may not
            if "No such command" in message or "is not one of" in message or "Invalid value for '--" in message:
                pytest.fail(f"{where}: `{command}`: {message}")
            return
        raise
    assert path.split()[1:] == [w for w in words if not w.startswith("-")][: len(path.split()) - 1], path
