"""System names: a tiny grammar whose values print back to the same text.

Grammar (whitespace around ``(``, ``)``, ``,`` and ``=`` is ignored when parsing; the
canonical form puts one space after each comma and none elsewhere)::

    system   := op | call
    op       := BACKBONE "." WORD [ "(" WORD { "," WORD } ")" ]      bm25.decompose(distinct)
    call     := WORD "(" arg { "," arg } ")"                          rrf(bm25.and, dense.joint)
    arg      := system | WORD | WORD "=" WORD                         rerank(bm25.joint, minilm-cross, pool=100)
    BACKBONE := WORD [ ":" WORD ]                                     dense:e5.joint(ptop3)
    WORD     := [A-Za-z0-9_+-]+

A name holds at most :data:`MAX_SYSTEMS` backbone operations, a call at most
:data:`MAX_ARGUMENTS` arguments and combinators nest at most :data:`MAX_DEPTH` deep: every
operation is built when the name runs (each ``rerank`` arm loads a model), so a long
generated name is refused when parsed instead of exhausting memory.

``@`` is reserved for run names (``system@form``, see :mod:`nclue.matrix.spec`).
:func:`parse_name` and :func:`format_name` are inverse: ``format_name(parse_name(s)) == s``
for every canonical ``s``, and ``parse_name(format_name(x)) == x`` for every value ``x``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from nclue.errors import NclueError

_WORD = r"[A-Za-z0-9_+\-]+"
_TOKEN = re.compile(rf"\s*(?:(?P<word>{_WORD}(?::{_WORD})?(?:\.{_WORD})?)|(?P<punct>[(),=]))\s*")


@dataclass(frozen=True)
class Op:
    """``backbone.op(args)``: a backbone operation (``bm25.decompose(distinct)``)."""

    backbone: str
    op: str
    args: tuple[str, ...] = ()

    @property
    def family(self) -> str:
        """The registry key: the backbone token before any ``:variant``."""
        return self.backbone.split(":", 1)[0]

    @property
    def variant(self) -> str | None:
        """The backbone variant after ``:`` (e.g. a model key), or ``None``."""
        return self.backbone.split(":", 1)[1] if ":" in self.backbone else None


@dataclass(frozen=True)
class Call:
    """``func(arg, ..., key=value, ...)``: a combinator over systems (``rrf``, ``rerank``)."""

    func: str
    args: tuple[Spec | str, ...]
    options: tuple[tuple[str, str], ...] = ()

    def option(self, key: str, default: str | None = None) -> str | None:
        """The value of ``key=value``, or ``default``."""
        return dict(self.options).get(key, default)

    @property
    def systems(self) -> tuple[Spec, ...]:
        """The positional arguments that are systems."""
        return tuple(a for a in self.args if isinstance(a, (Op, Call)))


Spec = Op | Call


def format_name(spec: Spec) -> str:
    """The canonical text of a system name."""
    if isinstance(spec, Op):
        head = f"{spec.backbone}.{spec.op}"
        return f"{head}({', '.join(spec.args)})" if spec.args else head
    parts = [a if isinstance(a, str) else format_name(a) for a in spec.args]
    parts += [f"{k}={v}" for k, v in spec.options]
    return f"{spec.func}({', '.join(parts)})"


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise NclueError(f"system name {text!r}: unexpected character {text[pos]!r} at position {pos + 1}")
        out.append(m.group("word") or m.group("punct"))
        pos = m.end()
    return out


MAX_DEPTH = 16
"""Deepest nesting of combinators a system name may have (``rrf(rrf(...))``)."""
MAX_ARGUMENTS = 16
"""Most arguments (systems, words and ``key=value`` options together) one combinator call may take."""
MAX_SYSTEMS = 16
"""Most backbone operations one system name may hold: each is built, and every ``rerank`` arm loads its own model
(real names hold two or three; a generated name of hundreds of arms once took 20 GB)."""
SHOWN = 60
"""Characters of a long system name quoted in an error message."""


def _shown(text: str) -> str:
    """``text`` quoted for an error message, cut to :data:`SHOWN` characters and an ellipsis when longer."""
    return f"{text[:SHOWN]!r}…" if len(text) > SHOWN else repr(text)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0
        self.n_ops = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            want = f"{expected!r}" if expected else "a name"
            raise NclueError(f"system name {self.text!r}: expected {want}, found {tok!r}")
        self.i += 1
        return tok

    def word(self) -> str:
        tok = self.take()
        if tok in "(),=":
            raise NclueError(f"system name {self.text!r}: expected a name, found {tok!r}")
        return tok

    def system(self) -> Spec:
        head = self.word()
        if "." in head:
            backbone, op = head.split(".", 1)
            args: list[str] = []
            if self.peek() == "(":
                self.take("(")
                args.append(self.plain())
                while self.peek() == ",":
                    self.take(",")
                    args.append(self.plain())
                self.take(")")
            self.n_ops += 1
            return Op(backbone, op, tuple(args))
        if ":" in head:
            raise NclueError(f"system name {self.text!r}: {head!r} needs an operation, e.g. {head}.joint")
        if self.peek() != "(":
            raise NclueError(
                f"system name {self.text!r}: {head!r} is neither backbone.operation (bm25.joint) nor a call (rrf(A, B))"
            )
        self.take("(")
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise NclueError(
                f"system name {_shown(self.text)}: combinators nested more than {MAX_DEPTH} deep; "
                "flatten it (rrf takes any number of systems: rrf(A, B, C))"
            )
        cargs: list[Spec | str] = []
        options: list[tuple[str, str]] = []
        while True:
            start = self.i
            word = self.word()
            if self.peek() == "=":
                self.take("=")
                options.append((word, self.plain()))
            else:
                if options:
                    raise NclueError(f"system name {self.text!r}: positional argument {word!r} after key=value")
                self.i = start
                cargs.append(self.system() if "." in word or self.toks[start + 1 : start + 2] == ["("] else self.word())
            if self.peek() == ",":
                self.take(",")
                continue
            self.take(")")
            self.depth -= 1
            self.check_width(head, len(cargs) + len(options))
            return Call(head, tuple(cargs), tuple(options))

    def check_width(self, head: str, n_args: int) -> None:
        """Refuse a call ``head(...)`` with more than :data:`MAX_ARGUMENTS` arguments."""
        if n_args > MAX_ARGUMENTS:
            raise NclueError(
                f"system name {_shown(self.text)}: {head}(...) has {n_args} arguments, more than {MAX_ARGUMENTS}; "
                f"give at most {MAX_ARGUMENTS} (run further systems under names of their own)"
            )

    def check_size(self) -> None:
        """Refuse a name holding more than :data:`MAX_SYSTEMS` backbone operations."""
        if self.n_ops > MAX_SYSTEMS:
            raise NclueError(
                f"system name {_shown(self.text)}: {self.n_ops} backbone operations, more than {MAX_SYSTEMS} "
                f"(each is built; each rerank arm loads its own model); use at most {MAX_SYSTEMS} in one name "
                "(run further systems under names of their own)"
            )

    def plain(self) -> str:
        word = self.word()
        if "." in word or ":" in word:
            raise NclueError(f"system name {self.text!r}: argument {word!r} must be a plain word")
        return word


def parse_name(text: str) -> Spec:
    """Parse a system name; raise :class:`NclueError` pointing at the problem."""
    if not text or not text.strip():
        raise NclueError("empty system name; e.g. bm25.decompose(distinct)")
    parser = _Parser(text)
    spec = parser.system()
    if parser.peek() is not None:
        raise NclueError(f"system name {text!r}: unexpected {parser.peek()!r} after the end of {format_name(spec)}")
    parser.check_size()
    return spec


def canonical(text: str) -> str:
    """The canonical spelling of a system name (``rrf(a,b)`` → ``rrf(a, b)``)."""
    return format_name(parse_name(text))


EXAMPLES: tuple[str, ...] = (  # what `did you mean` hints and --help offer
    "bm25.joint",
    "bm25.and",
    "bm25.and_tuned",
    "bm25.or",
    "bm25.condition_text",
    "bm25.page_max",
    "bm25.ptop3",
    "bm25.joint(max)",
    "bm25.joint(ptop3)",
    "bm25.decompose(min)",
    "bm25.decompose(product)",
    "bm25.decompose(hmean)",
    "bm25.decompose(distinct)",
    "bm25.cover",
    "bm25.cover(terms)",
    "dense.joint(max)",
    "dense.joint(ptop3)",
    "dense.decompose(distinct)",
    "rrf(bm25.and, bm25.decompose(distinct))",
    "rerank(bm25.joint, minilm-cross, pool=100)",
    "rerank(bm25.joint, minilm, pool=100, pages=best)",
    "rerank(bm25.decompose(distinct), cross:ms-marco-MiniLM-L6-v2, pool=100, pages=evidence)",
    "rerank(bm25.joint, llm:gpt-4o-mini, pool=100, pages=best)",
)


def suggest(name: str) -> str:
    """A ``did you mean`` hint for an unknown system name (empty when nothing is close)."""
    close = difflib.get_close_matches(name, EXAMPLES, n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else f"; known systems include {', '.join(EXAMPLES[:6])}, ..."
