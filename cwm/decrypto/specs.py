"""Agent specs: the strings that name a player on the command line and in results.

- ``embed`` or ``embed:k=16,smart=0,wary=0,assignment=greedy,vocab=30000,vectors=glove50``: the embedding
  baseline of the role (:mod:`cwm.decrypto.baselines`); options a role does not use are refused. ``vectors``
  is ``glove50`` (the packaged GloVe 6B 50d) or the path of a text vector file. ``embed:paper`` is Alice in
  the published benchmark's configuration (``k=16,smart=1,wary=0``); the default Alice (``wary=1``) is cwm's
  own variant, and :func:`configuration` says which is which in every report.
- ``llm:SPEC``: an LLM through ``cwm.llm.make_client(SPEC)`` (``llm:gemini``, ``llm:openai:MODEL``,
  ``llm:replay:FILE``).
- ``human``: a person at this terminal (:mod:`cwm.decrypto.human`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from cwm.decrypto.baselines import EmbedAlice, EmbedBob, EmbedEve
from cwm.decrypto.embeddings import GLOVE_NAME
from cwm.decrypto.llm_agents import LLMAgent
from cwm.decrypto.types import DecryptoError

EMBED_OPTIONS = {"alice": {"k", "smart", "wary", "tries", "vocab", "vectors"},
                 "bob": {"assignment", "vocab", "vectors"}, "eve": {"assignment", "vocab", "vectors"}}
ALICE_DEFAULTS = {"k": 256, "smart": True, "wary": True}  # EmbedAlice's defaults: cwm's wary variant
PAPER_ALICE = {"k": 16, "smart": True, "wary": False}  # the published benchmark's embedding encoder
PRESETS = {"alice": {"paper": PAPER_ALICE}, "bob": {}, "eve": {}}
_FLAGS = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}


@dataclasses.dataclass(frozen=True)
class AgentSpec:
    """A parsed spec: its kind (``embed``, ``llm``, ``human``), the raw text and its options."""

    kind: str
    text: str
    options: dict[str, Any]
    llm: str = ""


def parse_spec(text: str, role: str) -> AgentSpec:
    """Reads one spec for ``role``.

    Raises:
      DecryptoError: unknown kind, unknown or malformed option (names the spec and what is allowed).
    """
    kind, _, rest = text.strip().partition(":")
    if kind == "human" and not rest:
        return AgentSpec("human", text, {})
    if kind == "llm":
        if not rest:
            raise DecryptoError(f"agent spec {text!r}: say which LLM, e.g. 'llm:gemini'")
        return AgentSpec("llm", text, {}, llm=rest)
    if kind != "embed":
        raise DecryptoError(f"agent spec {text!r}: expected 'embed[:OPTIONS]', 'llm:SPEC' or 'human'")
    return AgentSpec("embed", text, _embed_options(text, rest, role))


def _embed_options(text: str, rest: str, role: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        if item in PRESETS[role]:
            options |= PRESETS[role][item]
            continue
        key, eq, value = item.partition("=")
        if not eq or key not in EMBED_OPTIONS[role]:
            raise DecryptoError(f"agent spec {text!r}: {item!r} is not an option of the {role} baseline; "
                                f"it takes {sorted(EMBED_OPTIONS[role])} as key=value"
                                + (f" and the presets {sorted(PRESETS[role])}" if PRESETS[role] else ""))
        options[key] = _value(text, key, value)
    return options


def _value(text: str, key: str, value: str) -> Any:
    if key in ("smart", "wary"):
        if value.lower() not in _FLAGS:
            raise DecryptoError(f"agent spec {text!r}: {key} must be 0 or 1, got {value!r}")
        return _FLAGS[value.lower()]
    if key == "assignment":
        return value
    if key == "vectors":
        if not value or not value.isprintable():
            raise DecryptoError(f"agent spec {text!r}: vectors must be 'glove50' or a vector file's path")
        return value
    try:
        number = int(value)
    except ValueError:
        raise DecryptoError(f"agent spec {text!r}: {key} must be a whole number, got {value!r}") from None
    if number < 1:
        raise DecryptoError(f"agent spec {text!r}: {key} must be >= 1, got {number}")
    return number


def build_agent(spec: AgentSpec, role: str, *, embedding: Callable[[int, str], Any],
                llm_client: Callable[[str], Any] | None = None, human: Callable[[str], Any] | None = None,
                llm_options: dict[str, Any] | None = None) -> Any:
    """The agent a spec names.

    Args:
      spec: from :func:`parse_spec`.
      role: the role it plays.
      embedding: ``embedding(vocab_size, vectors)`` gives the embedding for ``embed`` agents (``vocab_size``
        0 for the default, ``vectors`` ``glove50`` or a vector file's path).
      llm_client: ``llm_client(llm_spec)`` gives a ``cwm.llm.Client`` for ``llm`` agents.
      human: ``human(role)`` gives the terminal player.
      llm_options: keyword arguments for :class:`~cwm.decrypto.llm_agents.LLMAgent`.
    """
    if spec.kind == "human":
        if human is None:
            raise DecryptoError("a human player needs an interactive terminal: use `cwm decrypto play`")
        return human(role)
    if spec.kind == "llm":
        if llm_client is None:
            raise DecryptoError(f"agent spec {spec.text!r}: no LLM client factory was given")
        return LLMAgent(llm_client(spec.llm), role, name=spec.text, **(llm_options or {}))
    options = dict(spec.options)
    vectors = embedding(options.pop("vocab", None) or 0, options.pop("vectors", GLOVE_NAME))
    cls = {"alice": EmbedAlice, "bob": EmbedBob, "eve": EmbedEve}[role]
    return cls(vectors, name=spec.text, **options)


def configuration(text: str, role: str) -> str:
    """Whose configuration a spec plays, for reports: the published benchmark's baseline or cwm's variant, and
    on which vectors (the packaged GloVe 6B 50d is not the paper's: it used GloVe 840B-300d and word2vec).

    The published embedding encoder draws among the 16 nearest hint words, keeping those nearer their own
    keyword (``embed:paper``); ``wary`` (Alice redrawing while the embedding Eve she faces would intercept)
    is cwm's addition, not the paper's. The published decoders and interceptors match by global assignment.
    """
    spec = parse_spec(text, role)
    if spec.kind != "embed":
        return {"llm": f"LLM ({spec.llm})", "human": "a person"}[spec.kind]
    options = spec.options
    vectors = options.get("vectors", GLOVE_NAME)
    # the configuration can be the paper's, the vectors never are
    on = ("GloVe 6B 50d, not the paper's GloVe 840B-300d or word2vec vectors" if vectors == GLOVE_NAME
          else f"vectors {vectors}")
    if role != "alice":
        how = options.get("assignment", "global")
        whose = "the paper's configuration of the" if how == "global" else "cwm's greedy variant of the paper's"
        return f"{whose} embedding {role} ({how} assignment), on {on}"
    settings = ALICE_DEFAULTS | {k: options[k] for k in ALICE_DEFAULTS if k in options}
    smart = ", smart" if settings["smart"] else ", not smart"
    if settings["wary"]:
        return f"cwm's wary variant, not the paper's (k={settings['k']}{smart}, wary), on {on}"
    if settings == PAPER_ALICE:
        return f"the paper's configuration of the embedding encoder (k=16, smart, not wary), on {on}"
    return f"the paper's encoder changed to k={settings['k']}{smart}, not wary, on {on}"
