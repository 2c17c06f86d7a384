"""The posterior check: does an inference function draw the hidden information with the right probabilities?

The reconstruction checks of inference ask only that a sampled history reproduce the player's observations
and own actions, so a sampler that always returns the same consistent history passes them while its belief
is wrong. This check compares the sampler's distribution of the hidden information (``cwm.games.hidden``) with
the true posterior at information states of seeded random games (off-policy), or at states the caller gives
(``at=``: on-policy, e.g. those an agent met in the arena, ``cwm.pipeline.beliefs``). The true posterior
assumes an opponent model: uniformly random opponents by default (``OPPONENT_MODEL``), or a policy the caller
states (``opponent=OpponentModel(name, policy)``), which weights every consistent history by the opponents'
action probabilities in the ground truth's exact enumeration and rejection draws alike; every report names
the model it assumed (``PosteriorReport.opponent_model``):

* at each sampled information state, ``draws`` histories from ``resample_history``; each is replayed in the
  ground truth (``cwm.games.hidden.replay``); one that does not reproduce the player's events is *invalid*.
  Each state draws its inference seeds (and its truth's draws) from its own stream, spawned from one keyed
  by the check's seed, mode and states (``state_streams``), so the draws of different states, and of
  checks of other states or the other mode at one seed, are independent;
* the distance there is the total-variation distance between the true posterior ``p`` and the sampler's
  frequencies ``q`` over the feature's values, invalid draws counting as one more value that ``p`` never
  takes (so TV also rises with invalid draws);
* the interval is an exact finite-sample bound, not a bootstrap: by the Bretagnolle-Huber-Carol inequality,
  ``P(||q_hat - q||_1 >= e) <= (2^K - 2) exp(-M e^2 / 2)`` for ``M`` draws over ``K`` values, so with
  probability ``1 - delta`` the true TV lies within ``e/2`` of the measured one. ``K`` is the support of
  ``p`` plus one value for everything else (which leaves TV unchanged). Each of the ``S`` states gets
  ``delta = alpha / S`` (Bonferroni), so all the per-state intervals hold together with probability
  ``1 - alpha``, and so does the interval of their mean. Where the truth is itself estimated from draws
  (no exact enumeration), its own bound is added, with ``K`` taken from the values seen: approximate there.
  ``ln(2^K - 2)`` is computed in log space, so a posterior of any size gives a finite margin;
* the *minimum detectable distance* of a state is twice its margin: a sampler at least that far from the
  posterior gets a lower bound above 0 whenever the intervals hold (probability ``1 - alpha``). With
  ``PosteriorSettings.detect`` set, each state gets the draws that bring it down to that distance, an
  estimated truth half of the room; where ``max_draws`` cannot, the state keeps its base draws and reports
  the larger distance they detect.

Inference accuracy (the fraction of valid draws) is reported beside the distance.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import math
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import pyspiel

from cwm import games, value_rules
from cwm.games.hidden import HiddenInfo, Truth, hidden_info, replay, true_posterior
from cwm.games.tracker import HistoryTracker
from cwm.text import counted, html_block, html_number, html_paragraph, html_table, plain_text
from cwm.types import JSON, from_former_keywords
from planners.gt_resample import HistoryResampler, OpponentPolicy

ResampleHistory = Callable[[list[JSON], int, int], list[str]]
INVALID = "<invalid>"  # the value of a draw whose replay does not reproduce the player's events
# A report keeps, per state, the most likely values of p and of q (the rest summed under one entry), each
# value's text clipped: a feature with a new value at nearly every draw (the generic one of a card game)
# would otherwise store thousands of long strings per state. The distances use every value all the same.
SHOWN_VALUES = 20
SHOWN_CHARS = 200
OPPONENT_MODEL = "uniformly random over legal actions (chance by its probabilities)"
MAX_DRAWS = 10**15  # more draws than any check could make: a margin needing more is refused


@dataclasses.dataclass(frozen=True)
class OpponentModel:
    """The other players' policy a true posterior assumes, stated by the caller.

    Attributes:
      name: what reports print as the assumption (e.g. ``"always raises (fixed policy)"``).
      policy: ``(state, acting player) -> (action, probability)`` pairs over the legal actions
        (``planners.gt_resample.OpponentPolicy``): a fixed policy, or one recorded for the opponent an agent
        met. A state whose real history it gives probability 0 has no posterior under it and is skipped.
    """

    name: str
    policy: OpponentPolicy


@dataclasses.dataclass(frozen=True)
class StateCheck:
    """The check at one information state.

    Attributes:
      game, step, player: which random game (0-based), how many moves into it, whose information state.
      truth: how the true posterior was found (``cwm.games.hidden.Truth.method``).
      p, q: the true posterior and the sampler's frequencies, value (as text) -> probability: the
        ``SHOWN_VALUES`` most likely values of each, the rest summed under ``"<N other values>"``, a text over
        ``SHOWN_CHARS`` characters clipped and marked with its length and a hash.
      invalid: draws whose replay did not reproduce the player's events; ``error``: the first one's reason.
      tv, lo, hi: the measured distance and its interval.
      draws: the inference draws made at this state.
      detectable: the minimum detectable distance here: a sampler at least this far from the posterior
        gets a lower bound above 0 (twice the interval's half-width; 1.0 when nothing smaller can be shown).
    """

    game: int
    step: int
    player: int
    truth: str
    p: dict[str, float]
    q: dict[str, float]
    invalid: int
    error: str
    tv: float
    lo: float
    hi: float
    draws: int = 0
    detectable: float = 1.0


@dataclasses.dataclass(frozen=True)
class PosteriorReport:
    """The posterior check of one inference function on one game.

    Attributes:
      game, hidden: the game and what its hidden information is (``cwm.games.hidden.HiddenInfo.description``).
      states: the check at each sampled information state (``StateCheck``).
      draws, confidence: the most draws at any state, and the confidence of the intervals (all states
        together).
      tv, lo, hi: the mean total-variation distance over the states and its interval.
      max_tv: the largest distance at any one state.
      accuracy: the fraction of all draws whose replay reproduced the player's events.
      skipped: sampled information states where no true posterior could be found.
      detectable: the minimum detectable distance of the mean (the mean of the states' own): a sampler
        that far from the posterior at every state gets a lower bound above 0, with the stated confidence.
      where: which information states, ``"off-policy"`` (seeded uniformly random games) or ``"on-policy"``
        (states an agent met, given by the caller).
      opponent_model: the other players' policy the true posterior assumes.
    """

    game: str
    hidden: str
    states: tuple[StateCheck, ...]
    draws: int
    confidence: float
    tv: float
    lo: float
    hi: float
    max_tv: float
    accuracy: float
    skipped: int
    detectable: float = 1.0
    where: str = "off-policy"
    opponent_model: str = OPPONENT_MODEL

    def to_json(self) -> dict[str, JSON]:
        return dataclasses.asdict(self) | {"method": "Bretagnolle-Huber-Carol bound, Bonferroni over states"}

    def summary(self) -> str:
        return (f"{self.game} ({self.where}): posterior TV {self.tv:.3f} [{self.lo:.3f}, {self.hi:.3f}] "
                f"({self.confidence:.0%}, {len(self.states)} states x {self._draws()} draws; max {self.max_tv:.3f}); "
                f"detectable {self.detectable:.3f}; inference accuracy {self.accuracy:.3f}; hidden: {self.hidden}")

    def _repr_html_(self) -> str:
        """The check as a notebook shows it: ``summary``, then each state's distance with its interval, the
        draws, the invalid draws and the first one's reason, and the true and sampled distributions
        (values are the game's text: escaped by ``cwm.text.html_text``)."""
        head = ["game", "step", "player", "truth", "TV [interval]", "detectable", "draws", "invalid", "p (true)",
                "q (sampled)"]
        # raw values or text built by cwm.text.plain_text/html_number: no hook of a value's class runs here
        body = [[s.game, s.step, s.player, s.truth,
                 f"{html_number(s.tv)} [{html_number(s.lo)}, {html_number(s.hi)}]", html_number(s.detectable),
                 s.draws, _invalid(s), _shares(s.p), _shares(s.q)] for s in self.states]
        return html_block(html_paragraph(self.summary()),
                          html_paragraph(f"opponent model: {plain_text(self.opponent_model)}; "
                                         f"{plain_text(self.skipped)} state(s) skipped (no true posterior found)"),
                          html_table(head, body))

    def _draws(self) -> str:
        low = min((s.draws for s in self.states), default=self.draws)
        return f"{self.draws:,}" if low == self.draws else f"{low:,}-{self.draws:,}"


def log_subsets(values: int) -> float:
    """``ln(2^values - 2)``, the log of the number of nontrivial subsets of ``values`` values (0 below 2
    values), computed as ``values*ln 2 + log1p(-2^(1-values))`` so that it stays finite for any size."""
    if values < 2:
        return 0.0
    return values * math.log(2.0) + math.log1p(-math.exp((1 - values) * math.log(2.0)))


def tv_margin(values: int, draws: int, delta: float) -> float:
    """Half the L1 radius ``e`` of the Bretagnolle-Huber-Carol bound: with probability ``1 - delta``, the TV
    distance of the frequencies of ``draws`` draws over ``values`` values from their distribution is below it.
    Stable for any number of values (a posterior with millions of values gives a margin of 1, not an error)."""
    if draws <= 0:
        return 1.0
    return min(1.0, math.sqrt(2.0 * (log_subsets(values) + math.log(1.0 / delta)) / draws) / 2.0)


def draws_for_margin(values: int, margin: float, delta: float, *, most: int | None = None) -> int | None:
    """The fewest draws whose ``tv_margin(values, draws, delta)`` is at most ``margin``.

    Args:
      margin: a distance in ``(0, 1]``.
      delta: the bound's failure probability, in ``(0, 1)``.
      most: the most draws worth counting: ``None`` is returned when more would be needed (compared before
        rounding, so a vanishing margin gives ``None``, not an overflow). Without it, a margin needing more
        than ``MAX_DRAWS`` draws is refused.

    Raises:
      ValueError: ``margin`` or ``delta`` out of range, or (without ``most``) more than ``MAX_DRAWS`` needed.
    """
    if not 0.0 < margin <= 1.0:
        raise ValueError(f"the margin must be a distance in (0, 1] (got {margin!r})")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1) (got {delta!r})")
    # divided step by step: margin * margin underflows to 0 below about 1e-162
    need = (log_subsets(values) + math.log(1.0 / delta)) / 2.0 / margin / margin
    cap = MAX_DRAWS if most is None else most
    if not need <= cap:  # inf included
        if most is None:
            raise ValueError(f"a margin of {margin!r} needs more than {MAX_DRAWS:.0e} draws")
        return None
    draws = max(1, math.ceil(need))
    while tv_margin(values, draws, delta) > margin:  # rounding at the boundary
        draws += 1
    return draws if draws <= cap or most is None else None


def _invalid(state: StateCheck) -> str:
    """The invalid draws of a state and the first one's reason, as plain text (``cwm.text.plain_text``)."""
    error = plain_text(state.error)
    return plain_text(state.invalid) + (": " + error if error else "")


def _shares(distribution: object, most: int = 6) -> str:
    """The most likely values of a distribution with their probabilities, as one line for a table: each value
    and probability read as plain text (``cwm.text.plain_text``, ``html_number``), so the line is built
    without calling anything the values' classes define."""
    pairs: list[tuple[object, object]] = []
    if type(distribution) is value_rules.ReadOnlyDict:  # the library's own read-only dict: read as it says
        pairs = list(distribution.items())  # type: ignore[attr-defined]
    elif issubclass(type(distribution), dict):
        pairs = list(dict.items(distribution))  # type: ignore[arg-type]
    top = sorted(pairs, key=lambda kv: -_plain_share(kv[1]))
    shown = "; ".join(f"{plain_text(value)}: {html_number(share, '.2f')}" for value, share in top[:most])
    return shown + (f"; ... {len(top) - most} more" if len(top) > most else "")


def _plain_share(value: object) -> float:
    """A probability read through the builtin types' own methods (0 for anything that is not a number)."""
    if issubclass(type(value), float):
        return float.__float__(value)  # type: ignore[arg-type]
    if issubclass(type(value), int) and int.bit_length(value) < 1000:  # type: ignore[arg-type]
        return float(int.__int__(value))  # type: ignore[arg-type]
    return 0.0


def total_variation(p: dict[Hashable, float], q: dict[Hashable, float]) -> float:
    return 0.5 * sum(abs(p.get(v, 0.0) - q.get(v, 0.0)) for v in set(p) | set(q))


def information_states(game: str | games.GameSpec, *, games_played: int, states: int,
                       seed: int) -> list[tuple[int, pyspiel.State]]:
    """``states`` decision states drawn without replacement from ``games_played`` uniformly random games
    (``(game index, state)``, in play order), seeded by ``seed``."""
    gt = games.load_game(game)
    rng = np.random.default_rng(seed)
    found: list[tuple[int, pyspiel.State]] = []
    for g in range(games_played):
        state = gt.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
                continue
            found.append((g, state.clone()))
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
    picked = sorted(rng.choice(len(found), size=min(states, len(found)), replace=False))
    return [found[i] for i in picked]


@dataclasses.dataclass(frozen=True)
class PosteriorSettings:
    """The size of a posterior check.

    Attributes:
      games_played, states: information states are drawn from the decision states of this many seeded
        random games.
      draws: inference draws per information state.
      truth_draws: draws per state for a true posterior that cannot be enumerated (with ``detect`` set, more
        where they leave the sampler too little room: ``truth_draws_for``).
      confidence: of the intervals, for all states together.
      seed: seeds the games, the state choice, the inference seeds and the ground truth's draws.
      max_nodes: the exact enumeration's budget per information state.
      detect: a distance to detect, or ``None``: when set, each state gets the draws (at least ``draws``, at
        most ``max_draws``) that bring its minimum detectable distance down to ``detect``, so a sampler that
        far from the posterior fails (lower bound above 0) with probability ``confidence`` (``draws_for``);
        an estimated truth gets half of that room (``truth_draws_for``). A state where ``max_draws`` cannot
        reach ``detect`` falls back to ``draws`` and reports the larger distance it can detect.
      max_draws: the most draws ``detect`` may ask for at one state, for the sampler and for the truth each.
    """

    games_played: int = 10
    states: int = 20
    draws: int = 400
    truth_draws: int = 2000
    confidence: float = 0.95
    seed: int = 0
    max_nodes: int = 200_000
    detect: float | None = None
    max_draws: int = 50_000

    def __post_init__(self) -> None:
        if self.detect is not None and not 0.0 < self.detect <= 1.0:
            raise ValueError(f"PosteriorSettings.detect must be a distance in (0, 1] (got {self.detect!r})")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"PosteriorSettings.confidence must be in (0, 1) (got {self.confidence!r})")
        for name in ("games_played", "states", "draws", "truth_draws", "max_draws"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"PosteriorSettings.{name} must be a whole number of at least 1 (got {value!r})")


@dataclasses.dataclass(frozen=True)
class _Plan:
    """What every state of one check shares."""

    spec: games.GameSpec
    hidden: HiddenInfo
    resample_history: ResampleHistory
    settings: PosteriorSettings
    delta: float
    opponent_model: str = OPPONENT_MODEL


def posterior_check(game: str | games.GameSpec, resample_history: ResampleHistory,
                    settings: PosteriorSettings | None = None, *, hidden: HiddenInfo | None = None,
                    at: Sequence[tuple[int, pyspiel.State]] | None = None, opponent: OpponentModel | None = None,
                    **legacy: Any) -> PosteriorReport:
    """Compares ``resample_history``'s distribution of the hidden information with the true posterior.

    Args:
      game: the real game.
      resample_history: the inference function (``cwm.contract.INFERENCE_API``); it gets a deep copy of the
        player's events each time and one seed per draw. Run untrusted code through a guard or a worker.
      settings: the check's size (``PosteriorSettings``: games, states, draws, detect, confidence, seed, ...).
      hidden: what to measure (default ``cwm.games.hidden.hidden_info(game)``).
      at: the on-policy mode: ``(index, state)`` pairs of ground-truth states an agent met (the player is
        the one to move at each; the index names where it came from, e.g. a match); at most
        ``settings.states`` of them are checked, drawn without replacement by ``settings.seed``. Default:
        states of ``settings.games_played`` seeded uniformly random games (off-policy).
      opponent: the opponent model of the true posterior (default: uniformly random opponents). With one,
        states are not merged by ``hidden.state_key`` (the policy may tell merged states apart), so the
        exact enumeration's budget (``max_nodes``) goes less far.
      legacy: the former keyword arguments (``games_played=``, ``draws=``, ...), deprecated.

    Randomness: ``settings.seed`` seeds the random games, the choice of states, the inference seeds and the
    ground truth's draws.
    """
    s = from_former_keywords(PosteriorSettings, settings, legacy, who="posterior_check",
                             error=TypeError) or PosteriorSettings()
    spec = games.resolve(game)
    hidden = hidden or hidden_info(spec)
    if at is None:
        picked = information_states(spec, games_played=s.games_played, states=s.states, seed=s.seed)
    else:
        picked = _choose(list(at), s.states, s.seed)
    where = "off-policy" if at is None else "on-policy"
    resampler = HistoryResampler(state_key=hidden.state_key if opponent is None else None, max_nodes=s.max_nodes,
                                 opponent_policy=None if opponent is None else opponent.policy)
    plan = _Plan(spec, hidden, resample_history, s, (1.0 - s.confidence) / max(len(picked), 1),
                 OPPONENT_MODEL if opponent is None else opponent.name)
    checks, skipped, valid = [], 0, 0
    streams = state_streams(s.seed, where, spec.name, [state for _, state in picked])
    for (g, state), rng in zip(picked, streams, strict=True):
        truth = _truth(plan, state, resampler, rng)
        if truth is None:
            skipped += 1
            continue
        check = _check_state(plan, state, truth, rng, g)
        checks.append(check)
        valid += check.draws - check.invalid
    return _report(plan, checks, valid, skipped, where)


def state_streams(seed: int, where: str, game: str, states: Sequence[pyspiel.State]) -> list[np.random.Generator]:
    """One random stream per checked state, for its inference seeds and its truth's draws.

    The streams are ``SeedSequence.spawn`` children of one sequence keyed by the check's seed, its mode
    (``where``), the game's name and the histories of all its states (through SHA-256): independent of each
    other, and of those of any check that differs in mode or states. A stream keyed by the seed alone would
    hand the i-th state of every check at that seed the same inference seeds, so an inference whose draws
    depend only on its seeds would repeat one unlucky run of them at that position in every check, off- and
    on-policy, whatever the states: the checks' false alarms would not be independent."""
    text = "\n".join([game, where, *(" ".join(map(str, state.history())) for state in states)])
    digest = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:16], "big")
    return [np.random.default_rng(child) for child in np.random.SeedSequence([seed, 1, digest]).spawn(len(states))]


def _choose(found: list[tuple[int, pyspiel.State]], states: int, seed: int) -> list[tuple[int, pyspiel.State]]:
    """At most ``states`` of ``found``, drawn without replacement by ``seed``, in their given order."""
    if len(found) <= states:
        return found
    rng = np.random.default_rng([seed, 2])
    return [found[i] for i in sorted(rng.choice(len(found), size=states, replace=False))]


def draws_for(settings: PosteriorSettings, values: int, truth_margin: float, delta: float) -> int:
    """The inference draws at one state: ``settings.draws``, or with ``settings.detect`` set, enough that the
    state's minimum detectable distance (twice the sampler's margin plus the truth's) is at most ``detect``
    (at least ``draws``). Where that needs more than ``max_draws`` (or the truth's own margin leaves no room),
    no draw could reach ``detect``: the state falls back to ``draws``, and its detectable distance, above
    ``detect``, is reported."""
    if settings.detect is None:
        return settings.draws
    room = settings.detect / 2.0 - truth_margin
    need = draws_for_margin(values, room, delta, most=settings.max_draws) if room > 0 else None
    return settings.draws if need is None else max(settings.draws, need)


def truth_draws_for(settings: PosteriorSettings, values: int, delta: float) -> int:
    """The draws for a true posterior estimated from draws: ``settings.truth_draws``, or with
    ``settings.detect`` set, enough for half of the room (a margin of ``detect / 4``, leaving the sampler the
    other half) where at most ``max_draws`` do it; ``values`` is the support seen so far, plus one."""
    if settings.detect is None:
        return settings.truth_draws
    share = settings.detect / 4.0
    need = draws_for_margin(values, share, delta, most=settings.max_draws) if share > 0 else None
    return settings.truth_draws if need is None else max(settings.truth_draws, need)


def _truth(plan: _Plan, state: pyspiel.State, resampler: HistoryResampler, rng: np.random.Generator) -> Truth | None:
    """The true posterior at ``state``: exact where it can be enumerated, else from ``truth_draws`` draws, then
    (with ``detect`` set) from more, pooled with the first, as many as ``truth_draws_for`` asks given the values
    the first draws showed."""
    s, player = plan.settings, state.current_player()
    truth = true_posterior(plan.spec, state, player, plan.hidden, resampler=resampler, draws=s.truth_draws, rng=rng)
    if truth is None or not truth.draws:
        return truth
    want = truth_draws_for(s, len(truth.probabilities) + 1, plan.delta)
    if want <= truth.draws:
        return truth
    more = true_posterior(plan.spec, state, player, plan.hidden, resampler=resampler, draws=want - truth.draws,
                          rng=rng)
    if more is None or not more.draws:
        return truth
    pooled = {v: p * truth.draws for v, p in truth.probabilities.items()}
    for v, p in more.probabilities.items():
        pooled[v] = pooled.get(v, 0.0) + p * more.draws
    total = truth.draws + more.draws
    return dataclasses.replace(truth, probabilities={v: n / total for v, n in pooled.items()}, draws=total)


def _check_state(plan: _Plan, state: pyspiel.State, truth: Truth, rng: np.random.Generator,
                 game_index: int) -> StateCheck:
    player = state.current_player()
    tracker = HistoryTracker(plan.spec, player)
    tracker.sync(state)
    values = len(truth.probabilities) + 1
    # the truth's margin, known before the draws from its own support (recomputed below with q's values)
    planned = tv_margin(values, truth.draws, plan.delta) if truth.draws else 0.0
    draws = draws_for(plan.settings, values, planned, plan.delta)
    counts: Counter[Hashable] = Counter()
    error = ""
    for _ in range(draws):
        value, why = _draw(plan.spec, tracker.events, player, plan.hidden, plan.resample_history,
                           int(rng.integers(2**31)))
        counts[value] += 1
        error = error or why
    q = {v: n / draws for v, n in counts.items()}
    tv = total_variation(truth.probabilities, q)
    margin = tv_margin(values, draws, plan.delta)
    if truth.draws:
        margin += tv_margin(len(set(truth.probabilities) | set(q)) + 1, truth.draws, plan.delta)
    return StateCheck(game_index, len(state.history()), player, truth.method,
                      shown(truth.probabilities), shown(q), counts[INVALID], error, tv, max(0.0, tv - margin),
                      min(1.0, tv + margin), draws, min(1.0, 2.0 * margin))


def shown(distribution: dict[Hashable, float]) -> dict[str, float]:
    """A distribution as a report keeps it: its ``SHOWN_VALUES`` most likely values by text (ties in text
    order; values with the same text are one, their probabilities summed), each text clipped to
    ``SHOWN_CHARS`` characters, and the rest summed under one entry."""
    by_text: dict[str, float] = {}
    for value, p in distribution.items():
        text = _text(value)
        by_text[text] = by_text.get(text, 0.0) + p
    ranked = sorted(by_text.items(), key=lambda vp: (-vp[1], vp[0]))
    kept = dict(ranked[:SHOWN_VALUES])
    rest = ranked[SHOWN_VALUES:]
    if rest:
        kept[f"<{counted(len(rest), 'other value')}>"] = sum(p for _, p in rest)
    return kept


def _text(value: Hashable) -> str:
    text = str(value)
    if len(text) <= SHOWN_CHARS:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:12]
    return f"{text[:SHOWN_CHARS]}... ({len(text)} characters, sha256 {digest})"


def _draw(spec: games.GameSpec, events: list[JSON], player: int, hidden: HiddenInfo,
          resample_history: ResampleHistory, seed: int) -> tuple[Hashable, str]:
    """One inference draw's hidden feature, or ``INVALID`` with the reason."""
    try:
        history = resample_history(copy.deepcopy(events), player, seed)
    except Exception as e:  # the inference function's own failure is an invalid draw, with its reason
        return INVALID, f"resample_history raised {type(e).__name__}: {e}"
    world, why = replay(spec, history, player, events)
    if world is None:
        return INVALID, why
    return hidden.feature(spec, world, player), ""


def _report(plan: _Plan, checks: list[StateCheck], valid: int, skipped: int, where: str) -> PosteriorReport:
    n = len(checks)
    mean = (lambda xs: sum(xs) / n) if n else (lambda xs: math.nan)
    total = sum(c.draws for c in checks)
    return PosteriorReport(plan.spec.name, plan.hidden.description, tuple(checks),
                           max((c.draws for c in checks), default=plan.settings.draws), plan.settings.confidence,
                           mean([c.tv for c in checks]), mean([c.lo for c in checks]), mean([c.hi for c in checks]),
                           max((c.tv for c in checks), default=math.nan), valid / total if total else math.nan,
                           skipped, mean([c.detectable for c in checks]) if n else 1.0, where,
                           plan.opponent_model)
