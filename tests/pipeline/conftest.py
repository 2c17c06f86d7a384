"""Fixtures of the pipeline tests.

- ``no_api_keys``: the environment without any LLM key ``cwm run`` reads (``cwm.pipeline.API_KEY_VARS``), so
  a developer's own key cannot turn a test into a paid live run. Module-scoped, so a module's shared runs
  (module-scoped fixtures) can use it as well as its tests; a test that sets a key itself with
  ``monkeypatch`` gets the cleared environment back when it ends.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cwm import pipeline


@pytest.fixture(scope="module")
def no_api_keys() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        for var in pipeline.API_KEY_VARS:
            mp.delenv(var, raising=False)
        yield
