"""WebShop under hostile input (issue 38): long searches leave no memory behind; a looping data file is a DataError."""

from __future__ import annotations

import gc
import os
import tracemalloc

import gymnasium as gym
import pytest

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.errors import DataError
from agentgym_budget.tasks.webshop.search import CACHED_WORD_CHARS, tokenize


def test_long_searches_are_not_remembered():
    """300 searches of one distinct 64 KiB word each: the stem cache kept about 40 MB of them for good."""
    tokenize("warm up the stemmer")
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(300):
            assert len(tokenize(f"shoes {i:04d}" + "q" * 65_536)) == 2
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 1 << 20, f"{kept:,} bytes kept after 300 long searches"


def test_short_words_are_still_stemmed_the_same_with_or_without_the_cache():
    words = ["running", "shoes", "x" * CACHED_WORD_CHARS + "ing", "cables", "q" * 40]
    assert tokenize(" ".join(words)) == [tokenize(word)[0] for word in words]


def test_a_symlink_loop_as_the_products_file_is_a_data_error(tmp_path):
    os.symlink(tmp_path / "items_shuffle.json", tmp_path / "items_shuffle.json")
    (tmp_path / "items_ins_v2.json").write_text("{}")
    (tmp_path / "items_human_ins.json").write_text("{}")
    with pytest.raises(DataError, match=r"items_shuffle\.json \(a symlink loop\)"):
        gym.make("agentgym_budget/WebShop-Data-v0", data_dir=str(tmp_path)).reset(seed=0)


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_products_file_that_is_not_a_regular_file_is_a_data_error(tmp_path, kind):
    target = tmp_path / "items_shuffle.json"
    os.mkfifo(target) if kind == "fifo" else target.mkdir()
    (tmp_path / "items_ins_v2.json").write_text("{}")
    (tmp_path / "items_human_ins.json").write_text("{}")
    with pytest.raises(DataError, match="items_shuffle"):
        gym.make("agentgym_budget/WebShop-Data-v0", data_dir=str(tmp_path)).reset(seed=0)
