"""game_rules package."""
