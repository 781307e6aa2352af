"""Thread-safe TextWorld parsing: one TatSu parser per thread instead of one per process.

TextWorld parses its logic, its text grammars, PDDL domains and ALFWorld's context-sensitive
grammars with TatSu parsers kept in module globals (``textworld.logic._PARSER``,
``textworld.textgen.TextGrammar._PARSER``, ``textworld.envs.pddl.logic._PARSER`` and
``textworld.envs.pddl.textgen._PARSER``). A TatSu parser keeps the state of the parse in
progress (rule stack, AST stack, memo tables) in the parser object, so two threads parsing
at the same time corrupt each other's parse: ``IndexError: pop from empty list`` or spurious
``FailedParse`` errors, while loading a game (``Game.load``), generating one, or loading an
ALFWorld game.

The PDDL parsers exist only where TextWorld's ``pddl`` extra is installed (its planner,
``fast_downward``, comes with ``alfworld``); without it they are left alone, so a base install
never imports the planner.

:func:`make_parsers_thread_safe` replaces each of these globals by a :class:`ThreadLocalParser`,
which gives every thread a parser of its own, built on first use (~0.1 ms) with the same
parser class, a fresh instance of the same semantics class and the same options: parses are
unchanged and threads never wait for each other. It is idempotent; the modules of this package
that drive TextWorld call it when they are imported.

Example:
    >>> make_parsers_thread_safe()
    >>> import textworld.logic
    >>> isinstance(textworld.logic._PARSER, ThreadLocalParser)
    True
    >>> str(textworld.logic.Proposition.parse("at(P, r)"))
    'at(P, r)'
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["make_parsers_thread_safe"]


class ThreadLocalParser:
    """Stands in for one shared TatSu parser: each thread parses with its own copy.

    Args:
        shared: The parser being replaced (its class, semantics class and ``parseinfo`` are reused).
    """

    def __init__(self, shared: Any) -> None:
        self.shared = shared
        self._parser_type = type(shared)
        self._semantics_type = type(shared.semantics)
        self._parseinfo = bool(shared.config.parseinfo)
        self._local = threading.local()

    def parser(self) -> Any:
        """The calling thread's parser (built on first use)."""
        parser = getattr(self._local, "parser", None)
        if parser is None:
            parser = self._parser_type(semantics=self._semantics_type(), parseinfo=self._parseinfo)
            self._local.parser = parser
        return parser

    def parse(self, *args: Any, **kwargs: Any) -> Any:
        """``parse`` on the calling thread's parser (same arguments as TatSu's ``Parser.parse``)."""
        return self.parser().parse(*args, **kwargs)


_INSTALL_LOCK = threading.Lock()


def make_parsers_thread_safe() -> None:
    """Replace TextWorld's shared TatSu parsers by :class:`ThreadLocalParser` (idempotent).

    The PDDL parsers are replaced only when TextWorld's PDDL support (``fast_downward``) is installed.
    """
    import textworld.logic as logic
    import textworld.textgen as textgen

    holders: list[Any] = [logic, textgen.TextGrammar, *_pddl_parser_holders()]
    with _INSTALL_LOCK:
        for holder in holders:
            shared = holder._PARSER
            if not isinstance(shared, ThreadLocalParser):
                holder._PARSER = ThreadLocalParser(shared)


def _pddl_parser_holders() -> list[Any]:
    """TextWorld's PDDL parser modules, or none where its planner (``textworld[pddl]``) is not installed."""
    try:
        import textworld.envs.pddl.logic as pddl_logic
        import textworld.envs.pddl.textgen as pddl_textgen
    except ModuleNotFoundError as error:
        if error.name != "fast_downward":
            raise
        return []
    return [pddl_logic, pddl_textgen]
