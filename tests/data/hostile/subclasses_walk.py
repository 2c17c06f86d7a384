# hostile: walking object.__subclasses__() to find a class that imports os
# job: call get_initial_state
# expect: static: line 6: access to dunder attribute

def get_initial_state():
    for cls in ().__class__.__bases__[0].__subclasses__():
        if cls.__name__ == "catch_warnings":
            return {"found": True}
    return {}
