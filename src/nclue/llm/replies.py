"""The JSON object inside a model's reply.

Models wrap JSON in Markdown code fences or add a sentence around it; :func:`json_object`
strips the fences and parses the span from the first ``{`` to the last ``}``. What the object
must contain is each path's own parser's business (they reject rather than guess).
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


def json_object(reply: str) -> dict[str, Any]:
    """The JSON object of ``reply``; ``ValueError`` says why there is none."""
    body = _FENCE.sub("", reply.strip())
    start, stop = body.find("{"), body.rfind("}")
    if start < 0 or stop < start:
        raise ValueError("no JSON object in the reply")
    try:
        obj = json.loads(body[start : stop + 1])
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"the reply is not JSON ({getattr(exc, 'msg', 'nested too deeply')})") from None
    if not isinstance(obj, dict):
        raise ValueError("the reply's JSON is not an object")
    return obj
