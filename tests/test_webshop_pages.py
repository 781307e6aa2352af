"""``observation_format="webshop"``: WebShop's text-mode pages, exactly.

Each expected string is the text WebShop's page templates render, node by node, joined the way
its text env's ``convert_html_to_text(simple=True)`` joins them (stripped texts, `` [SEP] ``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_budget.tasks.webshop.env import WebShopDataEnv

INSTRUCTION = "i need a soft cotton scarf in navy, and price lower than"


def _product(n: int, **kw):
    product = {
        "asin": f"B0PAGE{n:04d}",
        "name": f"Acme Soft Cotton Scarf {n}",
        "category": "fashion",
        "query": "scarf",
        "product_category": "Clothing \u203a Women \u203a Scarves",
        "full_description": f"A soft scarf number {n}.",
        "small_description": ["Soft", "100% cotton"],
        "pricing": "$12.50",
        "customization_options": {"Color": [{"value": "Navy"}, {"value": "Red/White"}]},
        "images": [],
    }
    return {**product, **kw}


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> WebShopDataEnv:
    folder: Path = tmp_path_factory.mktemp("pages")
    products = [_product(n) for n in range(14)]
    products[0].update(full_description="", small_description=["", "Warm"])
    products[1].update(customization_options="")
    (folder / "items_shuffle.json").write_text(json.dumps(products))
    attributes = {p["asin"]: {"attributes": ["soft cotton"]} for p in products}
    (folder / "items_ins_v2.json").write_text(json.dumps(attributes))
    human = {products[0]["asin"]: [{"instruction": "i need a soft cotton scarf in navy.",
                                    "instruction_attributes": ["soft cotton"], "instruction_options": ["navy"]}]}  # fmt: skip
    (folder / "items_human_ins.json").write_text(json.dumps(human))
    reviews = [{"asin": products[2]["asin"], "average_rating": 4.0,
                "reviews": [{"title": "Lovely", "score": 5, "review": "So soft."}]}]  # fmt: skip
    (folder / "reviews.json").write_text(json.dumps(reviews))
    return WebShopDataEnv(folder, split="test", observation_format="webshop")


def _instruction(env) -> str:
    return env.goal.instruction


def test_search_and_results_pages(env):
    obs, _ = env.reset(options={"task": 0})
    instruction = _instruction(env)
    assert instruction.startswith(INSTRUCTION)
    assert obs == f"WebShop [SEP] Instruction: [SEP] {instruction} [SEP] Search"
    obs, *_ = env.step("search[acme soft cotton scarf]")
    results = env.session.results
    assert len(results) == 14
    head = f"Instruction: [SEP] {instruction} [SEP] Back to Search [SEP] Page 1 (Total results: 14) [SEP] Next >"
    items = [env.catalog.products[i] for i in results]
    assert obs == head + "".join(f" [SEP] {p.asin} [SEP] {p.title} [SEP] $12.5" for p in items[:10])
    obs, *_ = env.step("click[next >]")
    page2 = f"Page 2 (Total results: 14) [SEP] < Prev [SEP] Next > [SEP] {items[10].asin}"
    assert page2 in obs, "Next > stays on the last page, as in WebShop's template"
    obs, _, _, _, info = env.step("click[next >]")
    assert obs.endswith("Back to Search [SEP] Page 3 (Total results: 14) [SEP] < Prev [SEP] Next >")
    assert "click[next >]" in info["admissible_actions"]
    obs, *_ = env.step("click[< prev]")
    assert page2 in obs


def test_item_and_sub_pages(env):
    env.reset(options={"task": 0})
    instruction = _instruction(env)
    env.step("search[acme soft cotton scarf]")
    target = env.catalog.index_of_asin["B0PAGE0000"]
    page = env.session.results.index(target) // 10
    for _ in range(page):
        env.step("click[next >]")
    obs, *_ = env.step("click[b0page0000]")
    top = f"Instruction: [SEP] {instruction} [SEP] Back to Search [SEP] < Prev"
    assert obs == (
        f"{top} [SEP] color [SEP] navy [SEP] red | white [SEP] Acme Soft Cotton Scarf 0 [SEP] Price: $12.5 "
        "[SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now"
    )
    assert env.step("click[description]")[0] == top, "an empty description renders no text node"
    env.step("click[< prev]")
    assert env.step("click[features]")[0] == f"{top} [SEP]  [SEP] Warm", "an empty bullet is an empty text"
    env.step("click[< prev]")
    assert env.step("click[reviews]")[0] == top, "no 'No reviews found' in WebShop's review page"
    env.step("click[< prev]")
    env.step("click[navy]")
    obs, reward, terminated, _, _ = env.step("click[buy now]")
    assert terminated and reward == 1.0
    assert obs == (
        "Thank you for shopping with us! [SEP] Your code: [SEP] None [SEP] (Paste it in your MTurk interface.) "
        '[SEP] Purchased [SEP] asin [SEP] B0PAGE0000 [SEP] options [SEP] {"color": "navy"} [SEP] attrs [SEP] None '
        "[SEP] category [SEP] None [SEP] query [SEP] None [SEP] product category [SEP] None [SEP] Target [SEP] asin "
        "[SEP] options [SEP] attrs [SEP] price upper [SEP] instuction text [SEP] category [SEP] product category "
        "[SEP] query [SEP] Goal [SEP] None [SEP] Reward [SEP] Your score (min 0.0, max 1.0) [SEP] 1.0 "
        "[SEP] Reward Details [SEP] None"
    )


def test_reviews_and_options_json(env):
    env.reset(options={"task": 0})
    instruction = _instruction(env)
    env.step("search[acme soft cotton scarf]")
    target = env.catalog.index_of_asin["B0PAGE0002"]
    for _ in range(env.session.results.index(target) // 10):
        env.step("click[next >]")
    obs, *_ = env.step("click[b0page0002]")
    assert "[SEP] Rating: 4.0 [SEP]" in obs
    obs, *_ = env.step("click[reviews]")
    assert (
        obs
        == f'Instruction: [SEP] {instruction} [SEP] Back to Search [SEP] < Prev [SEP] "Lovely" [SEP] 5 [SEP] So soft.'
    )
    env.step("click[< prev]")
    env.step("click[red | white]")
    obs, *_ = env.step("click[buy now]")
    assert '[SEP] options [SEP] {"color": "red | white"} [SEP]' in obs
