"""The env's reward against WebShop's reward formula, written here from its published definition.

``reference_reward`` follows ``get_reward`` / ``get_type_reward`` / ``get_attribute_reward`` /
``get_option_reward`` of WebShop's ``web_agent_site/engine/goal.py`` and ``normalize_color`` of
its ``normalize.py``, on WebShop-shaped dicts (``Title``, ``BulletPoints``, ``Description``,
``Attributes``, ``goal_options``, ...). Title nouns come from a real spaCy pipeline: the fixture
``tests/data/webshop_spacy_nouns.json`` holds ``en_core_web_md``'s nouns of every title of the 1k
generated catalog (written by ``benchmarks/webshop_title_nouns.py --fixture``).

Run ``python -m pytest tests/test_webshop_reward.py -s`` to print the identity table of the README.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest
from rapidfuzz import fuzz

from agentgym_budget.tasks.webshop.catalog import Goal, Product
from agentgym_budget.tasks.webshop.env import WebShopEnv
from agentgym_budget.tasks.webshop.expert import goal_option_clicks
from agentgym_budget.tasks.webshop.nouns import title_nouns
from agentgym_budget.tasks.webshop.reward import normalize_color
from agentgym_budget.tasks.webshop.session import Session
from agentgym_budget.tasks.webshop.vocabulary import COLOR_WORDS

FIXTURE = Path(__file__).parent / "data" / "webshop_spacy_nouns.json"
Nouns = Callable[[str], Sequence[str]]


# ---------------------------------------------------------------------- the reference (WebShop's definition)
def _thefuzz_process(text: str) -> str:
    """thefuzz's full_process: ASCII only, non-alphanumerics to spaces, lowercase, trimmed."""
    text = text.encode("ascii", "ignore").decode()
    return re.sub(r"[^0-9a-zA-Z]", " ", text).lower().strip()


def _token_set_ratio(a: str, b: str) -> int:
    return round(fuzz.token_set_ratio(_thefuzz_process(a), _thefuzz_process(b)))


def _normalize(value: str) -> str:
    return next((color for color in COLOR_WORDS if color in value), value)


def _type_reward(bought: Mapping, goal: Mapping, nouns: Nouns) -> float:
    query_match = bought["query"] == goal["query"]
    bought_levels = [x.strip() for x in bought["product_category"].split("\u203a")]
    goal_levels = [x.strip() for x in goal["product_category"].split("\u203a")]
    category_match = len(set(bought_levels) & set(goal_levels)) >= 2
    have, want = list(nouns(bought["name"])), list(nouns(goal["name"]))
    title_score = 0.2 if not want else len(set(have) & set(want)) / len(want)
    r_type = 1.0 if (query_match or category_match or title_score > 0.2) else 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return r_type


def _text_has(bought: Mapping, phrase: str) -> bool:
    return (
        phrase in bought["Title"].lower()
        or phrase in " ".join(bought["BulletPoints"]).lower()
        or phrase in bought["Description"].lower()
    )


def _attribute_matches(bought: Mapping, goal: Mapping) -> int:
    matches = 0
    for wanted in goal["attributes"]:
        if any(_token_set_ratio(have, wanted) > 85 for have in bought["Attributes"]) or _text_has(bought, wanted):
            matches += 1
    return matches


def _option_matches(bought: Mapping, goal_options: Sequence[str], options: Mapping[str, str]) -> int:
    chosen = {k: _normalize(v) for k, v in options.items()}
    wanted = [_normalize(o) for o in goal_options]
    matches = 0
    for key, value in chosen.items():
        if key.lower() in ("size",):
            matched = value in wanted
        else:
            matched = any(_token_set_ratio(option, value) > 85 for option in wanted)
        if matched or _text_has(bought, value):
            matches += 1
    return matches


def reference_reward(bought: Mapping, goal: Mapping, price: float, options: Mapping[str, str], nouns: Nouns) -> float:
    """WebShop's ``get_reward``."""
    r_type = _type_reward(bought, goal, nouns)
    r_price = price <= goal["price_upper"]
    goal_options = goal["goal_options"]
    values = list(goal_options.values()) if isinstance(goal_options, dict) else goal_options
    total = (_attribute_matches(bought, goal) + _option_matches(bought, values, options) + r_price) / (
        len(goal["attributes"]) + len(goal_options) + 1
    )
    return total * r_type


# ---------------------------------------------------------------------- WebShop-shaped records
def webshop_product(product: Product, details) -> dict:
    return {
        "query": product.query,
        "product_category": product.product_category,
        "name": product.title,
        "Title": product.title,
        "Attributes": list(product.attributes),
        "BulletPoints": list(details.bullet_points),
        "Description": details.description,
    }


def webshop_goal(goal: Goal) -> dict:
    groups = goal.option_groups
    options = dict(zip(groups, goal.options, strict=True)) if groups and all(groups) else list(goal.options)
    return {
        "query": goal.query,
        "product_category": goal.product_category,
        "name": goal.name,
        "attributes": list(goal.attributes),
        "goal_options": options,
        "price_upper": goal.price_upper,
    }


# ---------------------------------------------------------------------- purchases
@pytest.fixture(scope="module")
def env() -> WebShopEnv:
    return WebShopEnv(1_000, split="test")


@pytest.fixture(scope="module")
def spacy_nouns() -> dict[str, list[str]]:
    return json.loads(FIXTURE.read_text())["nouns"]


def _random_options(product: Product, rng: random.Random) -> tuple[tuple[str, str], ...]:
    return tuple((group, rng.choice(values)) for group, values in product.options if rng.random() < 0.8)


def purchases(env: WebShopEnv) -> list[tuple[str, object, int, tuple[tuple[str, str], ...]]]:
    """``(category, goal, product index, options)`` for >= 5,000 purchases over the 1k catalog's goals."""
    catalog, shop = env.catalog, env.shop
    rng = random.Random(0)
    by_category: dict[str, list[int]] = {}
    for i, product in enumerate(catalog.products):
        by_category.setdefault(product.category, []).append(i)
    out = []
    for goal in catalog.goals:
        target = catalog.index_of_asin[goal.asin]
        product = catalog.products[target]
        picks = tuple(goal_option_clicks(shop, goal, target))
        out.append(("expert", goal, target, picks))
        wrong = tuple((g, next(v for v in vs if v != dict(picks)[g])) for g, vs in product.options if g in dict(picks))
        if wrong:
            out.append(("target, wrong options", goal, target, wrong))
        for _ in range(2):
            other = rng.randrange(len(catalog))
            out.append(("random product", goal, other, _random_options(catalog.products[other], rng)))
        same_category = [i for i in by_category[product.category] if catalog.products[i].query != product.query]
        for other in rng.sample(same_category, 2):
            out.append(("wrong type, same category", goal, other, _random_options(catalog.products[other], rng)))
    return out


def test_reference_helpers_match_webshop_examples():
    # WebShop's own expectations for normalize_color and get_option_reward's fuzzy matching
    for value, expected in [("", ""), ("black forest", "black"), ("violet lavender", "lavender"),
                            ("steelivy fuchsia", "fuchsia"), ("123alabaster", "alabaster"), ("webshop", "webshop")]:  # fmt: skip
        assert _normalize(value) == expected == normalize_color(value)
    assert len(COLOR_WORDS) == 102 and COLOR_WORDS[0] == "alabaster" and COLOR_WORDS[-1] == "yellow"
    assert (
        _token_set_ratio("cool powder snow", "powder snow") > 85 and _token_set_ratio("tea tree", "essential oil") < 85
    )


def test_reference_reward_reproduces_webshop_test_values():
    """The published expectations of WebShop's ``test_get_reward`` (nouns from its titles' spaCy tags)."""
    nouns = {  # noun lists giving that test's published title_score of 0.17 (2 of 12 goal nouns shared)
        "saireed": ["saireed", "ul", "prong", "power", "cord", "jbl", "bar", "bar", "channel", "ultra", "hd", "soundbar"],
        "brst": ["brst", "ac", "power", "cord", "outlet", "socket", "cable", "plug", "lead", "panasonic", "sc", "dvd"],
    }  # fmt: skip
    goal = {"query": "Query 1", "product_category": "a \u203a b \u203a c", "name": "same", "price_upper": 40.0,
            "attributes": ["tea tree", "essential oils", "natural ingredients"],
            "goal_options": {"color": "grey", "size": "XL"}}  # fmt: skip
    bought = {"query": "Query 1", "product_category": "a \u203a b \u203a c", "name": "same", "Title": "",
              "Attributes": ["tea tree", "essential oil", "natural ingredients"], "BulletPoints": [], "Description": ""}  # fmt: skip
    same = {"same": ["same"]}.get
    assert reference_reward(bought, goal, 35, {"color": "grey", "size": "XL"}, same) == 1
    bought.update(Attributes=[], Description="Best shampoo on the market, made with natural ingredients")
    assert reference_reward(bought, goal, 35, {"color": "grey", "size": "XL"}, same) == pytest.approx(2 / 3, abs=1e-2)
    goal["goal_options"] = {"color": "grey", "size": "XL", "amount": "pack of 12"}
    assert reference_reward(bought, goal, 35, {"color": "grey", "size": "XL"}, same) == pytest.approx(0.5714, abs=1e-2)
    goal["name"], bought["name"], bought["query"] = "saireed", "brst", "Query 2"
    bought["product_category"] = "a \u203a d \u203a e"
    assert reference_reward(bought, goal, 35, {"color": "grey", "size": "XL"}, nouns.get) == pytest.approx(
        0.2857, abs=1e-2
    )


@pytest.mark.slow
def test_env_reward_equals_webshop_reward_on_5000_purchases(env, spacy_nouns):
    catalog = env.catalog
    missing = [p.title for p in catalog.products if p.title not in spacy_nouns]
    assert not missing, f"regenerate the fixture (benchmarks/webshop_title_nouns.py --fixture): {missing[:3]}"
    total, same, wins = Counter(), Counter(), Counter()
    differences = []
    for category, goal, item, options in purchases(env):
        env._set_goal(goal.goal_id)
        ours = env.reward_info(Session(page="item", item=item, options=options)).reward
        bought = webshop_product(catalog.products[item], catalog.details(item))
        args = (bought, webshop_goal(goal), catalog.products[item].price, dict(options))
        theirs = reference_reward(*args, spacy_nouns.__getitem__)
        total[category] += 1
        wins[category] += ours == 1.0
        if ours == theirs:
            same[category] += 1
            continue
        # every difference must come from the title nouns: with the env's nouns the formula agrees exactly
        assert reference_reward(*args, title_nouns) == ours, (category, goal.goal_id, item, options)
        differences.append((category, catalog.products[item].title, goal.name, ours, theirs))
    print(f"\n{'purchase':<28}{'n':>6}{'identical':>11}{'wins':>7}")
    for category in total:
        print(f"{category:<28}{total[category]:>6}{same[category] / total[category]:>11.2%}{wins[category]:>7}")
    n, identical = sum(total.values()), sum(same.values())
    print(f"{'all':<28}{n:>6}{identical / n:>11.2%}   differences (all from title nouns): {len(differences)}")
    for row in differences[:10]:
        print("  ", row)
    assert n >= 5_000
    assert identical / n >= 0.995
    assert total["expert"] == same["expert"] == wins["expert"], "the expert gets exactly 1 under both"
    assert wins["target, wrong options"] < 0.1 * total["target, wrong options"], "text must not make options free"
