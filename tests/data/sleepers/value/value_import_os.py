# sleeper: a bundle's value function that imports os to read the API key once planning calls it
# trigger: the first call of get_value
# export: refused: value.py failed its sandbox check: static: line 7: import of 'os' is not allowed
# load: refused: value.py failed its sandbox check: static: line 7: import of 'os' is not allowed
# arena: exception: value.py failed its sandbox check: static

import os


def get_value(state, player_id):
    return float(len(os.environ.get("GEMINI_API_KEY", "")))
