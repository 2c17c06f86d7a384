"""A tournament's standings as one object (``Standings``): the results table, the leaderboard and the
paired comparisons of a list of matches or of a results folder, for a notebook (``_repr_html_``) or a
terminal (``markdown``).

A results folder is untrusted (``docs/security.md``): it is read as data, without writing to it
(``cwm.arena.replay``), and every label and reason it holds is shown through ``cwm.text.html_text``, as text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from cwm import games
from cwm.arena import compare
from cwm.arena import ratings as arena_ratings
from cwm.arena import replay as arena_replay
from cwm.arena import report as arena_report
from cwm.arena import teams as arena_teams
from cwm.arena.types import MatchResult
from cwm.text import html_block, html_heading, html_paragraph, html_table
from cwm.types import JSON


@dataclasses.dataclass(frozen=True)
class Standings:
    """The finished matches of one tournament and what the reports make of them.

    Attributes:
      game: the game's name as recorded.
      results: the matches (void ones included: the tables leave them out).
      spec: the game, when known here (a registered or OpenSpiel game, or the one given): the paired
        comparisons need its utility range; ``None`` leaves them out.
    """

    game: str
    results: tuple[MatchResult, ...]
    spec: games.GameSpec | None = None

    @classmethod
    def of(cls, game: str | games.GameSpec, results: Sequence[MatchResult]) -> Standings:
        """The standings of ``results`` (``cwm.arena.tournament``'s return) on ``game``."""
        spec = games.resolve(game)
        return cls(spec.name, tuple(results), spec)

    @classmethod
    def read(cls, out_dir: Path | str, game: str | games.GameSpec | None = None) -> Standings:
        """The standings of the results folder ``out_dir``, read as data (nothing in it written or imported).

        Args:
          game: the game, for a folder whose recorded game is a module (default: the recorded game when it
            is a registered or OpenSpiel game; otherwise no comparisons).

        Raises:
          ReplayError, ArenaError: no ``matches.jsonl``, or a damaged row (names the file and line).
        """
        folder = Path(out_dir)
        results = arena_replay.results_of(folder)
        try:
            spec = arena_replay.folder_game(folder, game)
        except arena_replay.ReplayError:
            spec = None
        name = arena_replay.recorded_game(folder) or (spec.name if spec is not None else "?")
        return cls(name, tuple(results), spec)

    @property
    def outcome(self) -> str:
        """``payoff`` for a game scored by payoff, else ``win/draw/loss``."""
        return "payoff" if self.spec is not None and self.spec.outcome == "payoff" else "win/draw/loss"

    @property
    def rows(self) -> list[dict[str, JSON]]:
        """One row per agent, opponent and seat (``cwm.arena.report.summarize``)."""
        return arena_report.summarize(self.results)

    @property
    def leaderboard(self) -> list[dict[str, JSON]]:
        """One row per agent, best rating first (``cwm.arena.ratings.leaderboard``)."""
        return arena_ratings.leaderboard(self.results)

    @property
    def comparisons(self) -> list[dict[str, JSON]]:
        """The paired comparisons (``cwm.arena.compare``); empty when the game is not known here."""
        return arena_report.paired_comparisons(self.spec, self.results) if self.spec is not None else []

    @property
    def teams(self) -> list[dict[str, JSON]] | None:
        """A cooperative game's team rows (``cwm.arena.teams``), out of its best score; ``None`` for any other
        game, or one not known here."""
        if self.spec is None or not arena_teams.cooperative(self.spec):
            return None
        gt = games.load_game(self.spec)
        return arena_teams.team_rows(self.results, max_score=float(gt.max_utility()),
                                     min_score=float(gt.min_utility()))

    def _team_markdown(self, rows: list[dict[str, JSON]]) -> str:
        assert self.spec is not None
        return arena_teams.markdown(rows, arena_teams.team_comparisons(self.results),
                                    reference=arena_teams.reference_line(self.spec))

    def markdown(self) -> str:
        """The leaderboard, the results table and the paired comparisons, as markdown (a cooperative game:
        the team scores)."""
        if (teams := self.teams) is not None:
            return self._team_markdown(teams)
        return "\n".join(filter(None, [arena_ratings.markdown(self.leaderboard),
                                       arena_report.markdown(self.rows, outcome=self.outcome),
                                       compare.markdown(self.comparisons)]))

    def _repr_html_(self) -> str:
        """The standings as a notebook shows them: leaderboard, results per pairing, paired comparisons and
        the forfeits' reasons, every label and reason escaped (a cooperative game: the team scores)."""
        if (teams := self.teams) is not None:
            return html_block(html_heading(f"{self.game}: arena, {len(self.results)} matches"),
                              html_heading("team scores", level=5),
                              html_table(["team", "deals (matches)", "mean score [95% CI]"],
                                         [[r["team"], f"{r['deals']} ({r['matches']})", arena_teams.score_cell(r)]
                                          for r in teams]),
                              html_paragraph(arena_teams.reference_line(self.spec) if self.spec else ""))
        head, body = arena_ratings.cells(self.leaderboard)
        rows = arena_report.pairings(self.rows)
        parts = [html_heading(f"{self.game}: arena, {len(self.results)} matches"),
                 html_heading("leaderboard", level=5), html_table(head, body),
                 html_heading("results", level=5), html_table(*_results(rows, self.outcome)),
                 html_heading("paired comparisons", level=5), _comparisons(self.comparisons)]
        # every agent's own pooled rows: a pairing's row shows one side, and the other side forfeits too
        reasons = [(r["agent"], r["opponent"], reason) for r in self.rows if r["seat"] == "all"
                   for reason in _strings(r.get("forfeit_reasons"))]
        if reasons:
            parts += [html_heading("forfeits", level=5), html_table(["agent", "opponent", "reason"], reasons)]
        return html_block(*parts)


def _results(rows: Sequence[dict[str, JSON]], outcome: str) -> tuple[list[str], list[list[object]]]:
    if outcome == "payoff":
        return (["agent", "opponent", "n", "mean payoff [95% CI]", "forfeits (ill/exc/time/crash)"],
                [[r["agent"], r["opponent"], r["matches"],
                  f"{r['mean_payoff']:+.3f} [{r['payoff_lo']:+.3f}, {r['payoff_hi']:+.3f}]",
                  arena_report.forfeit_counts(r)] for r in rows])
    return (["agent", "opponent", "n", "win [95% CI]", "draw", "loss", "forfeits (ill/exc/time/crash)"],
            [[r["agent"], r["opponent"], r["matches"], f"{r['win_rate']:.2f} [{r['win_lo']:.2f}, {r['win_hi']:.2f}]",
              f"{r['draw_rate']:.2f}", f"{r['loss_rate']:.2f}", arena_report.forfeit_counts(r)] for r in rows])


def _comparisons(rows: Sequence[dict[str, JSON]]) -> str:
    if not rows:
        return html_paragraph("none: no seat-swapped pairs, or the game is not known here")
    head = ["agent", "opponent", "matches (pairs)", "score" if rows[0]["outcome"] != "payoff" else "edge",
            "95% CI", "MDE (80% power)", "verdict"]
    body = [[r["agent"], r["opponent"], f"{r['matches']} ({r['pairs']})", compare.shown(r, float(r["mean"])),  # type: ignore[arg-type]
             f"[{compare.shown(r, float(r['lo']))}, {compare.shown(r, float(r['hi']))}]",  # type: ignore[arg-type]
             "-" if r["mde"] is None else "±" + compare.shown(r, float(r["mde"]), sign=False), r["verdict"]]  # type: ignore[arg-type]
            for r in rows]
    return html_table(head, body)


def _strings(value: JSON) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
