"""Test doubles for Decrypto, shipped so that tests and offline demos need no network and no embedding package:
a small made-up embedding and a fake LLM that plays every role by rule (``cwm.llm.testing`` is the model)."""

from __future__ import annotations

import re

import numpy as np

from cwm.decrypto.embeddings import Embedding
from cwm.llm import Ledger, Request, Response, Usage

KEYWORDS = ("lion", "piano", "hammer", "apple")
TOPICS = {  # keyword -> hint words near it in the made-up space
    "lion": ["mane", "savanna", "roar", "pride", "cub", "jungle", "safari", "claws"],
    "piano": ["keys", "melody", "sonata", "chord", "concert", "pianist", "tune", "score"],
    "hammer": ["nail", "anvil", "forge", "toolbox", "strike", "mallet", "workshop", "carpenter"],
    "apple": ["orchard", "cider", "fruit", "pie", "core", "peel", "harvest", "juicy"],
}


def toy_embedding(noise: float = 0.35, seed: int = 7) -> Embedding:
    """Four topic directions in 16 dimensions; each topic's words are its direction plus noise."""
    rng = np.random.default_rng(seed)
    topics = np.linalg.qr(rng.normal(size=(16, 4)))[0].T  # 4 orthonormal directions
    words, rows = [], []
    for direction, (keyword, hints) in zip(topics, TOPICS.items()):
        for word in (keyword, *hints):
            words.append(word)
            rows.append(direction + noise * rng.normal(size=16) / 4)
    return Embedding.from_arrays("toy", words, np.array(rows), [w for hs in TOPICS.values() for w in hs])


class RuleClient:
    """A fake LLM (a ``cwm.llm.Client``) that plays by rule from the prompt text.

    Alice hints ``first thing ...`` for digit 1, ``second thing ...`` for 2 and so on; Bob reads those back;
    Eve (and Alice's prediction of Eve) always answers ``eve_guess``. Probes: the keywords now and before the
    reveal are a fixed wrong guess, the second interceptor's are the revealed keywords. ``calls`` counts requests;
    ``ledger`` counts the replies, as every client's does.
    """

    model = "rule-llm"

    def __init__(self, eve_guess: str = "1-2-3") -> None:
        self.calls = 0
        self.eve_guess = eve_guess
        self.ledger = Ledger()

    def complete(self, request: Request) -> Response:
        return self.ledger.count(self.model, request, self._answer)

    def _answer(self, request: Request) -> Response:
        self.calls += 1
        text, task = request.last_user_text, request.tag.rsplit("/", 1)[-1]
        words = ["first", "second", "third", "fourth"]
        if task == "hints":
            found = re.search(r"\*\*(\d)-(\d)-(\d)\*\*", text)
            code = found.groups() if found else ("1", "2", "3")
            reply = "ANSWER: " + " | ".join(f"{words[int(d) - 1]} thing t{request.seed}" for d in code)
        elif task == "guess" and "/bob/" in request.tag:
            found = re.search(r"this turn, in order: (.*)", text)
            hints = found.group(1) if found else ""
            reply = "ANSWER: " + "-".join(str(words.index(w) + 1) for w in re.findall(r'"(\w+) thing', hints))
        elif task in ("guess", "predict_eve"):
            reply = f"I reason a while.\nANSWER: {self.eve_guess}"
        elif task == "keywords_other":
            reply = "ANSWER: " + " | ".join(re.findall(r"^\d\. (\w+)", text, re.MULTILINE))
        else:  # keywords_now, keywords_before: a fixed wrong belief
            reply = "ANSWER: cat | drum | saw | pear"
        return Response((reply,), ("STOP",), Usage(10, 10), 0.0, self.model)
