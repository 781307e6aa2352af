"""Process plumbing the rest of the package leans on: numerics settings, install hints, moved module paths.

Nothing here is public API. Modules of this room import only the standard library (and NumPy), never
another module of ``agentgym_budget``, so every other room may import them.
"""

__all__: list[str] = []
