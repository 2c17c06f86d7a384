"""The world samplers of Hanabi and crazy eights (``planners.worlds``): every draw replays the acting player's
observations step by step in the real engine, late in the game too (Hanabi's empty deck and last round, crazy
eights' cards drawn from the stock and eights turned back); the draws follow the exact posterior where it can
be enumerated or written down; a wrong sampler is refused by the self-test, and gt-ismcts plays both games."""

from __future__ import annotations

import contextlib
import itertools
import json
import math
from collections import Counter
from collections.abc import Callable, Hashable

import numpy as np
import pyspiel
import pytest

from cwm.agents.specs import Settings, check_agent
from cwm.arena import tournament
from cwm.arena.plan import TournamentPlan
from cwm.types import CHANCE
from planners.config import SearchConfig
from planners.gt_resample import HistoryResampler
from planners.gt_sampler import GroundTruthSampler, decision_states, resampler_problem, resampler_self_test
from planners.worlds import CrazyEightsWorlds, HanabiWorlds, world_sampler, world_sampler_problem
from planners.worlds import hanabi as hanabi_worlds

FAST = Settings(search=SearchConfig(num_simulations=5, rollouts=1))
Z999 = 3.0902  # the standard normal's 99.9% quantile: each distribution test's false alarm rate is 0.1%


def observations(state: pyspiel.State, player: int) -> list[tuple[object, ...]]:
    """``player``'s view of every step of ``state``'s history: who is to move (or over) and its observation."""
    replay = state.get_game().new_initial_state()
    seen: list[tuple[object, ...]] = [(replay.current_player(), replay.observation_string(player))]
    for action in state.history():
        mover = replay.current_player()
        replay.apply_action(action)
        own = action if mover == player else None
        seen.append((own, replay.current_player(), replay.observation_string(player)))
    return seen


Policy = Callable[[pyspiel.State, np.random.Generator], int]


def uniform(state: pyspiel.State, rng: np.random.Generator) -> int:
    legal = state.legal_actions()
    return int(legal[rng.integers(len(legal))])


def careful(state: pyspiel.State, rng: np.random.Generator) -> int:
    """Hanabi play that seldom plays a card (so few lives are lost and the deck runs out)."""
    legal = state.legal_actions()
    quiet = [a for a in legal if "Play" not in state.action_to_string(state.current_player(), a)]
    pool = legal if not quiet or rng.random() < 0.08 else quiet
    return int(pool[rng.integers(len(pool))])


def game_states(game: pyspiel.Game, policy: Policy, rng: np.random.Generator) -> list[pyspiel.State]:
    """Every decision state of one game played by ``policy`` (chance by its probabilities)."""
    return decision_states(game, rng, policy)


def check_draws(game_string: str, policy: Policy, *, games: int, every: int, draws: int) -> list[pyspiel.State]:
    """Draws at every ``every``-th decision state of ``games`` seeded games; each draw's observations are the
    real ones at every step. Returns the states checked."""
    game = pyspiel.load_game(game_string)
    sampler = world_sampler(game)
    assert sampler is not None
    rng = np.random.default_rng(7)
    checked, changed = [], 0
    for _ in range(games):
        states = game_states(game, policy, rng)
        for state in states[::every] + states[-1:]:
            player = state.current_player()
            truth = observations(state, player)
            for _ in range(draws):
                world = sampler(state, player, rng)
                assert observations(world, player) == truth, (game_string, state.history())
                changed += world.history() != state.history()
            checked.append(state)
    assert changed > len(checked)  # the hidden cards are redrawn, not copied from the real history
    return checked


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_every_hanabi_draw_replays_the_players_observations_to_the_last_round(players):
    checked = check_draws(f"hanabi(players={players})", careful, games=2, every=3, draws=2)
    late = [s for s in checked if "Deck size: 0" in s.observation_string(0)]
    assert late, "no state with an empty deck was checked"
    hinted = [s for s in checked if any(k != "RYGWB12345" for k in _own_knowledge(s))]
    assert len(hinted) > len(checked) // 2, "too few states where the hints narrowed the player's hand"


def _own_knowledge(state: pyspiel.State) -> list[str]:
    """What the hints allow of each card of the acting player's hand, as its observation shows it."""
    lines = state.observation_string(state.current_player()).splitlines()
    own = lines[lines.index("Hands:") + 1:lines.index("-----")]
    return [line.split("|")[-1] for line in own if "||" in line]


def test_hanabi_draws_replay_after_plays_that_lost_lives():
    check_draws("hanabi(players=2)", uniform, games=6, every=1, draws=2)


@pytest.mark.parametrize("players", [2, 3, 5])
def test_every_crazy_eights_draw_replays_the_players_observations(players):
    checked = check_draws(f"crazy_eights(players={players})", uniform, games=2, every=6, draws=2)
    drawn = [s for s in checked if _opponent_drew_then_played(s)]
    assert drawn, "no state where an opponent played after drawing from the stock"


def _opponent_drew_then_played(state: pyspiel.State) -> bool:
    steps = [(s.player, s.action) for s in state.full_history()]
    player = state.current_player()
    drew = {who for who, a in steps if who not in (CHANCE, player) and a == 52}
    return any(who in drew and a < 52 for who, a in steps if who not in (CHANCE, player))


def test_crazy_eights_draws_replay_where_eights_were_turned_back():
    game = pyspiel.load_game("crazy_eights(players=3)")
    sampler, rng = CrazyEightsWorlds(game), np.random.default_rng(3)
    found = 0
    for _ in range(60):
        states = game_states(game, uniform, rng)
        if len(states[0].history()) <= 17:  # the dealer's choice, 15 cards, the starting card: nothing turned back
            continue
        found += 1
        for state in states[:3] + states[-1:]:
            player = state.current_player()
            for _ in range(3):
                assert observations(sampler(state, player, rng), player) == observations(state, player)
    assert found >= 2


def chi_square_passes(counts: Counter, expected: dict[Hashable, float]) -> bool:
    """Pearson's chi-square test of ``counts`` against the probabilities ``expected`` at a 0.1% false alarm
    rate (the quantile by Wilson and Hilferty's approximation); a value outside ``expected`` fails."""
    n = sum(counts.values())
    if set(counts) - set(expected):
        return False
    stat = sum((counts.get(v, 0) - n * p) ** 2 / (n * p) for v, p in expected.items())
    k = len(expected) - 1
    quantile = k * (1 - 2 / (9 * k) + Z999 * math.sqrt(2 / (9 * k))) ** 3
    return stat <= quantile


TINY_HANABI = "hanabi(players=2,colors=2,ranks=2,hand_size=2)"  # 8 cards: R1 R1 R1 R2 Y1 Y1 Y1 Y2


def _play(game: pyspiel.Game, names: list[str]) -> pyspiel.State:
    state = game.new_initial_state()
    for name in names:
        player = state.current_player()
        moves = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        state.apply_action({state.action_to_string(player, a): a for a in moves}[name])
    return state


def _hand(sampler: HanabiWorlds, state: pyspiel.State, player: int) -> tuple[int, ...]:
    steps = [(int(s.player), int(s.action)) for s in state.full_history()]
    return tuple(steps[i][1] for i in sampler.hand_events(steps, player))


@pytest.mark.parametrize("script", [
    # player 0 is told both its cards are 1s
    ["(Deal R1)", "(Deal Y1)", "(Deal R1)", "(Deal R2)", "(Reveal player +1 rank 1)", "(Reveal player +1 rank 1)"],
    # then plays its first card, draws, and is told which of its cards are yellow
    ["(Deal R1)", "(Deal Y1)", "(Deal R1)", "(Deal R2)", "(Reveal player +1 rank 1)", "(Reveal player +1 rank 1)",
     "(Play 0)", "(Deal Y2)", "(Reveal player +1 color Y)"],
    # nothing told: every pair of unseen cards
    ["(Deal R1)", "(Deal Y1)", "(Deal Y1)", "(Deal Y2)"],
])
def test_hanabi_draws_follow_the_enumerated_posterior(script):
    """The exact posterior of player 0's hand, enumerated by the generic resampler over every history with
    the other player's actions weighted alike (the model the world sampler draws from), against 4,000 draws."""
    game = pyspiel.load_game(TINY_HANABI)
    state = _play(game, script)
    player = state.current_player()
    assert player == 0
    sampler = HanabiWorlds(game)
    alike = HistoryResampler(opponent_policy=lambda s, p: [(a, 0.5) for a in s.legal_actions()])
    posterior = alike.posterior(state, player)
    assert posterior is not None
    exact = posterior.distribution(lambda s: _hand(sampler, s, player))
    rng = np.random.default_rng(11)
    counts = Counter(_hand(sampler, sampler(state, player, rng), player) for _ in range(4000))
    assert len(exact) >= 2 and chi_square_passes(counts, exact), (exact, counts)


def test_a_sampler_that_ignores_the_hints_fails_the_distribution_test():
    """The test above can fail: a sampler that drops every hint draws hands the hints rule out."""
    class Hintless(HanabiWorlds):
        def plausible(self, observation: str) -> list[set[int]]:
            return [set(range(4)) for _ in super().plausible(observation)]

    game = pyspiel.load_game(TINY_HANABI)
    state = _play(game, ["(Deal R1)", "(Deal Y1)", "(Deal R1)", "(Deal R2)", "(Reveal player +1 rank 1)",
                         "(Reveal player +1 color R)"])
    sampler, honest = Hintless(game), HanabiWorlds(game)
    rng = np.random.default_rng(11)
    worlds = []
    for _ in range(400):
        with contextlib.suppress(pyspiel.SpielError):  # a hint the drawn hand could not have been given
            worlds.append(sampler(state, 0, rng))
    counts = Counter(_hand(honest, w, 0) for w in worlds)
    posterior = HistoryResampler(opponent_policy=lambda s, p: [(a, 0.5) for a in s.legal_actions()]).posterior(state, 0)
    assert posterior is not None
    exact = posterior.distribution(lambda s: _hand(honest, s, 0))
    assert not chi_square_passes(counts, exact)


def test_crazy_eights_unseen_cards_are_spread_as_the_hands_and_stock_hold_them():
    """Every card the player has not seen is equally likely to be anywhere it could be: in an opponent's hand
    with probability (cards in that hand) / (unseen cards), in the stock with the rest."""
    game = pyspiel.load_game("crazy_eights(players=3)")
    rng = np.random.default_rng(5)
    state = game_states(game, uniform, rng)[30]
    player = state.current_player()
    sampler = CrazyEightsWorlds(game)
    steps = [(int(s.player), int(s.action)) for s in state.full_history()]
    receivers = sampler.receivers(steps)
    played = {a for who, a in steps if who != CHANCE and a < 52}
    mine = {steps[i][1] for i, r in enumerate(receivers) if r == player}
    starter = next(a for i, (who, a) in enumerate(steps) if i > 15 and receivers[i] is None and who == CHANCE)
    unseen = sorted(set(range(52)) - played - mine - {starter})
    sizes = {q: sum(1 for i, r in enumerate(receivers) if r == q) - sum(1 for who, a in steps if who == q and a < 52)
             for q in range(3) if q != player}
    card = unseen[0]
    expected: dict[Hashable, float] = {q: n / len(unseen) for q, n in sizes.items()}
    expected["stock"] = 1 - sum(sizes.values()) / len(unseen)

    def where(world: pyspiel.State) -> Hashable:
        held = [(i, r) for i, r in enumerate(sampler.receivers(steps)) if r is not None and r != player]
        history = world.history()
        for q in sizes:
            got = [history[i] for i, r in held if r == q]
            gone = [a for who, a in steps if who == q and a < 52]
            if card in got and card not in gone:
                return q
        return "stock"

    counts = Counter(where(sampler(state, player, rng)) for _ in range(3000))
    assert chi_square_passes(counts, expected), (counts, expected)


def test_the_self_test_passes_the_world_samplers_and_refuses_a_wrong_one():
    for name in ("hanabi(players=2)", "hanabi(players=5)", "crazy_eights(players=3)"):
        game = pyspiel.load_game(name)
        assert resampler_problem(game) == "" and resampler_self_test(game) == "", name

    class Hintless(HanabiWorlds):
        def plausible(self, observation: str) -> list[set[int]]:
            return [set(range(25)) for _ in super().plausible(observation)]

    game = pyspiel.load_game("hanabi(players=2)")
    verdict = resampler_self_test(game, sampler=Hintless(game))
    assert "world sampler of hanabi drew" in verdict and "inconsistent with the player's observations" in verdict


def test_parameters_a_world_sampler_does_not_serve_are_named_and_left_to_the_generic_resampler():
    for name, part in [("hanabi(players=2,random_start_player=true)", "random_start_player"),
                       ("crazy_eights(players=3,reshuffle=true)", "reshuffle"),
                       ("crazy_eights(players=3,use_special_cards=true)", "special cards")]:
        game = pyspiel.load_game(name)
        assert world_sampler(game) is None and part in world_sampler_problem(game)
    with pytest.raises(ValueError, match="not Hanabi"):
        HanabiWorlds(pyspiel.load_game("leduc_poker"))


def test_gt_ismcts_plays_a_hanabi_team_game_with_the_world_sampler(tmp_path):
    check_agent("gt-ismcts", "hanabi", settings=FAST)
    check_agent("gt-ismcts-py", "crazy_eights_3p", settings=FAST)
    out = tmp_path / "hanabi"
    tournament("hanabi", ["random", "gt-ismcts"], TournamentPlan(matches=1, settings=FAST), out_dir=out,
               executor="inline", progress=False)
    data = json.loads((out / "results.json").read_text())
    assert {t["team"] for t in data["teams"]} == {"random+random", "gt-ismcts+random", "gt-ismcts+gt-ismcts"}
    assert data["mostly_fallback"] == {}
    rows = [json.loads(line) for line in (out / "matches.jsonl").read_text().splitlines()]
    assert rows and all(not r.get("forfeit") for r in rows)


def test_the_ground_truth_sampler_uses_the_world_sampler():
    game = pyspiel.load_game("crazy_eights(players=3)")
    state = game_states(game, uniform, np.random.default_rng(2))[10]
    sampler = GroundTruthSampler()
    world = sampler(state, state.current_player(), np.random.default_rng(0))
    assert observations(world, state.current_player()) == observations(state, state.current_player())
    assert sampler.kinds == {str(game): "game"} and sampler.stats()["game_draws"] == 1


@pytest.mark.parametrize("tries", [hanabi_worlds._REJECTION_TRIES, 0])
def test_distinct_card_picks_are_uniform_by_rejection_and_by_enumeration(monkeypatch, tries):
    """The two ways a hand's cards are picked (rejection, and the enumeration it falls back on) give every
    tuple of distinct allowed cards the same chance."""
    monkeypatch.setattr(hanabi_worlds, "_REJECTION_TRIES", tries)
    allowed = [np.array([0, 1]), np.array([0, 1, 2]), np.array([1, 3])]
    valid = [t for t in itertools.product(*allowed) if len(set(t)) == 3]
    rng = np.random.default_rng(4)
    counts = Counter(tuple(hanabi_worlds._distinct_picks(allowed, rng)) for _ in range(3000))
    assert chi_square_passes(counts, {tuple(int(x) for x in t): 1 / len(valid) for t in valid}), counts
