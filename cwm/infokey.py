"""The one information-state encoding: a hash chain over one player's canonical observations and own actions,
built by model states one step at a time and by agents from the real game's events."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from cwm.json_values import dumps
from cwm.types import JSON


class InfoKey:
    """The one information-state encoding: a hash chain over one player's observations and own actions.

    A key starts at ``START`` and is extended, state by state, with the player's canonical observation at
    that state (``observe``) and, where the player acted there, its action (``act``). Model states extend
    their parent's key (one step, no replay); an agent's view of the real game extends it over its events;
    the same events give the same key, byte for byte.
    """

    START = hashlib.blake2b(b"cwm.infokey/1", digest_size=16).digest()

    @staticmethod
    def observe(key: bytes, observation: JSON) -> bytes:
        return hashlib.blake2b(key + b"O" + dumps(observation).encode(), digest_size=16).digest()

    @staticmethod
    def act(key: bytes, action: str) -> bytes:
        return hashlib.blake2b(key + b"A" + action.encode("utf-8", "surrogatepass"), digest_size=16).digest()

    @classmethod
    def of_events(cls, events: Iterable[tuple[JSON, str | None]]) -> bytes:
        """The key of a sequence of (canonical observation, own action or None) events."""
        key = cls.START
        for observation, own in events:
            key = cls.observe(key, observation)
            if own is not None:
                key = cls.act(key, own)
        return key
