"""Options every command with an LLM path shares (endpoint format, batch files)."""

from __future__ import annotations

from enum import Enum


class LLMApi(str, Enum):
    """Chat format of the endpoint and of batch request files (``nclue.llm.client.APIS``)."""

    openai = "openai"
    anthropic = "anthropic"
