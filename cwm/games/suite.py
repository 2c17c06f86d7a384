"""The suite's further games: OpenSpiel games with three or more players, asymmetric seats, closed decks and
multi-stage scoring, registered beside the built-in ones (docs/games.md, "The suite").

Each entry names its ground truth with the parameters that keep a game at tens to a few hundred moves, and
its rules in both tiers (``game_rules/<name>.md`` and ``game_rules/prose/<name>.md``).
"""

from __future__ import annotations

from cwm.games.registry import GameSpec, register

SUITE: list[GameSpec] = [
    GameSpec("kuhn_poker_3p", "kuhn_poker(players=3)", "kuhn_poker_3p.md", 3, "imperfect", True, False, "payoff",
             view="text", description="three-player Kuhn poker: four cards, one bet, highest card that stays wins"),
    GameSpec("pig_3p", "pig(players=3,winscore=20)", "pig_3p.md", 3, "perfect", True, False, "win/draw/loss",
             view="text", description="three-player Pig dice race to 20: roll on or bank, a 1 loses the turn"),
    GameSpec("goofspiel_3p", "goofspiel(num_cards=5,players=3,points_order=random,returns_type=win_loss)",
             "goofspiel_3p.md", 3, "imperfect", True, False, "win/draw/loss", turn_based=True, view="text",
             description="three-player Goofspiel with five cards: secret bids for random point cards"),
    GameSpec("dots_and_boxes", "dots_and_boxes(num_rows=3,num_cols=3)", "dots_and_boxes.md", 2, "perfect", False,
             False, "win/draw/loss", view="text",
             description="dots and boxes on 3x3 boxes: close a box, claim it and draw again"),
    GameSpec("fox_and_hounds", "fox_and_hounds", "fox_and_hounds.md", 2, "perfect", False, False, "win/draw/loss",
             module="game_rules.fox_and_hounds", view="json", asymmetric=True,
             description="6x6 chase: three forward-only hounds trap a fox that tries to reach their home row"),
    GameSpec("contraband", "contraband", "contraband.md", 2, "imperfect", False, True, "payoff",
             module="game_rules.contraband", view="json", asymmetric=True,
             description="smuggler packs hidden goods over 4 rounds, inspector may open 2 crates"),
    GameSpec("crazy_eights_3p", "crazy_eights(players=3)", "crazy_eights_3p.md", 3, "imperfect", True, False,
             "payoff", view="text",
             description="three-player crazy eights from a closed stock: match suit or rank, eights wild"),
    GameSpec("breakthrough", "breakthrough(rows=6,columns=6)", "breakthrough.md", 2, "perfect", False, False,
             "win/draw/loss", view="text", description="6x6 breakthrough: pawns race forward and capture diagonally"),
    GameSpec("mancala", "mancala", "mancala.md", 2, "perfect", False, False, "win/draw/loss", view="text",
             description="Kalah with six pits and four seeds: sow, capture opposite, extra move from the store"),
    GameSpec("oware", "oware", "oware.md", 2, "perfect", False, False, "win/draw/loss", view="text",
             description="Oware Abapa: sow twelve houses, capture twos and threes, feed the opponent, no grand slam"),
    GameSpec("hearts", "hearts_deal", "hearts.md", 4, "imperfect", True, False, "payoff",
             module="game_rules.hearts_deal", view="json",
             description="four-player hearts, one deal: passing, 13 tricks, hearts and the queen of spades score"),
]
for _spec in SUITE:
    register(_spec)
