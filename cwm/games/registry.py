"""Game registry: a name -> ground truth (OpenSpiel game), rules text and facts; views in ``cwm.games.views``."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import importlib
import importlib.resources
import importlib.util
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import pyspiel

from cwm.codec import ActionCodec
from cwm.files import not_a_file, quiet_stderr, read_text
from cwm.games import views
from cwm.games.views import VIEWS  # re-exported
from cwm.types import JSON, UnknownGameError, UsageError


@dataclasses.dataclass(frozen=True)
class GameSpec:
    """Everything cwm knows about one game.

    Attributes:
      name: the registry name (or the user's game string).
      openspiel: the OpenSpiel game string of the ground truth, e.g. ``"mnk(m=6,n=6,k=4)"``.
      rules: the rules text resource under ``game_rules/`` (``"tic_tac_toe.md"``), or a path to a file.
      players: number of players.
      information: ``"perfect"`` or ``"imperfect"``.
      stochastic: whether the game has chance nodes.
      novel: whether the game is one we invented (not in any LLM's training data).
      outcome: ``"win/draw/loss"`` or ``"payoff"``.
      turn_based: convert a simultaneous-move ground truth to turn-based (earlier choice hidden).
      module: a module to import before loading (it registers a Python OpenSpiel game).
      view: how observations are made JSON-able (one of ``VIEWS``).
      description: one line for listings.
      asymmetric: whether the seats differ in role or goal (a landlord against two peasants, a smuggler
        against a sheriff), beyond who moves first.
      rollout_cutoff: the rollout cut-off (moves) ``cwm run``'s arena plans with unless told otherwise
        (``RunConfig.max_rollout_steps``), for a game whose random playouts to the end carry no signal;
        ``None`` (most games): rollouts play to the end. Hanabi's is set: random play loses all three lives,
        and losing them takes every point back, so every full rollout is worth 0 (docs/games.md).
      match_moves: the decisions of a match played to its end, for a game whose random games end far sooner
        than planned ones (the cost estimate, ``cwm.arena.cost``, then projects this many moves a match, not
        the random games' mean); ``None`` (most games): random games are as long as planned ones, or longer.
        Hanabi's is set: random play loses the three lives within a dozen moves, while a team that keeps them
        plays until the deck is out (``HANABI_MATCH_MOVES``).
    """

    name: str
    openspiel: str
    rules: str
    players: int
    information: str
    stochastic: bool
    novel: bool
    outcome: str
    turn_based: bool = False
    module: str = ""
    view: str = "text"
    description: str = ""
    asymmetric: bool = False
    rollout_cutoff: int | None = None
    match_moves: int | None = None

    @property
    def perfect_information(self) -> bool:
        return self.information == "perfect"

    def facts(self) -> dict[str, JSON]:
        return {
            "name": self.name,
            "ground_truth": self.openspiel,
            "players": self.players,
            "information": self.information,
            "stochastic": self.stochastic,
            "novel": self.novel,
            "outcome": self.outcome,
            "description": self.description,
            "asymmetric": self.asymmetric,
        }


_REGISTRY: dict[str, GameSpec] = {}


def register(spec: GameSpec, *, replace: bool = False) -> GameSpec:
    """Adds a game to the registry (``replace=True`` to overwrite an existing name)."""
    if spec.name in _REGISTRY and not replace:
        raise ValueError(f"game {spec.name!r} is already registered")
    if spec.view not in VIEWS:
        raise ValueError(f"game {spec.name!r}: unknown view {spec.view!r}; expected one of {VIEWS}")
    cutoff = spec.rollout_cutoff
    if cutoff is not None and (type(cutoff) is not int or cutoff < 1):
        raise ValueError(f"game {spec.name!r}: a rollout cut-off is a number of moves, at least 1 (got {cutoff!r})")
    _REGISTRY[spec.name] = spec
    return spec


def registered() -> list[GameSpec]:
    """The registered games, in registration order."""
    return list(_REGISTRY.values())


_ALIASES = {"generalized_tic_tac_toe": "gen_tic_tac_toe", "leduc": "leduc_poker", "rps": "rock_paper_scissors"}


def resolve(game: str | GameSpec, *, rules: str | Path | None = None) -> GameSpec:
    """Finds a game by registry name, OpenSpiel game string, or ``path/to/module.py:short_name``.

    Args:
      game: a registry name, an OpenSpiel game string (``"mnk(m=5,n=5,k=4)"``), a module path with
        the OpenSpiel short name it registers, or a ``GameSpec``.
      rules: which rules (``with_rules``): ``"spec"``, ``"prose"`` or a rules file (a file is needed for games
        outside the registry); a module game's default is the ``.md`` file beside the module, when there is one.

    A module game's observation view is the one ``choose_view`` chose, else the one detected from its
    observations (``cwm.games.views.module_view``).

    Raises:
      UnknownGameError: the name is not registered and does not load as an OpenSpiel game, the game has no
        rulebook tier when ``"prose"`` is asked for, or the rules file is missing, a directory or blank
        (``check_rules_file``).
    """
    if isinstance(game, GameSpec):
        spec = game
    else:
        name = _ALIASES.get(game, game)
        if name in _REGISTRY:
            spec = _REGISTRY[name]
        elif _registered_ground_truth(game):  # "mnk(m=6,n=6,k=4)" is gen_tic_tac_toe: same game, same name
            spec = _REGISTRY[_registered_ground_truth(game)]
        elif ".py:" in game:
            spec = _module_spec(game)
        else:
            spec = _openspiel_spec(game)
    return spec if rules is None else with_rules(spec, rules)


# The two tiers of rules text shipped with cwm, selected by name wherever rules are read (``--rules``):
# ``spec`` (game_rules/<game>.md, written from the engines: observation formats, checked facts) and
# ``prose`` (game_rules/prose/<game>.md, a rulebook in plain words). Anything else is a path to a rules file.
RULES_TIERS = ("spec", "prose")


def with_rules(spec: GameSpec, rules: str | Path) -> GameSpec:
    """``spec`` reading the rules ``rules`` names: ``"spec"`` (its registered rules, unchanged), ``"prose"``
    (its rulebook tier, ``game_rules/prose/<name>.md``) or the path of a rules file. A module game
    (``path/to/GAME.py:name``) finds its tiers beside the module: ``GAME.spec.md`` (else its rules stay as
    they are) and ``GAME.md``.

    Raises:
      UnknownGameError: the game has no rulebook tier, or the rules file is missing, a directory or blank (one
        line naming it, ``check_rules_file``).
    """
    if str(rules) in RULES_TIERS and spec.module.endswith(".py"):  # a module game: its tiers lie beside it
        beside = Path(spec.module).with_suffix(".spec.md" if str(rules) == "spec" else ".md")
        return dataclasses.replace(spec, rules=str(beside)) if beside.is_file() else _no_tier(spec, str(rules))
    if str(rules) == "spec":
        return spec
    if str(rules) == "prose":
        name = f"prose/{spec.name}.md"
        if not importlib.resources.files("game_rules").joinpath(name).is_file():
            raise UnknownGameError(f"game {spec.name!r} has no rulebook-tier rules: game_rules/{name} does not exist")
        return dataclasses.replace(spec, rules=name)
    path = Path(rules)
    check_rules_file(path)
    return dataclasses.replace(spec, rules=str(path.resolve()))


def _no_tier(spec: GameSpec, tier: str) -> GameSpec:
    """A module game without ``GAME.spec.md`` keeps its rules for ``spec``; without ``GAME.md`` ``prose`` fails."""
    if tier == "spec":
        return spec
    raise UnknownGameError(f"game {spec.name!r} has no rulebook-tier rules: "
                           f"{Path(spec.module).with_suffix('.md')} does not exist")


def rules_tiers(spec: GameSpec) -> tuple[str, ...]:
    """The tiers of rules shipped for a registered game (``()`` for a game outside the registry)."""
    if spec.name not in _REGISTRY or not spec.rules:
        return ()
    found = importlib.resources.files("game_rules").joinpath(f"prose/{spec.name}.md").is_file()
    return ("spec", "prose") if found else ("spec",)


def rules_label(spec: GameSpec | None, text: str) -> str:
    """Which rules a text is, for records and tables: ``"spec"`` or ``"prose"`` when it is that shipped tier
    of the game's rules, else ``"sha256:<hex>"`` of the text (a user's rules file, or rules passed as text)."""
    registered = _REGISTRY.get(spec.name) if spec is not None else None
    if registered is not None:
        for tier in rules_tiers(registered):
            if rules_text(with_rules(registered, tier)) == text:
                return tier
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


_RULES_LABEL = re.compile(r"spec|prose|sha256:[0-9a-f]{64}")


def is_rules_label(value: object) -> bool:
    """Whether ``value`` (read back from a record that may have been edited) is a ``rules_label``."""
    return type(value) is str and _RULES_LABEL.fullmatch(value) is not None


def check_rules_file(path: Path) -> None:
    """Refuses, before any work, a rules file that is missing, a directory, or empty (blank): an empty file
    would otherwise stand for no rules at all, and a run would go on without them.

    Raises:
      UnknownGameError: one line naming the file and what is wrong with it.
    """
    if why := not_a_file(path, "rules file"):
        raise UnknownGameError(why)
    size = path.stat().st_size
    if size == 0 or (size <= _BLANK_CHECKED and not path.read_bytes().strip()):
        raise UnknownGameError(f"rules file {str(path)!r} is empty; write the game's rules in it")


_BLANK_CHECKED = 64 * 1024  # a rules file this small is read to see whether it is blank; a larger one is not


def _module_spec(game: str) -> GameSpec:
    """The spec of a user's module game: its rules the ``.md`` file beside it, its view chosen or detected."""
    spec = _module_base(game)
    beside = Path(spec.module).with_suffix(".md")  # GAME.md beside GAME.py: the rules, unless --rules says otherwise
    view = views.module_view(spec.name, _load(spec.openspiel, spec.turn_based, spec.module))
    return dataclasses.replace(spec, rules=str(beside) if beside.is_file() else "", view=view)


def _module_base(game: str) -> GameSpec:
    """The spec of a user's module game as OpenSpiel describes it (the module imported and checked)."""
    path_text, short_name = game.rsplit(":", 1)
    path = Path(path_text)
    if why := not_a_file(path, "game module"):
        raise UnknownGameError(f"{why} (from {game!r})")
    registered = _import_user_module(path)
    if short_name.split("(", 1)[0].strip() not in pyspiel.registered_names():
        found = ", ".join(registered) if registered else "no OpenSpiel game"
        raise UnknownGameError(f"game module {path_text!r} registers {found}, not {short_name!r}; write "
                               f"{path_text}:NAME with a name it registers")
    # Named by the absolute path, so trajectories recorded here are recognised from any directory.
    return _openspiel_spec(short_name, module=str(path.resolve()), name=canonical_id(game))


def choose_view(game: str, view: str) -> None:
    """Makes ``view`` (``json`` or ``text``) the observation view of the user's module game ``game``
    (``path/to/module.py:short_name``), in this process and the worker processes it starts.

    Raises:
      UsageError: ``game`` is not a module game (a registered game keeps its view; an OpenSpiel string has
        its own), ``view`` is unknown, or ``json`` and an observation is not a JSON object.
    """
    if ".py:" not in game:
        raise UsageError(f"--view is for your own game module (path/to/module.py:short_name), not {game!r}")
    spec = _module_base(game)  # imports the module (and checks it); nothing detected, the view is chosen
    views.choose_view(spec.name, _load(spec.openspiel, spec.turn_based, spec.module), view)


def canonical_id(game: str | GameSpec) -> str:
    """The identity two game names are compared by; it never imports or loads anything.

    A registry name or alias gives the registry name; ``path/to/module.py:short_name`` gives the absolute
    path of the module with the short name (``"tiny_nim.py:tiny_nim"`` typed in ``/work`` and
    ``"/work/tiny_nim.py:tiny_nim"`` are the same game); an OpenSpiel string equal to a registered game's
    ground truth gives that game's registry name (``"mnk(m=6,n=6,k=4)"`` is ``"gen_tic_tac_toe"``); any
    other string is its own identity.
    """
    name = game.name if isinstance(game, GameSpec) else game
    name = _ALIASES.get(name, name)
    if name in _REGISTRY:
        return name
    if ".py:" in name:
        path_text, short_name = name.rsplit(":", 1)
        return f"{Path(path_text).resolve()}:{short_name}"
    return _registered_ground_truth(name) or name


def _registered_ground_truth(game_string: str) -> str:
    """The registry name whose ground truth is exactly ``game_string`` (spaces ignored), else ``""``."""
    wanted = re.sub(r"\s", "", game_string)
    for spec in _REGISTRY.values():
        if re.sub(r"\s", "", spec.openspiel) == wanted:
            return spec.name
    return ""


_MODULE_GAMES: dict[str, list[str]] = {}  # module name -> the OpenSpiel games its import registered


def _import_user_module(path: Path) -> list[str]:
    """Imports a user's game module once per file (it registers its OpenSpiel game on import); the short
    names of the games its import registered."""
    resolved = path.resolve()
    digest = hashlib.sha256(str(resolved).encode("utf-8")).hexdigest()[:12]
    stem = re.sub(r"\W", "_", resolved.stem)
    mod_name = f"cwm_user_game_{stem}_{digest}"
    if mod_name in sys.modules:
        return _MODULE_GAMES.get(mod_name, [])
    before = set(pyspiel.registered_names())
    spec = importlib.util.spec_from_file_location(mod_name, resolved)
    if spec is None or spec.loader is None:
        raise UnknownGameError(f"cannot import {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    # No __pycache__ beside the user's files (a folder they may keep clean, or read-only), for the module and
    # whatever it imports in turn.
    previous, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the user's module failed at import: one clear line, not its traceback soup
        del sys.modules[mod_name]
        raise UnknownGameError(f"importing game module {str(path)!r} failed: {type(e).__name__}: {e}") from e
    finally:
        sys.dont_write_bytecode = previous
    _MODULE_GAMES[mod_name] = sorted(set(pyspiel.registered_names()) - before)
    return _MODULE_GAMES[mod_name]


def _openspiel_spec(game_string: str, *, module: str = "", name: str | None = None) -> GameSpec:
    close = difflib.get_close_matches(game_string, [s.name for s in _REGISTRY.values()], n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else "; `cwm games` lists the registered games"
    if game_string.split("(", 1)[0].strip() not in pyspiel.registered_names():
        # Checked first: OpenSpiel would print and raise its whole list of game names.
        raise UnknownGameError(f"unknown game {game_string!r}: neither registered in cwm nor an OpenSpiel game{hint}")
    try:
        with quiet_stderr():  # OpenSpiel prints the error to stderr before raising it; we say it once
            game = pyspiel.load_game(game_string)
    except Exception as e:  # pyspiel raises a bare RuntimeError/SpielError, e.g. for bad parameters
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UnknownGameError(f"cannot load game {game_string!r}: OpenSpiel says: {reason}{hint}") from e
    gtype = game.get_type()
    simultaneous = gtype.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
    perfect = gtype.information == pyspiel.GameType.Information.PERFECT_INFORMATION and not simultaneous
    return GameSpec(
        name=name or game_string,
        openspiel=game_string,
        rules="",
        players=game.num_players(),
        information="perfect" if perfect else "imperfect",
        stochastic=gtype.chance_mode != pyspiel.GameType.ChanceMode.DETERMINISTIC,
        novel=False,
        outcome="win/draw/loss" if _wins_draws_losses(game) else "payoff",
        turn_based=simultaneous,
        module=module,
        view=views.default_view(game),
        description=gtype.long_name,
    )


def _wins_draws_losses(game: pyspiel.Game) -> bool:
    # Zero-sum alone is not enough: poker is zero-sum but pays chips, not +-1.
    zero_sum = game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    return zero_sum and game.min_utility() == -1.0 and game.max_utility() == 1.0


@functools.cache
def _load(openspiel: str, turn_based: bool, module: str) -> pyspiel.Game:
    if module:
        _import_module(module)
    game = pyspiel.load_game(openspiel)
    if turn_based:
        game = pyspiel.convert_to_turn_based(game)
    return game


def _import_module(module: str) -> None:
    if module.endswith(".py"):
        _import_user_module(Path(module))
    else:
        importlib.import_module(module)


def load_game(game: str | GameSpec) -> pyspiel.Game:
    """The ground-truth OpenSpiel game of a registry name, game string or spec (turn-based if needed)."""
    spec = resolve(game)
    return _load(spec.openspiel, spec.turn_based, spec.module)


@functools.lru_cache(maxsize=32)
def action_codec(spec: GameSpec) -> ActionCodec:
    """The ground truth's action codec (action strings <-> OpenSpiel ids) of a game; cached per game."""
    return ActionCodec.from_game(load_game(spec))


def rules_text(game: str | GameSpec) -> str:
    """The natural-language rules of a game.

    Raises:
      UnknownGameError: the game has no rules file (pass one with ``rules=``).
      TextFileError: a rules file given by path is not UTF-8 (names the file, line and column).
    """
    spec = resolve(game)
    if not spec.rules:
        beside = f" or write {Path(spec.module).with_suffix('.md').name} beside the module" if spec.module.endswith(".py") else ""
        raise UnknownGameError(
            f"game {spec.name!r} has no rules text; pass a rules file (--rules FILE / rules=...){beside}"
        )
    path = Path(spec.rules)
    if path.is_absolute():
        check_rules_file(path)
        return read_text(path, what="rules file")
    return importlib.resources.files("game_rules").joinpath(spec.rules).read_text(encoding="utf-8")


def utility_range(spec: GameSpec) -> tuple[tuple[float, float], str]:
    """The game's (minimum, maximum) utility and where it comes from (the ground truth's declared range)."""
    gt = load_game(spec)
    lo, hi = float(gt.min_utility()), float(gt.max_utility())
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise UsageError(f"{spec.name}: the ground truth declares no usable utility range ([{lo}, {hi}])")
    return (lo, hi), f"min_utility()/max_utility() of the ground truth {spec.openspiel}"


# Ground truths whose ``rewards()`` do not add up to their ``returns()``: OpenSpiel's Hanabi repeats a move's
# reward at the deal that follows it (its reward is the score change since the last player's move). cwm
# records their rewards as the change in the returns, so a model's summed rewards are the game's returns.
# The rollout cut-off of Hanabi's arena by default: a sweep of the ground-truth ISMCTS team (200 simulations, 4
# rollouts per leaf) on 10 deals at 5, 10 and 20 moves (docs/games.md) chose it.
HANABI_ROLLOUT_CUTOFF = 10
# The decisions of a two-player Hanabi match that keeps a life: the 40 cards of the deck are drawn by plays and
# discards, then each player moves once more, and the hints come between. Measured: in the cut-off sweep above
# (30 matches), the 22 that kept a life took 71 to 76 decisions (mean 74); the recorded direct-LLM team's took
# 67 on average (201 over 3 deals); random games lose the three lives in about 12.
HANABI_MATCH_MOVES = 75
_REWARDS_FROM_RETURNS = ("hanabi",)


def step_rewards(spec: GameSpec, state: pyspiel.State, before: Sequence[float]) -> tuple[float, ...]:
    """The rewards of the step that led to ``state``, whose parent's returns were ``before``: the engine's
    ``rewards()``, or the change in ``returns()`` for the games in ``_REWARDS_FROM_RETURNS``."""
    if spec.openspiel.split("(", 1)[0].strip() in _REWARDS_FROM_RETURNS:
        return tuple(float(a) - float(b) for a, b in zip(state.returns(), before))
    return tuple(float(r) for r in state.rewards())


# ---------------------------------------------------------------------------------------------------
# JSON views (cwm.games.views) of a game's states


def observe(spec: GameSpec, state: pyspiel.State, player: int) -> JSON:
    """Player ``player``'s observation of ``state`` as a JSON-able dict, exactly what it may see."""
    return views.observe(spec.view, state, player)


def full_state(spec: GameSpec, state: pyspiel.State) -> JSON:
    """The whole ground-truth state (hidden information included) as JSON, for open-deck trajectories."""
    return views.full_state(spec.view, state)


# ---------------------------------------------------------------------------------------------------
# The built-in registry

_BUILTIN: list[GameSpec] = [
    GameSpec("tic_tac_toe", "tic_tac_toe", "tic_tac_toe.md", 2, "perfect", False, False, "win/draw/loss",
             view="struct", description="3x3 noughts and crosses"),
    GameSpec("connect_four", "connect_four", "connect_four.md", 2, "perfect", False, False, "win/draw/loss",
             view="struct", description="6x7 gravity four-in-a-row"),
    GameSpec("backgammon", "backgammon", "backgammon.md", 2, "perfect", True, False, "win/draw/loss",
             view="text", description="classic backgammon with dice (win/loss scoring: gammons count 1)"),
    GameSpec("gen_tic_tac_toe", "mnk(m=6,n=6,k=4)", "gen_tic_tac_toe.md", 2, "perfect", False, True,
             "win/draw/loss", view="text", description="generalized tic-tac-toe: 6x6 board, four in a row"),
    GameSpec("bargaining", "bargaining", "bargaining.md", 2, "imperfect", True, False, "payoff",
             view="lines", description="split a pool of items with private valuations"),
    GameSpec("leduc_poker", "leduc_poker", "leduc_poker.md", 2, "imperfect", True, False, "payoff",
             view="brackets", description="six-card two-round poker"),
    GameSpec("gin_rummy", "gin_rummy", "gin_rummy.md", 2, "imperfect", True, False, "payoff",
             view="struct", description="two-player gin rummy with knocking and layoffs"),
    GameSpec("rock_paper_scissors", "matrix_rps", "rock_paper_scissors.md", 2, "imperfect", False, False,
             "win/draw/loss", turn_based=True, view="text",
             description="one-shot rock-paper-scissors (second choice made blind)"),
    GameSpec("prisoners_dilemma", "matrix_pd", "prisoners_dilemma.md", 2, "imperfect", False, False, "payoff",
             turn_based=True, view="text", description="one-shot prisoner's dilemma (second choice made blind)"),
    GameSpec("iterated_prisoners_dilemma", "repeated_game(stage_game=matrix_pd(),num_repetitions=10)",
             "iterated_prisoners_dilemma.md", 2, "imperfect", False, False, "payoff", turn_based=True,
             view="text", description="prisoner's dilemma repeated for 10 rounds, per-round payoffs"),
    GameSpec("quadranto", "quadranto", "quadranto.md", 2, "imperfect", True, True, "win/draw/loss",
             module="game_rules.quadranto", view="json",
             description="4x4 pursuit, the opponent seen only by its quadrant, 20-move draw"),
    GameSpec("hand_of_war", "hand_of_war", "hand_of_war.md", 2, "imperfect", True, True, "win/draw/loss",
             module="game_rules.hand_of_war", view="json",
             description="16-card battle game: hidden simultaneous picks, showdowns with burned cards"),
    GameSpec("gen_chess", "gen_chess", "gen_chess.md", 2, "perfect", False, True, "win/draw/loss",
             module="game_rules.gen_chess", view="json",
             description="generalized chess army5x5a: general, infantry, jumping cavalry on 5x5"),
    # Cooperative: every seat gets the same return (the arena scores teams, docs/games.md). The full 50-card
    # deck, so a score is out of 25 like the published reference points; hanabi(players=N) seats 2-5.
    GameSpec("hanabi", "hanabi(players=2)", "hanabi.md", 2, "imperfect", True, False, "payoff",
             view="text", description="cooperative fireworks, own hand unseen, hints cost tokens; score /25",
             rollout_cutoff=HANABI_ROLLOUT_CUTOFF, match_moves=HANABI_MATCH_MOVES),
    GameSpec("tiny_hanabi", "tiny_hanabi", "tiny_hanabi.md", 2, "imperfect", True, False, "payoff",
             view="text", description="one private card each, one signal each, shared payoff 0-10"),
]
for _spec in _BUILTIN:
    register(_spec)

# Novel games (ours) are Python OpenSpiel games in game_rules/<name>.py; their specs name the module, which
# is imported only when the game is loaded.
