"""The `cwm` command: subcommands are discovered from the modules of `cwm.commands`."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from collections.abc import Sequence

from tqdm.contrib.logging import logging_redirect_tqdm

import cwm.commands
from cwm import games
from cwm.llm.batch import PendingBatch
from cwm.text import clean
from cwm.types import CwmError, UsageError

ERROR_LIMIT = 4000  # characters of an error message printed (it may quote what a model wrote)
EXIT_WAITING = 3  # requests wait in a batch directory: not an error, the command resumes once they are answered


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered by a module of ``cwm.commands``.

    Each command module defines ``register(subparsers)``, which adds its parsers and sets ``func`` to a
    callable taking the parsed arguments and returning an exit code.
    """

    parser = argparse.ArgumentParser(prog="cwm", description="Code world models for general game playing.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(cwm.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"cwm.commands.{info.name}")
        module.register(sub)
    _add_view_flags(parser)
    return parser


def _add_view_flags(parser: argparse.ArgumentParser) -> None:
    """Gives ``--view`` to every (sub)command that takes a game (``game`` or ``--game``): the observation view
    of the user's own module game, applied by ``_run`` before the command starts."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                _add_view_flags(child)
        elif action.dest == "game" and not any("--view" in a.option_strings for a in parser._actions):
            parser.add_argument("--view", dest="game_view", choices=games.VIEWS_OF_MODULES, default=None,
                                help="how the observations of your own game module (path/to/module.py:NAME) are "
                                     "read: json (each observation string is a JSON object) or text (one string); "
                                     "default: json when every observation of a few sampled games is a JSON "
                                     "object, else text")


def chosen(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.ArgumentParser:
    """The (sub)command parser ``argv`` selects: ``cwm nfg eval ...`` gives the parser of ``nfg eval``."""
    current = parser
    for token in argv:
        subs = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if subs and token in subs[0].choices:
            current = subs[0].choices[token]
    return current


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``cwm`` console script; errors cwm raises on purpose print one line, exit 2.

    One-line errors, cleaned (``cwm.text.clean``: a message quoting a model's text prints no control
    character or escape sequence): every ``CwmError`` (``UsageError`` for arguments out of range, unknown games, bad
    files, models that do not load, ...) and ``OSError`` (a path that cannot be read or written; the
    message names it). Anything else is a bug and keeps its traceback. Requests waiting for replies in a
    batch directory (``PendingBatch``) are not an error: a plain line saying so, exit status 3
    (``EXIT_WAITING``); the same command resumes once they are answered.
    """
    try:  # the commands' modules import for a second or more: a Ctrl-C then is one line too
        parser = build_parser()
    except KeyboardInterrupt:
        print("cwm: interrupted", file=sys.stderr)
        return 130
    args, extra = parser.parse_known_args(argv)
    if extra:  # argparse would name them under the top-level usage, not the subcommand's
        chosen(parser, sys.argv[1:] if argv is None else list(argv)).error(
            f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    """Runs the chosen command: its exit code, or a one-line error (``main``)."""
    try:
        if getattr(args, "game_view", None) is not None:  # chosen before the command resolves the game
            if not getattr(args, "game", None):
                raise UsageError("--view needs the game it is the view of (--game path/to/module.py:NAME)")
            games.choose_view(args.game, args.game_view)
        with logging_redirect_tqdm():  # a warning while a progress bar is drawn prints above it, not inside
            code = int(args.func(args) or 0)
        sys.stdout.flush()  # a reader that went away (| head) is found here, not at exit
        return code
    except PendingBatch as e:
        print(f"cwm {args.command}: waiting: {clean(str(e), limit=ERROR_LIMIT)}", file=sys.stderr)
        return EXIT_WAITING
    except BrokenPipeError:  # the reader stopped reading: nothing more to say, and nowhere to say it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # what a shell reports for a writer stopped by SIGPIPE
    except (CwmError, UsageError) as e:  # bad input: one line, no traceback
        print(f"cwm {args.command}: error: {clean(str(e), limit=ERROR_LIMIT)}", file=sys.stderr)
        return 2
    except OSError as e:  # a path that cannot be read or written: "PATH: why"
        why = f"{e.filename}: {e.strerror}" if e.filename and e.strerror else str(e)
        print(f"cwm {args.command}: error: {clean(why, limit=ERROR_LIMIT)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"cwm {args.command}: interrupted; finished work is saved where the command writes it", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
