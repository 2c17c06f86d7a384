"""Fixtures of the Decrypto tests (helpers live in cwm.decrypto.testing: CI imports tests with importlib)."""

from __future__ import annotations

import pytest

from cwm.decrypto import Embedding
from cwm.decrypto.testing import toy_embedding


@pytest.fixture
def toy() -> Embedding:
    return toy_embedding()
