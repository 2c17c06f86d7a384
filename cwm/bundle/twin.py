"""A bundle's twin: a faster module with the world-model contract (``twin.py``) that planning workers use in
place of ``model.py``, carried only with the evidence of its equivalence (``twin_evidence.json``, the record of
``cwm.sandbox.equivalence.check_equivalence``).

The manifest's file hashes cover both files, and its ``provenance.twin`` sums the evidence up. At load,
``twin_evidence`` re-reads the evidence and requires that it vouches for these exact bytes: its verdict is
``equivalent`` and its fingerprints are the sha256 of this bundle's ``model.py`` and ``twin.py``; anything else
refuses the bundle with a one-line error. The evidence is a record, not a proof: it says the check was run on
these bytes and what it found (docs/performance.md says what that bounds), and a bundle is only as
trustworthy as where it came from. The twin itself is untrusted code like the model: gated, loaded and run
only in sandbox children.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cwm.bundle.files import (
    JAX_TWIN_EVIDENCE,
    JAX_TWIN_FILE,
    TWIN_EVIDENCE,
    TWIN_FILE,
    BundleError,
    decode,
    read_manifest,
    verified_files,
)
from cwm.bundle.update import update_bundle
from cwm.files import InputLimitError, loads_bounded
from cwm.sandbox.equivalence import evidence_problem
from cwm.types import JSON

__all__ = ["JAX_TWIN_EVIDENCE", "JAX_TWIN_FILE", "TWIN_EVIDENCE", "TWIN_FILE", "save_twin", "twin_evidence",
           "twin_summary"]
# Each kind of twin: its file, its evidence file and the evidence's target.
FILES = {"python": (TWIN_FILE, TWIN_EVIDENCE), "jax": (JAX_TWIN_FILE, JAX_TWIN_EVIDENCE)}


def twin_evidence(path: Path, data: dict[str, bytes], sources: dict[str, str], *,
                  target: str = "python") -> dict[str, JSON] | None:
    """The evidence of a bundle's twin, re-verified against the bytes of its ``model.py`` and ``twin.py``
    (``jax_twin.py`` for ``target`` ``jax``; ``None``: the bundle has no such twin).

    Args:
      path: the bundle (for messages).
      data: the bundle's verified files (``cwm.bundle.files.verified_files``).
      sources: its decoded code files (with the twin's).
      target: the kind of twin (``FILES``).

    Raises:
      BundleError: a twin without its evidence (or evidence without a twin), evidence that does not read as
        JSON, or evidence that does not vouch for these bytes (one line, naming the file and why).
    """
    twin_file, evidence_file = FILES[target]
    has_twin, has_evidence = twin_file in data, evidence_file in data
    if not (has_twin or has_evidence):
        return None
    if has_twin != has_evidence:
        here, missing = (twin_file, evidence_file) if has_twin else (evidence_file, twin_file)
        raise BundleError(f"{path}: {here} is in the bundle without {missing}; a twin travels only with its "
                          f"equivalence evidence")
    try:
        evidence = loads_bounded(data[evidence_file], where=str(path / evidence_file))
    except (InputLimitError, ValueError, RecursionError) as e:
        raise BundleError(f"{path / evidence_file}: not readable JSON ({str(e).splitlines()[0][:200]})") from None
    problem = evidence_problem(evidence, sources["model.py"], sources[twin_file], target=target)
    if problem is not None:
        raise BundleError(f"{path}: {twin_file} is refused: {problem}")
    return evidence  # type: ignore[no-any-return]


def twin_summary(evidence: dict[str, Any]) -> dict[str, JSON]:
    """What the manifest's ``provenance.twin`` records of the evidence (and ``cwm inspect`` shows)."""
    bound: dict[str, Any] = evidence["bound"] if type(evidence.get("bound")) is dict else {}
    kinds: dict[str, Any] = evidence["kinds"] if type(evidence.get("kinds")) is dict else {}
    return {"verdict": evidence.get("verdict"), "model_sha256": evidence.get("reference_sha256"),
            "twin_sha256": evidence.get("twin_sha256"), "p": bound.get("p"), "delta": bound.get("delta"),
            "playouts_per_kind": bound.get("playouts_per_kind"), "kinds": sorted(str(k) for k in kinds),
            "steps_compared": evidence.get("steps_compared")}


def save_twin(bundle: str | Path, source: str, evidence: dict[str, JSON], *,
              provenance: dict[str, JSON] | None = None, target: str = "python") -> Path:
    """Writes an accepted twin and its evidence into ``bundle`` (replacing an earlier twin of that kind),
    atomically (``cwm.bundle.update``), with ``twin_summary(evidence)`` and ``provenance`` as
    ``provenance.twin`` (``provenance.jax_twin`` for ``target`` ``jax``: ``jax_twin.py`` and its evidence).

    Raises:
      BundleError: not a bundle, files that do not match its manifest, or evidence that does not vouch for
        ``source`` as a twin of the bundle's ``model.py`` (nothing is written then).
    """
    path = Path(bundle)
    model = decode(path, "model.py", verified_files(path, read_manifest(path))["model.py"])
    problem = evidence_problem(evidence, model, source, target=target)
    if problem is not None:
        raise BundleError(f"{path}: the twin was not saved: {problem}")
    twin_file, evidence_file = FILES[target]
    writes = {twin_file: source.encode("utf-8"), evidence_file: (json.dumps(evidence, indent=1) + "\n").encode()}
    return update_bundle(path, writes, provenance_key="twin" if target == "python" else "jax_twin",
                         provenance=twin_summary(evidence) | (provenance or {}))
