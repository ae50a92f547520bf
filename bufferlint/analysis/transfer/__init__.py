"""One function's abstract run: the interpreter, its expression and call semantics, and their effects."""
