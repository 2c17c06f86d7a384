"""A gen. chess (army5x5a) world model written from game_rules/gen_chess.md alone (a check that the rules
suffice)."""

FILES = "ABCDE"


def get_initial_state():
    return {"rows": ["cigic", ".....", ".....", ".....", "CIGIC"], "to_move": 0, "plies": 0, "winner": None}


def _at(rows, f, r):  # file index 0..4, rank 1..5
    return rows[5 - r][f]


def _owner(piece):
    return 0 if piece.isupper() else 1


def _offsets(piece):
    kind = piece.upper()
    if kind == "G":
        return [(df, dr) for df in (-1, 0, 1) for dr in (-1, 0, 1) if (df, dr) != (0, 0)]
    if kind == "C":
        return [(1, 0), (-1, 0), (0, 1), (0, -1), (2, 2), (2, -2), (-2, 2), (-2, -2)]
    fwd = 1 if _owner(piece) == 0 else -1
    return [(0, fwd), (-1, fwd), (1, fwd), (-1, 0), (1, 0)]


def _moves(state):
    rows, player, out = state["rows"], state["to_move"], []
    for r in range(1, 6):
        for f in range(5):
            piece = _at(rows, f, r)
            if piece == "." or _owner(piece) != player:
                continue
            for df, dr in _offsets(piece):
                nf, nr = f + df, r + dr
                if 0 <= nf < 5 and 1 <= nr <= 5:
                    dest = _at(rows, nf, nr)
                    if dest == "." or _owner(dest) != player:
                        out.append(((r - 1) * 5 + f) * 25 + (nr - 1) * 5 + nf)
    return [f"{FILES[a // 25 % 5]}{a // 25 // 5 + 1}_to_{FILES[a % 25 % 5]}{a % 25 // 5 + 1}" for a in sorted(out)]


def get_current_player(state):
    return -4 if state["winner"] is not None or state["plies"] >= 100 else state["to_move"]


def get_chance_outcomes(state):
    return []


def get_legal_actions(state):
    if get_current_player(state) == -4:
        return []
    return _moves(state) or ["PASS"]


def apply_action(state, action):
    rows = [list(row) for row in state["rows"]]
    winner = state["winner"]
    if action != "PASS":
        src, dst = action.split("_to_")
        sf, sr, df, dr = FILES.index(src[0]), int(src[1]), FILES.index(dst[0]), int(dst[1])
        if rows[5 - dr][df].upper() == "G":
            winner = state["to_move"]
        rows[5 - dr][df], rows[5 - sr][sf] = rows[5 - sr][sf], "."
    return {"rows": ["".join(r) for r in rows], "to_move": 1 - state["to_move"], "plies": state["plies"] + 1,
            "winner": winner}


def get_observations(state):
    obs = {"board": list(state["rows"]), "to_move": state["to_move"], "plies": state["plies"]}
    return [obs, dict(obs)]


def get_rewards(state):
    if state["winner"] is None:
        return [0.0, 0.0]
    return [1.0, -1.0] if state["winner"] == 0 else [-1.0, 1.0]
