"""`cwm llm ping` and `cwm llm answer-batch`: check a provider's key and endpoint; answer a batch directory."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import prompts
from cwm.llm import (
    SPEC_FORMS,
    LLMConfigError,
    LLMError,
    Request,
    answer_pending,
    make_client,
    pending_entries,
)
from cwm.llm.batch import DEFAULT_MODEL as ANY_MODEL
from cwm.llm.batch import PENDING_FILE
from cwm.llm.batch_texts import export_pending, import_answers, waiting
from cwm.llm.shared import ManagedClient
from cwm.types import UsageError

_KEY_VARIABLES = {"gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "openai": ("OPENAI_API_KEY",)}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("llm", help="check LLM providers; answer batch directories")
    llm_sub = p.add_subparsers(dest="llm_command", metavar="LLM_COMMAND", required=True)

    q = llm_sub.add_parser("ping", help="say whether an API key is set and whether the endpoint answers")
    q.add_argument("--provider", choices=sorted(_KEY_VARIABLES), default="gemini")
    q.add_argument("--model", default=None, help="model id (default: gemini-2.5-pro for gemini; required for openai)")
    q.add_argument("--base-url", default=None, help="another endpoint: a proxy, a local server")
    q.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the answer (default 60)")
    q.set_defaults(func=cmd_ping)

    q = llm_sub.add_parser("pending", help="list the requests waiting in a batch directory; export their texts")
    q.add_argument("directory", help="the batch directory (holds pending.jsonl)")
    q.add_argument("--export", metavar="OUT", help="write each waiting request's text to OUT/<key>.md")
    q.set_defaults(func=cmd_pending)

    q = llm_sub.add_parser("answer-batch", help="answer the requests waiting in a batch directory")
    q.add_argument("directory", help="the batch directory (holds pending.jsonl)")
    q.add_argument("--llm", default="gemini",
                   help=f"client spec answering them ({SPEC_FORMS}; default gemini with the pending requests' model; "
                        "a spec naming another model is refused)")
    q.add_argument("--from", dest="answers", metavar="ANSWERS",
                   help="answer from reply texts instead of live calls: ANSWERS/<key>.md per request "
                        "(<key>.<i>.md for each of n candidates); needs --answered-by")
    q.add_argument("--answered-by", metavar="NAME",
                   help="with --from: who wrote the replies, as precisely as known (kept in each reply)")
    q.add_argument("--base-url", default=None, help="another endpoint for gemini/openai")
    q.add_argument("--limit", type=int, default=None, help="answer at most this many")
    q.set_defaults(func=cmd_answer_batch)


def _key_status(provider: str) -> tuple[bool, str]:
    names = _KEY_VARIABLES[provider]
    found = next((n for n in names if os.environ.get(n)), "")
    if found:
        return True, f"key: {found} is set"
    return False, f"key: not set (set {' or '.join(names)})"


def cmd_ping(args: argparse.Namespace) -> int:
    has_key, line = _key_status(args.provider)
    if not has_key and args.provider == "openai" and args.base_url:
        line += "; a local server usually needs none"
        has_key = True
    print(line)
    if not has_key:
        print("endpoint: not tried without a key")
        return 1
    spec = f"{args.provider}:{args.model}" if args.model else args.provider
    options = {"base_url": args.base_url} if args.base_url else {}
    try:
        client = make_client(spec, timeout_s=args.timeout, max_attempts=1, **options)
    except LLMConfigError as e:
        print(f"endpoint: not tried: {e}")
        return 1
    request = Request.user(prompts.render("llm/ping.md"), temperature=0.0, max_output_tokens=1024,
                           thinking_budget=128 if args.provider == "gemini" else None, tag="llm/ping")
    where = args.base_url or "the default endpoint"
    try:
        response = client.complete(request)
    except LLMError as e:
        print(f"endpoint: {where} did not answer properly: {type(e).__name__}: {e}")
        return 1
    u = response.usage
    print(f"endpoint: {where} answered in {response.latency_s:.2f} s as {response.model}: "
          f"{response.text.strip()[:80]!r} (tokens in {u.input_tokens}, out {u.output_tokens}, "
          f"thinking {u.thinking_tokens})")
    return 0


def cmd_pending(args: argparse.Namespace) -> int:
    """Lists the waiting requests (key, model, tag, characters); with ``--export`` writes their texts."""
    directory = Path(args.directory)
    _waiting_models(directory)  # a directory without pending.jsonl is an error, not "nothing waits"
    items = waiting(directory)
    for item in items:
        print(f"{item.key}  model {item.model}  {item.request.tag or '-'}  {item.chars} characters")
    print(f"{len(items)} request(s) wait in {directory} for a reply")
    if args.export and items:
        written = export_pending(directory, args.export)
        print(f"their texts: {len(written)} file(s) in {args.export}; write each reply to ANSWERS/<key>.md, then "
              f"`cwm llm answer-batch {directory} --from ANSWERS --answered-by NAME`")
    return 0


def cmd_answer_batch(args: argparse.Namespace) -> int:
    """Answers a batch directory with live calls (replies say ``"batch": false``: full price), or from
    reply texts (``--from``).

    Exit status 2 when the directory holds no ``pending.jsonl``, a line of it is broken, or ``--llm`` names
    a model other than the one the requests were written for; 1 when a call fails (replies so far stay).
    """
    if args.answers is not None:
        return _answer_from_files(args)
    try:
        models = _waiting_models(Path(args.directory))
        client = _answering_client(args, models) if models else None
    except LLMError as e:
        print(f"error: {e}")
        return 2
    if client is None:
        print(f"nothing waits in {args.directory}")
        return 0
    waiting = len(pending_entries(args.directory))
    try:
        answered = answer_pending(args.directory, client, limit=args.limit, batch=False, model=client.model)
    except LLMError as e:  # the replies written so far stay; a rerun answers the rest
        print(f"error: {type(e).__name__}: {e}; {waiting - len(pending_entries(args.directory))} answered before it")
        return 1
    print(f"answered {answered} of {waiting} waiting request(s) in {args.directory} with {client.model}")
    print(json.dumps(client.ledger.snapshot()))
    return 0


def _answer_from_files(args: argparse.Namespace) -> int:
    if not args.answered_by or not args.answered_by.strip():
        raise UsageError("--from needs --answered-by NAME: who wrote the replies (kept in each reply)")
    _waiting_models(Path(args.directory))
    answered, left = import_answers(args.directory, args.answers, model=args.answered_by.strip())
    print(f"answered {answered} request(s) in {args.directory} from {args.answers}; {left} still wait for a reply")
    return 0


def _waiting_models(directory: Path) -> list[str]:
    """The models the waiting requests were written for (``"batch"``: any model may answer)."""
    if not (directory / PENDING_FILE).is_file():
        raise LLMConfigError(f"{directory / PENDING_FILE} does not exist: is {directory} a batch directory?")
    return sorted({model for model, _ in pending_entries(directory).values()})


def _answering_client(args: argparse.Namespace, models: list[str]) -> ManagedClient:
    """The client for ``--llm``: bare ``gemini`` takes the requests' model; another model is refused."""
    meant = [m for m in models if m != ANY_MODEL]
    spec = f"gemini:{meant[0]}" if args.llm == "gemini" and len(meant) == 1 else args.llm
    client = make_client(spec, **({"base_url": args.base_url} if args.base_url else {}))
    if meant and client.model not in meant:
        raise LLMConfigError(f"the requests waiting in {args.directory} are for model(s) {meant}; --llm {args.llm} "
                             f"answers as {client.model!r}: name one of theirs (e.g. --llm gemini:{meant[0]})")
    return client
