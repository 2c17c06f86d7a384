def get_initial_state(:
    return {}
