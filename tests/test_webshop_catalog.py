"""WebShop catalog and instruction generation, search index and reward."""

from __future__ import annotations

import itertools

import bm25s
import numpy as np
import pytest

from agentgym_budget.errors import InvalidOptionError, UnknownSplitError
from agentgym_budget.tasks.webshop.catalog import Goal, Product, ProductDetails
from agentgym_budget.tasks.webshop.generator import cached_catalog, generate_catalog
from agentgym_budget.tasks.webshop.reward import (
    ProductText,
    compute_reward,
    fuzzy_score,
    normalize_color,
    title_nouns,
)
from agentgym_budget.tasks.webshop.search import BM25_PARAMS, MAX_QUERY_TOKENS, SearchIndex, tokenize
from agentgym_budget.tasks.webshop.taxonomy import PRODUCT_TYPES


@pytest.fixture(scope="module")
def catalog():
    return generate_catalog(1_000, seed=0)


@pytest.fixture(scope="module")
def index(catalog, tmp_path_factory):
    return SearchIndex.build(catalog, root=tmp_path_factory.mktemp("cache"))


# ---------------------------------------------------------------------- generator
@pytest.mark.slow
def test_generation_is_deterministic_and_seeded(catalog):
    again = generate_catalog(1_000, seed=0)
    assert again.products == catalog.products
    assert again.goals == catalog.goals
    assert [again.details(i) for i in (0, 5, 999)] == [catalog.details(i) for i in (0, 5, 999)]
    other = generate_catalog(1_000, seed=1)
    assert [p.asin for p in other.products] != [p.asin for p in catalog.products]
    assert generate_catalog(1_500, seed=0).products[:5] == catalog.products[:5]


def test_catalog_contents_are_realistic(catalog):
    products = catalog.products
    assert len({p.asin for p in products}) == len(products)
    assert all(len(p.asin) == 10 and p.asin.startswith("B0") and p.asin.isupper() for p in products)
    assert {p.category for p in products} == {"beauty", "electronics", "fashion", "food", "furniture"}
    assert len({p.query for p in products}) >= 80
    by_query = {q: t for t in PRODUCT_TYPES for q in t.queries}
    for product in products:
        ptype = by_query[product.query]
        low, high = ptype.price
        assert low - 1 <= product.price <= high * 1.7, product
        assert 3 <= len(product.attributes) <= 6 and set(product.attributes) <= set(ptype.attributes)
        values = [v for _, vs in product.options for v in vs]
        assert len(values) == len(set(values)), "an option value appears in two groups"
        assert product.product_category == ptype.breadcrumb
    ranges = [p for p in products if " to " in p.price_text]
    assert 50 <= len(ranges) <= 200
    for product in ranges:
        low, high = (float(x.strip("$")) for x in product.price_text.split(" to "))
        assert low <= product.price <= high
    details = catalog.details(3)
    assert details.description and details.bullet_points and details.rating
    assert all(1 <= r.score <= 5 for i in range(50) for r in catalog.details(i).reviews)


@pytest.mark.slow
def test_splits_are_disjoint_in_goals_and_target_products(catalog):
    ids = {split: catalog.goal_ids(split) for split in ("train", "valid", "test")}
    assert [len(ids[s]) for s in ("train", "valid", "test")] == [700, 200, 100]
    targets = {split: {catalog.goal(g).asin for g in goal_ids} for split, goal_ids in ids.items()}
    assert not targets["train"] & targets["test"] and not targets["train"] & targets["valid"]
    assert not targets["valid"] & targets["test"]
    with pytest.raises(UnknownSplitError):
        catalog.goal_ids("dev")
    big = generate_catalog(20_000, seed=3, num_goals=2_000)
    assert [len(big.goal_ids(s)) for s in ("test", "valid", "train")] == [200, 400, 1400]


def test_instructions_name_type_attributes_options_and_price(catalog):
    for goal in catalog.goals[:200]:
        assert 1 <= len(goal.attributes) <= 3
        assert all(attr in goal.instruction for attr in goal.attributes)
        assert all(option in goal.instruction for option in goal.options)
        target = catalog.products[catalog.index_of_asin[goal.asin]]
        assert goal.price_upper > target.price
        if goal.price_upper < 1e6:
            assert goal.instruction.endswith(f", and price lower than {goal.price_upper:.2f} dollars")
            assert goal.price_upper - target.price <= 40
        assert len(goal.option_groups) == len(goal.options)


def test_every_goal_is_fully_satisfiable_by_its_target(catalog):
    for goal in catalog.goals:
        i = catalog.index_of_asin[goal.asin]
        product = catalog.products[i]
        chosen = dict(zip(goal.option_groups, goal.options, strict=True))
        info = compute_reward(product, ProductText.of(product, catalog.details(i)), goal, chosen)
        assert info.reward == 1.0, (goal, info)


def test_cached_catalog_equals_the_generated_one_and_is_built_once(tmp_path):
    fresh = generate_catalog(300, seed=5)
    first = cached_catalog(300, seed=5, root=tmp_path)
    (folder,) = [p for p in (tmp_path / "webshop-catalog").iterdir() if p.is_dir()]
    stamp = (folder / "key.json").stat().st_mtime_ns
    second = cached_catalog(300, seed=5, root=tmp_path)
    assert (folder / "key.json").stat().st_mtime_ns == stamp
    for loaded in (first, second):
        assert loaded.products == fresh.products and loaded.goals == fresh.goals
        assert loaded.fingerprint == fresh.fingerprint and loaded.details(42) == fresh.details(42)
    assert cached_catalog(300, seed=6, root=tmp_path).products != fresh.products


@pytest.mark.parametrize("bad", [0, 49, -5, 2.5, "1000", True, None])
def test_generator_rejects_bad_sizes(bad):
    with pytest.raises(InvalidOptionError, match="num_products"):
        generate_catalog(bad)


# ---------------------------------------------------------------------- search
def test_tokenize_drops_stopwords_possessives_and_stems():
    assert tokenize("The Women's RUNNING shoes, for running!") == ["women", "run", "shoe", "run"]
    assert tokenize("") == [] and tokenize("a an the of") == []


def test_search_scores_equal_bm25s_scores(catalog, index):
    vocab: dict[str, int] = {}
    corpus = [
        [vocab.setdefault(t, len(vocab)) for t in tokenize(catalog.search_document(i))] for i in range(len(catalog))
    ]
    reference = bm25s.BM25(**BM25_PARAMS)
    reference.index((corpus, dict(vocab)), show_progress=False)
    queries = (
        "men's cotton t-shirt navy",
        "organic green tea bags",
        "zzz unknown",
        "wireless earbuds case",
        "t-shirt s",
    )
    for query in queries:
        ids = [vocab[t] for t in tokenize(query)[:MAX_QUERY_TOKENS] if t in vocab]
        expected = reference.get_scores(ids) if ids else np.zeros(index.num_documents)
        np.testing.assert_allclose(index.scores(query), expected, rtol=1e-6)


def test_search_ranking_is_deterministic_and_by_score(catalog, index):
    results = index.search("women's leggings high waist")
    assert 0 < len(results) <= 50 and len(set(results)) == len(results)
    scores = index.scores("women's leggings high waist")[list(results)]
    assert all(scores > 0) and list(scores) == sorted(scores, reverse=True)
    for a, b in itertools.pairwise(results):
        if scores[results.index(a)] == scores[results.index(b)]:
            assert a < b
    assert index.search("women's leggings high waist") == results
    assert index.search("qwertyuiop") == ()
    assert len(index.search("dress", k=7)) == 7


def test_search_by_title_finds_the_product(catalog, index):
    for i in range(0, 1_000, 97):
        assert i in index.search(catalog.products[i].title)


def test_long_queries_are_cut(index):
    words = "organic green tea coffee honey chocolate bars jerky olive oil " * 10
    assert index.search(words) == index.search(" ".join(words.split()[:MAX_QUERY_TOKENS]))


def test_index_is_built_once_and_cached(catalog, tmp_path):
    first = SearchIndex.build(catalog, root=tmp_path)
    stamp = (first.folder / "key.json").stat().st_mtime_ns
    second = SearchIndex.build(catalog, root=tmp_path)
    assert second.folder == first.folder and (second.folder / "key.json").stat().st_mtime_ns == stamp
    assert first.folder.parent.name == "webshop-index"
    assert second.search("bluetooth speaker") == first.search("bluetooth speaker")
    other = SearchIndex.build(generate_catalog(200, seed=9), root=tmp_path)
    assert other.folder != first.folder and other.num_documents == 200


# ---------------------------------------------------------------------- reward
def _product(**kw):
    base = {
        "asin": "B000000001",
        "title": "Hanesco Men's Classic Cotton T-Shirt",
        "category": "fashion",
        "query": "men's t-shirts",
        "product_category": "Clothing, Shoes & Jewelry \u203a Men \u203a Clothing \u203a Shirts",
        "price": 20.0,
        "price_text": "$20.0",
        "attributes": ("machine wash", "short sleeve", "cotton spandex"),
        "options": (("color", ("navy blue", "black")), ("size", ("small", "large"))),
    }
    return Product(**{**base, **kw})


def _goal(**kw):
    base = {
        "goal_id": "g",
        "asin": "B000000001",
        "instruction": "...",
        "attributes": ("machine wash", "short sleeve"),
        "options": ("navy blue", "large"),
        "price_upper": 30.0,
        "query": "men's t-shirts",
        "category": "fashion",
        "product_category": "Clothing, Shoes & Jewelry \u203a Men \u203a Clothing \u203a Shirts",
        "name": "Hanesco Men's Classic Cotton T-Shirt",
    }
    return Goal(**{**base, **kw})


def _reward(product, goal, chosen, description="", bullets=()):
    text = ProductText.of(product, ProductDetails(description, tuple(bullets), (), "N.A."))
    return compute_reward(product, text, goal, chosen)


def test_reward_full_match_and_each_missing_part():
    product, goal = _product(), _goal()
    assert _reward(product, goal, {"color": "navy blue", "size": "large"}).reward == 1.0
    # 5 parts: 2 attributes + 2 options + price
    assert _reward(product, goal, {"color": "navy blue"}).reward == pytest.approx(4 / 5)
    # WebShop's colour normalisation maps "navy blue" to "blue" (the first colour word it contains)
    assert _reward(product, _goal(options=("navy", "large")), {"color": "navy blue", "size": "large"}).r_option == 0.5
    assert _reward(product, goal, {"color": "navy blue", "size": "small"}).reward == pytest.approx(4 / 5)
    assert _reward(
        product, _goal(attributes=("machine wash", "gluten free")), {"color": "navy blue", "size": "large"}
    ).reward == pytest.approx(4 / 5)
    info = _reward(_product(price=35.0), goal, {"color": "navy blue", "size": "large"})
    assert info.reward == pytest.approx(4 / 5) and info.r_price is False
    assert _reward(product, _goal(options=()), {}).reward == 1.0


def test_reward_attribute_found_in_texts_and_fuzzy():
    product = _product(attributes=("DUMMY_ATTR",))
    goal = _goal(attributes=("machine wash", "gluten free"), options=())
    assert _reward(product, goal, {}).r_att == 0.0
    assert _reward(product, goal, {}, description="Machine wash cold.").r_att == 0.5
    assert _reward(product, goal, {}, bullets=["GLUTEN FREE recipe", "machine wash"]).r_att == 1.0
    assert (
        _reward(_product(attributes=("Machine-Wash",)), _goal(attributes=("machine wash",), options=()), {}).r_att
        == 1.0
    )


def test_reward_options_size_exact_color_normalised_and_uncapped():
    goal = _goal(attributes=("machine wash",), options=("8.5",))
    shoes = _product(options=(("size", ("8", "8.5 wide", "8.5")),))
    assert _reward(shoes, goal, {"size": "8.5"}).r_option == 1.0
    assert _reward(shoes, goal, {"size": "8.5 wide"}).r_option == 0.0
    colored = _product(options=(("color", ("royal blue",)),))
    assert (
        _reward(colored, _goal(attributes=("machine wash",), options=("navy blue",)), {"color": "royal blue"}).r_option
        == 1.0
    )
    # every selected value counts when the product's text mentions it, as in the released code: more matches
    # than goal options push the reward above 1 (and such a purchase is not a win)
    mentioned = _product(title="Hanesco Navy Blue Men's Classic Cotton T-Shirt, Large")
    info = _reward(mentioned, _goal(options=("navy",)), {"color": "navy blue", "size": "large"})
    assert info.r_option == 2.0 and info.reward == pytest.approx(5 / 4)
    # a selected value that neither matches nor is mentioned earns nothing
    plain = _product(title="Hanesco Men's Classic Cotton T-Shirt")
    assert _reward(plain, _goal(options=("navy",)), {"color": "red", "size": "small"}).r_option == 0.0


def test_reward_type_factor():
    goal = _goal(options=(), name="Hanesco Men's Cotton Crew Neck Pocket T-Shirt")
    other_query = _product(query="other")
    assert _reward(other_query, goal, {}).r_type == 1.0  # category and nouns still match
    unrelated = _product(query="x", product_category="Food \u203a Snacks", title="Zesty Cotton Crackers")
    info = _reward(unrelated, goal, {})
    assert 0.1 <= info.title_score <= 0.2 and info.r_type == 0.5
    nothing = _product(query="x", product_category="Food \u203a Snacks", title="Zesty Crackers")
    assert _reward(nothing, goal, {}).r_type == 0.0 and _reward(nothing, goal, {}).reward == 0.0
    few = _reward(nothing, _goal(name="Crackers " + " ".join(f"Thing{c}" for c in "abcdefghijkl"), options=()), {})
    assert 0 < few.title_score < 0.1 and few.r_type == 0.1


def test_reward_helpers_follow_webshop():
    assert normalize_color("violet lavender") == "lavender"
    assert normalize_color("steel fuchsia") == "fuchsia"
    assert normalize_color("") == ""
    assert fuzzy_score("Pack of 12!", "pack of 12") == 100
    assert fuzzy_score("gluten free", "sugar free") <= 85
    assert normalize_color("123alabaster") == "alabaster" and normalize_color("light pink") == "light"
    assert title_nouns("Men's T-Shirt") == ["men", "t", "shirt"]
    assert title_nouns("Xanly Coffee") == ["xanly", "coffee"], "colour words are nouns in titles, as for spaCy"
