"""WebShop task family: find, customise and buy the product an instruction asks for.

Registered ids (all in the ``agentgym_budget`` namespace):

=========================  =====================================================================
``WebShop-v0``             built-in generated catalog of 10,000 products (``catalog_seed`` 0)
``WebShop-1k-v0``          the same generator with 1,000 products
``WebShop-10k-v0``         10,000 products (same shop as ``WebShop-v0``)
``WebShop-100k-v0``        100,000 products
``WebShop-Data-v0``        the real WebShop files from ``data_dir`` (``goals="human"`` or
                           ``"synthetic"``, ``num_products``)
=========================  =====================================================================

Every id takes ``split`` (``train`` / ``valid`` / ``test`` instructions),
``observation_format`` (``"clean"`` or WebShop's ``"webshop"`` ``[SEP]`` text) and
``search_anywhere``; generated ids also take ``num_products`` and ``catalog_seed``.
See :mod:`.env` for the reward, ``progress`` and ``info`` keys, :mod:`.session` for
pages and actions. Needs the ``webshop`` extra (``bm25s``, ``PyStemmer``, ``rapidfuzz``).
Importing this module registers the ids without importing any of them.

Example:
    >>> import agentgym_budget
    >>> [i.split("/")[1] for i in agentgym_budget.registered_ids("webshop")][:3]
    ['WebShop-100k-v0', 'WebShop-10k-v0', 'WebShop-1k-v0']
"""

from __future__ import annotations

from agentgym_budget.registration import declare_engine, register_env

__all__ = ["register"]

_ENV_MODULE = "agentgym_budget.tasks.webshop.env"

SIZED_IDS: dict[str, int] = {"WebShop-1k-v0": 1_000, "WebShop-10k-v0": 10_000, "WebShop-100k-v0": 100_000}
"""Sized ids of the generated catalog and their number of products."""

_NEEDS = {"extra": "webshop", "requires": ("bm25s", "Stemmer", "rapidfuzz")}


def register() -> None:
    """Register the WebShop ids with Gymnasium."""
    declare_engine("webshop", ("bm25s", "PyStemmer", "rapidfuzz"))  # the engine is ours; its search is theirs
    register_env(
        "WebShop-v0",
        f"{_ENV_MODULE}:WebShopEnv",
        family="webshop",
        description="Search, open, customise and buy the instructed product in a generated 10k-product shop.",
        kwargs={"num_products": 10_000},
        **_NEEDS,
    )
    for name, size in SIZED_IDS.items():
        register_env(
            name,
            f"{_ENV_MODULE}:WebShopEnv",
            family="webshop",
            description=f"WebShop on a generated catalog of {size:,} products.",
            kwargs={"num_products": size},
            **_NEEDS,
        )
    register_env(
        "WebShop-Data-v0",
        f"{_ENV_MODULE}:WebShopDataEnv",
        family="webshop",
        description="WebShop on the real WebShop product and instruction files (pass data_dir).",
        **_NEEDS,
    )


register()
