"""Loading model source into a module in this process: the static gate first, then the module executed with
the sandbox's restricted builtins and guarded ``__import__``, then the contract's functions required. For
code you trust (hand-written fixtures, a model you have read: ``--trust``); untrusted code runs in a
sandbox child (``cwm.sandbox.Sandbox``), which loads it the same way after the OS layers are up.

Every in-process route for model code ends here (``--trust``, ``--no-sandbox``, ``load_bundle(trusted=True)``,
a trusted PPO encoder), so this is where the process says once, on stderr, that such code runs with its
privileges (``TRUST_NOTICE``)."""

from __future__ import annotations

import logging
import sys
import types
from collections.abc import Sequence

from cwm.contract import CANDIDATE_MODULE, WORLD_MODEL_API, ContractFunction, missing_functions
from cwm.sandbox.builders import install_codegen_guard
from cwm.sandbox.gate import static_gate
from cwm.sandbox.layers import restricted_builtins
from cwm.types import ModelLoadError

log = logging.getLogger("cwm.trust")
TRUST_NOTICE = ("cwm: notice: model or bundle code runs in this process with your privileges (files, environment, "
                "network), as --trust, --no-sandbox, --trust-game-module and trusted=True ask; the static gate "
                "alone is not a sandbox")
_NOTICED: list[bool] = []  # mutated, never rebound: the notice is given once per process


def trust_notice() -> None:
    """Logs ``TRUST_NOTICE`` (a warning of the ``cwm.trust`` logger, one line on stderr when logging is not
    configured) the first time this process loads model code, or imports a bundle's game engine, in-process;
    later calls do nothing."""
    if not _NOTICED:
        _NOTICED.append(True)
        log.warning(TRUST_NOTICE)


def load_source(
    source: str,
    *,
    name: str = CANDIDATE_MODULE,
    api: Sequence[ContractFunction] = WORLD_MODEL_API,
    gate: bool = True,
) -> types.ModuleType:
    """Executes model source into a fresh module and checks that it defines the contract.

    Args:
      source: the module's Python source.
      name: the module name (shown in tracebacks; ``cwm.model.model_traceback`` quotes each frame's line
        from the module's own source, kept as ``__source__``).
      api: the functions the module must define.
      gate: run the sandbox's static gate first (forbidden imports and names) and execute the module with
        the sandbox's restricted builtins (no ``open``/``eval``/``getattr``..., an ``__import__`` limited
        to the gate's allow-list). Only turn it off for trusted code such as hand-written test fixtures.

    Raises:
      ModelLoadError: syntax error, forbidden code, an exception at import, or a missing function.
    """
    trust_notice()
    if gate:
        try:
            static_gate(source)
        except ModelLoadError as e:  # name the model, as the loader's own errors do
            raise ModelLoadError(f"{name}: {e}", verdict=f"static: {e}") from e
    try:
        code = compile(source, f"<{name}>", "exec", dont_inherit=True)  # not this module's __future__ flags
    except SyntaxError as e:
        raise ModelLoadError(f"{name}: syntax error at line {e.lineno}: {e.msg}") from e
    module = types.ModuleType(name)
    module.__dict__["__source__"] = source
    if gate:  # the same restricted builtins, guarded __import__ and code-generation check as in a sandbox child
        install_codegen_guard()
        module.__dict__["__builtins__"] = restricted_builtins()
    # Class decorators such as @dataclass look the module up in sys.modules while the class is built;
    # it is listed there only while the module body runs, and never over a module of that name.
    listed = name not in sys.modules
    if listed:
        sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except Exception as e:  # the model's own import-time error; report it as a load failure
        raise ModelLoadError(f"{name}: running the module raised {type(e).__name__}: {e}") from e
    finally:
        if listed:
            sys.modules.pop(name, None)
    missing = missing_functions(module.__dict__, api)
    if missing:
        raise ModelLoadError(f"{name}: missing contract function(s): {', '.join(missing)}")
    return module
