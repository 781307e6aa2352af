"""WebShop under hostile input: any query string, planted cache files, corrupt cache entries."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentgym_budget.storage.cache import CacheRepairWarning
from agentgym_budget.tasks.webshop.env import WebShopEnv
from agentgym_budget.tasks.webshop.generator import cached_catalog
from agentgym_budget.tasks.webshop.search import SearchIndex


@pytest.fixture(scope="module")
def env() -> WebShopEnv:
    return WebShopEnv(1_000, split="test", search_anywhere=True)


@pytest.mark.parametrize(
    "query", ["t-shirt size s", "men s running shoes", "s", "'s", "", " ", "!!!", "\u00e9\u00e8 s"]
)
def test_queries_that_stem_to_nothing_do_not_crash(env, query):
    env.reset(options={"task": 0})
    _, reward, terminated, _, _ = env.step(f"search[{query}]")
    assert not terminated and reward == 0.0
    results = env.shop.index.search(query)
    assert all(0 <= i < len(env.catalog) for i in results)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        st.text(max_size=40),
        st.text(alphabet=st.sampled_from(list("s'-.,!? \t\n[]")), max_size=60),
        st.text(min_size=2_000, max_size=6_000),
        st.lists(st.sampled_from(["s", "t", "shirt", "men", "'s", "a", "the", "10", "\u00fc"]), max_size=50).map(
            " ".join
        ),
    )
)
def test_no_query_string_crashes_a_search(env, query):
    results = env.shop.index.search(query)
    assert len(results) <= 50 and len(set(results)) == len(results)
    env.reset(options={"task": 1})
    obs, reward, terminated, _, info = env.step(f"search[{query}]")
    assert isinstance(obs, str) and not terminated and reward == 0.0
    assert info["admissible_actions"], "the page after any search is a page the agent can act on"


class _Payload:
    """Pickling this object makes the unpickler create a marker file: what a planted cache file could do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _entry(root: Path, namespace: str) -> Path:
    (entry,) = [p for p in (root / namespace).iterdir() if p.is_dir() and ".tmp-" not in p.name]
    return entry


def test_cache_entries_hold_no_code_and_planted_pickles_never_run(tmp_path):
    catalog = cached_catalog(200, 3, root=tmp_path)
    index = SearchIndex.build(catalog, root=tmp_path)
    expected, folder = index.search("shampoo"), index.folder
    del index  # its arrays are memory-mapped from the files replaced below
    for namespace in ("webshop-catalog", "webshop-index"):
        for path in _entry(tmp_path, namespace).iterdir():
            assert path.suffix in {".json", ".npy", ".sha256"}, path  # .sha256: the cache's content manifest
            if path.suffix == ".npy":
                assert np.load(path, allow_pickle=False).dtype != object
    marker = tmp_path / "code-ran"
    entry = _entry(tmp_path, "webshop-catalog")
    (entry / "catalog.pickle").write_bytes(pickle.dumps(_Payload(marker)))  # the old predictable path
    (folder / "indices.npy").unlink()
    np.save(folder / "indices.npy", np.array([_Payload(marker)], dtype=object), allow_pickle=True)
    assert cached_catalog(200, 3, root=tmp_path).products == catalog.products  # the stray pickle is not read
    with pytest.warns(CacheRepairWarning, match=r"indices\.npy differs from its checksum"):
        assert SearchIndex.build(catalog, root=tmp_path).search("shampoo") == expected
    assert not marker.exists(), "a planted pickle was unpickled"


@pytest.mark.parametrize(
    ("namespace", "name", "damage"),
    [
        ("webshop-catalog", "catalog.json", lambda b: b[: len(b) // 2]),  # truncated
        ("webshop-catalog", "catalog.json", lambda b: b"junk" + b),
        ("webshop-catalog", "catalog.json", lambda b: b.replace(b'"B0', b"7,", 1)),  # a field of the wrong type
        ("webshop-index", "vocab.json", lambda b: b"\x00\xff" + b[2:]),
        ("webshop-index", "indptr.npy", lambda b: b[:40]),
        ("webshop-index", "indices.npy", lambda b: b[:-4] + b"\xff\xff\xff\x7f"),  # a document id out of range
    ],
)
def test_corrupt_entries_are_rebuilt(tmp_path, namespace, name, damage):
    catalog = cached_catalog(200, 5, root=tmp_path)
    index = SearchIndex.build(catalog, root=tmp_path)
    expected = index.search("organic green tea")
    del index
    path = _entry(tmp_path, namespace) / name
    data = damage(path.read_bytes())
    path.unlink()  # a new file: the old one may still be memory-mapped
    path.write_bytes(data)
    with pytest.warns(CacheRepairWarning, match=rf"{name} differs from its checksum.*rebuilding it"):
        again = cached_catalog(200, 5, root=tmp_path)
        assert again.products == catalog.products and again.goals == catalog.goals
        assert SearchIndex.build(again, root=tmp_path).search("organic green tea") == expected
    assert json.loads((_entry(tmp_path, namespace) / "key.json").read_text())
