"""A batch directory's requests as plain text files, and replies read back from text files.

This is how a batch directory is answered by something that reads text, not JSON: a person, or an LLM
given nothing but the request (no files, no tools). :func:`export_pending` writes each waiting request to
``OUT/<key>.md``, exactly the text the answering side sees; whoever answers writes the reply text to
``ANSWERS/<key>.md`` (``<key>.<i>.md`` for the i-th of a request's ``n`` candidates), and
:func:`import_answers` appends them to ``replies.jsonl``. A request whose answer files are missing stays
pending; nothing else changes.

The relay attests what it gave the answering side by writing ``ANSWERS/<key>.sha256``: the SHA-256 (hex, as
``sha256sum`` prints it) of the exact text it gave the answering model, computed from that text (by the
program that sent it), not copied from the prompt file. :func:`import_answers` checks it against the request
and stores it with the reply as ``prompt_sha256``; a reply without one is imported unchecked. The hash file is
the relay's own statement: a match shows that the relay's copy matched the request byte for byte, not that
the answering model read it (cwm cannot see that side), and a relay that lies can write any hash it likes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from cwm.files import InputLimitError, read_bounded
from cwm.llm.batch import REPLIES_FILE, pending_entries, request_text
from cwm.llm.provenance import ProvenanceError, checked_sha256, prompt_sha256
from cwm.llm.types import LLMError, Request

ANSWER_BYTES = 4 << 20  # one answer file: a reply is a program of a few thousand lines at most


@dataclass(frozen=True)
class Waiting:
    """One request waiting in a batch directory.

    Attributes:
      key: its key (the name of its files).
      model: the model it was written for ("batch": any).
      request: the request.
    """

    key: str
    model: str
    request: Request

    @property
    def chars(self) -> int:
        """The length of the text the answering side reads."""
        return len(request_text(self.request))


def waiting(directory: Path | str) -> list[Waiting]:
    """The requests waiting in ``directory`` for a reply, in the order they were written."""
    return [Waiting(key, model, request) for key, (model, request) in pending_entries(directory).items()]


def answer_names(item: Waiting) -> list[str]:
    """The answer file names a request needs: ``<key>.md``, or ``<key>.<i>.md`` for each of ``n > 1``."""
    n = item.request.n
    return [f"{item.key}.md"] if n == 1 else [f"{item.key}.{i}.md" for i in range(n)]


def export_pending(directory: Path | str, out: Path | str) -> list[Path]:
    """Writes each waiting request's text to ``out/<key>.md``; returns the files written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for item in waiting(directory):
        path = out / f"{item.key}.md"
        path.write_bytes(request_text(item.request).encode("utf-8"))  # the bytes a relay's hash is of
        written.append(path)
    return written


def import_answers(directory: Path | str, answers: Path | str, *, model: str) -> tuple[int, int]:
    """Appends the answers found in ``answers`` for the waiting requests to ``replies.jsonl``.

    Args:
      directory: the batch directory.
      answers: the folder of answer files (see the module docstring).
      model: who answered, as precisely as known; written into each reply (the recording keeps it).

    Returns:
      ``(answered, still_waiting)``.

    Raises:
      LLMError: ``answers`` is not a folder, an answer file is empty or not UTF-8, or a ``<key>.sha256`` file
        is malformed or is not the hash of the request's text (names the file); nothing of that request is
        imported.
    """
    answers = Path(answers)
    if not answers.is_dir():
        raise LLMError(f"{answers} is not a folder of answer files")
    answered = left = 0
    for item in waiting(directory):
        paths = [answers / name for name in answer_names(item)]
        if not all(p.is_file() for p in paths):
            left += 1
            continue
        entry = {"key": item.key, "texts": [_answer(p) for p in paths], "model": model, "batch": False}
        digest = _prompt_hash(answers / f"{item.key}.sha256", item.request)
        if digest is not None:
            entry["prompt_sha256"] = digest
        with open(Path(directory) / REPLIES_FILE, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")
        answered += 1
    return answered, left


def _prompt_hash(path: Path, request: Request) -> str | None:
    """The hash in a relay's ``<key>.sha256`` file, checked against ``request`` (``None``: no such file)."""
    if not path.exists():
        return None
    try:
        words = read_bounded(path, 4096, what="prompt hash file").decode("ascii").split()
        digest = checked_sha256(words[0] if words else "", where=str(path))
    except InputLimitError as e:
        raise LLMError(str(e)) from None
    except OSError as e:
        raise LLMError(f"{path}: cannot be read ({e.strerror or e})") from None
    except (UnicodeDecodeError, ProvenanceError):
        raise LLMError(f"{path}: not a SHA-256 hex digest (64 lowercase hex digits, as sha256sum prints it)") from None
    if digest != prompt_sha256(request_text(request)):
        raise LLMError(f"{path}: not the hash of the request's text: the answering model saw another prompt; "
                       f"relay the prompt file's exact text and hash what was sent")
    return digest


def _answer(path: Path) -> str:
    try:  # the size first (a relay's folder is anyone's to write): a huge or sparse file is refused unread
        text = read_bounded(path, ANSWER_BYTES, what="answer file").decode("utf-8")
    except InputLimitError as e:
        raise LLMError(str(e)) from None
    except UnicodeDecodeError as e:
        raise LLMError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # line ends as a text-mode read makes them
    if not text.strip():
        raise LLMError(f"{path}: the answer is empty")
    return text
