# hostile: a format template built at run time walks to os.environ: no private name appears in the source
# job: call get_initial_state
# expect: static: line 11: 'format' is allowed only on a string literal
# ungated: error: module 'random' has no attribute '_os'

import random


def get_initial_state():
    template = "{0." + "_os.environ[GEMINI_API_KEY]}"
    return {"key": template.format(random)}
