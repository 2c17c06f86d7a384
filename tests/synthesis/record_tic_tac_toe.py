"""Re-records cwm/data/recordings/tic_tac_toe.jsonl alone (``record_sessions.py`` records every session):

    python tests/synthesis/record_tic_tac_toe.py
"""

from __future__ import annotations

import sys

from record_sessions import main

if __name__ == "__main__":
    sys.exit(main(["tic_tac_toe"]))
