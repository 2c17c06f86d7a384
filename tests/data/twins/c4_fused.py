"""TEST FIXTURE, PARTLY HAND-WRITTEN: a fast twin of connect four's real world model (the model of the shipped
real world-model session, cwm.pipeline.recordings) with its own playout loop (cwm.contract.PLAYOUT).

Every function but ``playout`` is the accepted twin of an earlier real fast-twin session of this model (answered
by an LLM before the fast prompts asked for ``playout``; cwm/data/recordings/twins/connect_four.fast.jsonl now
holds a later session whose twin writes its own), copied unchanged; ``playout`` and
``_OPEN_COLUMNS`` were written by hand (not LLM output): a whole random playout on bitboards and heights the
loop owns (one draw per move, the legal columns in get_legal_actions' order), the board rebuilt only when the
limit cuts the game off.
"""

ROWS = 6
COLS = 7
SYMBOLS = ("x", "o")
EMPTY = "."
TERMINAL_PLAYER = -4
_NCELLS = ROWS * COLS
_ALL_OPEN = (1 << COLS) - 1

# Legal action tuples indexed by [player][open-column bitmask].
_LEGAL = tuple(
    tuple(
        tuple(SYMBOLS[p] + str(c) for c in range(COLS) if (m >> c) & 1)
        for m in range(1 << COLS)
    )
    for p in (0, 1)
)

# Canonical action strings -> (player, column).
_ACTIONS = {}
for _p in (0, 1):
    for _c in range(COLS):
        _ACTIONS[SYMBOLS[_p] + str(_c)] = (_p, _c)

# Reward codes: 0 -> no result / draw, 1 -> player 0 won, 2 -> player 1 won.
_REWARDS = ((0.0, 0.0), (1.0, -1.0), (-1.0, 1.0))

# Bit index of (col, row) on a 7-bits-per-column bitboard (row 6 is a sentinel).
_BIT = tuple(tuple(1 << (c * 7 + r) for r in range(ROWS)) for c in range(COLS))
_CLOSE = tuple(_ALL_OPEN & ~(1 << c) for c in range(COLS))


def _wins(b):
    m = b & (b >> 1)
    if m & (m >> 2):
        return True
    m = b & (b >> 7)
    if m & (m >> 14):
        return True
    m = b & (b >> 6)
    if m & (m >> 12):
        return True
    m = b & (b >> 8)
    if m & (m >> 16):
        return True
    return False


def _parse_action(action):
    action = str(action)
    if len(action) < 2:
        raise ValueError("Illegal action: %r" % (action,))
    sym = action[0]
    try:
        col = int(action[1:])
    except ValueError:
        raise ValueError("Illegal action: %r" % (action,))
    return sym, col


def get_initial_state() -> dict:
    """The state before any move (chance included)."""
    return {
        "board": [[EMPTY] * COLS for _ in range(ROWS)],
        "player": 0,
        "terminal": False,
        "winner": "",
        "reward": 0,
        "n": 0,
        "heights": [0] * COLS,
        "bits": [0, 0],
        "open": _ALL_OPEN,
    }


def get_current_player(state: dict) -> int:
    """Who acts at `state`: a player, chance, or no one once the game is over."""
    if state["terminal"]:
        return TERMINAL_PLAYER
    return state["player"]


def get_legal_actions(state: dict) -> list:
    """The legal actions at `state`."""
    if state["terminal"]:
        return []
    return list(_LEGAL[state["player"]][state["open"]])


def get_chance_outcomes(state: dict) -> list:
    """Every chance outcome at `state` with its probability."""
    return []


def apply_action(state: dict, action: str) -> dict:
    """The state after `action` is taken at `state`."""
    if state["terminal"]:
        raise ValueError("Game is over")
    player = state["player"]
    pc = _ACTIONS.get(action) if type(action) is str else None
    if pc is None:
        sym, col = _parse_action(action)
        if sym != SYMBOLS[player] or col < 0 or col >= COLS:
            raise ValueError("Illegal action: %r" % (action,))
    else:
        p, col = pc
        if p != player:
            raise ValueError("Illegal action: %r" % (action,))
        sym = SYMBOLS[player]

    heights = state["heights"]
    row = heights[col]
    if row >= ROWS:
        raise ValueError("Column full: %r" % (action,))

    old_board = state["board"]
    board = list(old_board)
    new_row = old_board[row][:]
    new_row[col] = sym
    board[row] = new_row

    new_heights = list(heights)
    new_heights[col] = row + 1

    open_mask = state["open"]
    if row + 1 == ROWS:
        open_mask &= _CLOSE[col]

    bits = state["bits"]
    mine = bits[player] | _BIT[col][row]
    if player == 0:
        new_bits = [mine, bits[1]]
    else:
        new_bits = [bits[0], mine]

    n = state["n"] + 1

    terminal = False
    winner = ""
    reward = 0
    if _wins(mine):
        terminal = True
        winner = sym
        reward = 1 + player
    elif n >= _NCELLS or not open_mask:
        terminal = True
        winner = "draw"

    return {
        "board": board,
        "player": 1 - player,
        "terminal": terminal,
        "winner": winner,
        "reward": reward,
        "n": n,
        "heights": new_heights,
        "bits": new_bits,
        "open": open_mask,
    }


def get_observations(state: dict) -> list:
    """One observation per player (index = player id)."""
    terminal = state["terminal"]
    if terminal:
        cp = "Terminal"
    else:
        cp = SYMBOLS[state["player"]]
    b = state["board"]
    winner = state["winner"]
    return [
        {
            "board": [r[:] for r in b],
            "current_player": cp,
            "is_terminal": terminal,
            "winner": winner,
        },
        {
            "board": [r[:] for r in b],
            "current_player": cp,
            "is_terminal": terminal,
            "winner": winner,
        },
    ]


def get_rewards(state: dict) -> list:
    """One reward per player for the move that led to `state`."""
    return list(_REWARDS[state["reward"]])


# The open columns (ascending: get_legal_actions' order) of each open-column bitmask.
_OPEN_COLUMNS = tuple(tuple(c for c in range(COLS) if (m >> c) & 1) for m in range(1 << COLS))


def playout(state, returns, rand, limit):
    if state["terminal"]:
        return returns, None
    player, n, open_mask = state["player"], state["n"], state["open"]
    heights, bits = list(state["heights"]), list(state["bits"])
    moves = []
    while len(moves) < limit:
        columns = _OPEN_COLUMNS[open_mask]
        col = columns[int(rand() * len(columns))]
        row = heights[col]
        heights[col] = row + 1
        if row + 1 == ROWS:
            open_mask &= _CLOSE[col]
        mine = bits[player] | _BIT[col][row]
        bits[player] = mine
        n += 1
        moves.append((row, col, player))
        if _wins(mine):
            paid = _REWARDS[1 + player]
            return [returns[0] + paid[0], returns[1] + paid[1]], None
        if n >= _NCELLS or not open_mask:
            return returns, None
        player = 1 - player
    board = [list(r) for r in state["board"]]
    for row, col, who in moves:
        board[row][col] = SYMBOLS[who]
    return returns, {"board": board, "player": player, "terminal": False, "winner": "", "reward": 0, "n": n,
                     "heights": heights, "bits": bits, "open": open_mask}
