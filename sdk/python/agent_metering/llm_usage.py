"""What the framework integrations send for an LLM call: one ``llm_call`` action whose metadata carries the model,
its provider and the four token counts the service prices a call by, each token in exactly one of them:

- ``input_tokens``: uncached input (cache writes included),
- ``cached_input_tokens``: input read from the provider's prompt cache,
- ``output_tokens``: visible output,
- ``reasoning_tokens``: the reasoning the model did before its output.

Frameworks report input with the cache reads inside it and output with the reasoning inside it (Anthropic's own
usage is the exception: its ``input_tokens`` leave the cache out); these helpers split them, so no token is priced
twice. ``tokens`` stays the call's total, as before.
"""

import math
import sys
from typing import Any, Callable, Dict, Mapping, Optional, Union

Number = Union[int, float]

# Framework names of providers that the service's model prices call otherwise.
_PROVIDER_ALIASES = {
    "google-genai": "google",
    "google_genai": "google",
    "google_vertexai": "google",
    "google-vertex": "google",
    "vertex_ai": "google",
    "vertexai": "google",
    "gemini": "google",
    "mistralai": "mistral",
    "x-ai": "xai",
}


def _count(value: Any) -> Optional[Number]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _get(source: Any, key: str) -> Any:
    """A field of a dict or an attribute of an object (pydantic models, SimpleNamespace)."""
    if source is None:
        return None
    if isinstance(source, Mapping):
        return source.get(key)
    return getattr(source, key, None)


def provider_id(name: Optional[str]) -> Optional[str]:
    """The provider id model prices use: lower case, without an API surface (``openai.chat`` -> ``openai``)."""
    if not isinstance(name, str) or not name:
        return None
    base = name.lower().split(".")[0]
    return _PROVIDER_ALIASES.get(base, base)


def split_tokens(
    input_total: Any = None, output_total: Any = None, cache_read: Any = None, reasoning: Any = None
) -> Dict[str, Number]:
    """The four counts from totals that include their details. Unknown or zero details are left out."""
    counts: Dict[str, Number] = {}
    cached = _count(cache_read)
    thought = _count(reasoning)
    inputs = _count(input_total)
    outputs = _count(output_total)
    if inputs is not None:
        counts["input_tokens"] = max(0, inputs - (cached or 0))
    if outputs is not None:
        counts["output_tokens"] = max(0, outputs - (thought or 0))
    if cached:
        counts["cached_input_tokens"] = cached
    if thought:
        counts["reasoning_tokens"] = thought
    return counts


def add_tokens(a: Dict[str, Number], b: Dict[str, Number]) -> Dict[str, Number]:
    out = dict(a)
    for key, value in b.items():
        out[key] = out.get(key, 0) + value
    return out


def tokens_of_usage(usage: Any) -> Dict[str, Number]:
    """The four counts from a provider's usage as LiteLLM, OpenAI, Anthropic or LangChain report it."""
    if usage is None:
        return {}
    # LangChain usage_metadata: input_tokens/output_tokens with input_token_details/output_token_details.
    if _get(usage, "input_token_details") is not None or _get(usage, "output_token_details") is not None:
        return split_tokens(
            _get(usage, "input_tokens"),
            _get(usage, "output_tokens"),
            _get(_get(usage, "input_token_details"), "cache_read"),
            _get(_get(usage, "output_token_details"), "reasoning"),
        )
    # Anthropic: input_tokens exclude the cache; reads and writes are counted apart.
    if _get(usage, "cache_read_input_tokens") is not None or _get(usage, "cache_creation_input_tokens") is not None:
        uncached = (_count(_get(usage, "input_tokens")) or 0) + (_count(_get(usage, "cache_creation_input_tokens")) or 0)
        cache_read = _count(_get(usage, "cache_read_input_tokens")) or 0
        return split_tokens(uncached + cache_read, _get(usage, "output_tokens"), cache_read)
    # OpenAI and LiteLLM: prompt_tokens and completion_tokens hold their details.
    prompt = _get(usage, "prompt_tokens")
    if prompt is None:
        prompt = _get(usage, "input_tokens")
    completion = _get(usage, "completion_tokens")
    if completion is None:
        completion = _get(usage, "output_tokens")
    cached = _get(_get(usage, "prompt_tokens_details"), "cached_tokens")
    if cached is None:
        cached = _get(usage, "cached_prompt_tokens")
    reasoning = _get(_get(usage, "completion_tokens_details"), "reasoning_tokens")
    if reasoning is None:
        reasoning = _get(usage, "reasoning_tokens")
    return split_tokens(prompt, completion, cached, reasoning)


def llm_call_metadata(
    model: Optional[str],
    provider: Optional[str],
    counts: Dict[str, Number],
    extra: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    metadata: Dict[str, Any] = dict(extra or {})
    if isinstance(model, str) and model:
        metadata["model"] = model
    pid = provider_id(provider)
    if pid is not None:
        metadata["provider"] = pid
    metadata.update(counts)
    if counts:
        metadata["tokens"] = sum(counts.values())
    return metadata


def record_safely(action: Callable[..., None], agent_key: str, type: str, metadata: Dict[str, Any]) -> None:
    """Records an event; never raises into the framework's call (the client's on_error hears of refusals)."""
    try:
        action(agent_key, type, metadata=metadata)
    except Exception as error:  # noqa: BLE001 - metering must not break the agent
        print(f"agent-metering: could not record a {type}: {error!r}", file=sys.stderr)
