"""Loading WebShop's real data files: a small fixture in their format, round trips, malformed files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_budget.errors import DataError, InvalidOptionError
from agentgym_budget.tasks.webshop.data import example_data_dir, export_webshop_data, load_webshop_data
from agentgym_budget.tasks.webshop.env import WebShopDataEnv
from agentgym_budget.tasks.webshop.generator import generate_catalog


def _raw_product(n: int, **kw):
    product = {
        "asin": f"B0FIX{n:05d}",
        "name": f"Acme Lavender Shampoo {n} for Dry Hair",
        "category": "beauty",
        "query": " Shampoo For Dry Hair ",
        "product_category": "Beauty & Personal Care \u203a Hair Care \u203a Shampoos",
        "full_description": f"A gentle sulfate free shampoo number {n}.",
        "small_description": ["Sulfate free", "Made with argan oil"],
        "pricing": "$12.99",
        "customization_options": {
            "Size": [{"value": "8 Fl Oz", "image": None}, {"value": "16 Fl Oz/Pack of 2", "image": None}],
            "Scent": None,
        },
        "images": ["https://example.invalid/a.jpg"],
        "brand": "Acme",
    }
    return {**product, **kw}


def write_fixture(folder: Path, *, products=None, attributes=None, human=None, reviews=None) -> Path:
    """A tiny WebShop data folder with the quirks of the real files."""
    folder.mkdir(parents=True, exist_ok=True)
    if products is None:
        products = [_raw_product(n) for n in range(12)]
        products[3]["pricing"] = "$10.00 - $15.50"
        products[4]["small_description"] = "A single bullet string"
        products[5]["customization_options"] = None
        products[6]["pricing"] = ""
        products += [_raw_product(0), _raw_product(99, asin="nan"), _raw_product(98, asin="B0TOOLONG123")]
    if attributes is None:
        attributes = {
            p["asin"]: {
                "attributes": ["sulfate free", "dry hair"],
                "instruction": f"i want a sulfate free shampoo {i}",
                "instruction_attributes": ["sulfate free"],
            }
            for i, p in enumerate(products[:11])
        }
    if human is None:
        human = {
            p["asin"]: [
                {
                    "asin": p["asin"],
                    "instruction": f"i need a sulfate free shampoo for dry hair, number {i}.",
                    "instruction_attributes": ["sulfate free", "dry hair"],
                    "instruction_options": ["16 fl oz | pack of 2"],
                },
                {"asin": p["asin"], "instruction": "skipped: no attributes", "instruction_attributes": []},
            ]
            for i, p in enumerate(products[:12])
        }
    (folder / "items_shuffle_1000.json").write_text(json.dumps(products))
    (folder / "items_ins_v2_1000.json").write_text(json.dumps(attributes))
    (folder / "items_human_ins.json").write_text(json.dumps(human))
    if reviews is not None:
        (folder / "reviews.json").write_text(json.dumps(reviews))
    return folder


@pytest.fixture
def fixture_dir(tmp_path):
    reviews = [
        {
            "asin": "B0FIX00001",
            "reviews": [{"title": "Nice", "stars": "4.0", "review": "Smells great"}],
            "average_rating": 4.0,
        }
    ]
    return write_fixture(tmp_path / "data", reviews=reviews)


def test_fixture_loads_like_webshop(fixture_dir):
    catalog = load_webshop_data(fixture_dir)
    assert len(catalog) == 12, "the duplicate, 'nan' and over-long ASINs are skipped"
    first = catalog.products[0]
    assert first.title == "Acme Lavender Shampoo 0 for Dry Hair" and first.query == "shampoo for dry hair"
    assert first.options == (("size", ("8 fl oz", "16 fl oz | pack of 2")),)
    assert first.attributes == ("sulfate free", "dry hair") and first.price == 12.99 and first.price_text == "$12.99"
    ranged = catalog.products[3]
    assert ranged.price_text == "$10.0 to $15.5" and 10.0 <= ranged.price <= 15.5
    assert load_webshop_data(fixture_dir).products[3].price == ranged.price, "range prices are drawn reproducibly"
    assert catalog.details(4).bullet_points == ("A single bullet string",)
    assert catalog.products[5].options == () and catalog.products[6].price == 100.0
    assert catalog.products[11].attributes == ("DUMMY_ATTR",)
    assert catalog.details(1).reviews[0].score == 4 and catalog.details(1).reviews[0].body == "Smells great"
    assert catalog.details(1).rating == "4.0" and catalog.details(2).rating == "N.A."


def test_human_goals_get_price_bounds_and_a_fixed_shuffle(fixture_dir):
    catalog = load_webshop_data(fixture_dir)
    assert len(catalog.goals) == 12, "instructions without attributes are skipped"
    assert [g.goal_id for g in catalog.goals[:2]] == ["human-00000", "human-00001"]
    assert [len(catalog.goal_ids(s)) for s in ("test", "valid", "train")] == [12, 0, 0], "WebShop's index split"
    for goal in catalog.goals:
        assert goal.attributes == ("sulfate free", "dry hair") and goal.options == ("16 fl oz | pack of 2",)
        assert ", and price lower than" in goal.instruction and ".," not in goal.instruction
        assert goal.price_upper > catalog.products[catalog.index_of_asin[goal.asin]].price
    order = [g.asin for g in catalog.goals]
    assert order == [g.asin for g in load_webshop_data(fixture_dir).goals]
    assert order != sorted(order)


def test_synthetic_goals_enumerate_option_combinations(fixture_dir):
    catalog = load_webshop_data(fixture_dir, goals="synthetic")
    # products 0-10 have instructions; product 5 has no options (one goal), the others 2 sizes
    assert len(catalog.goals) == 10 * 2 + 1
    texts = {g.instruction.split(", and price")[0] for g in catalog.goals}
    assert "i want a sulfate free shampoo 0 with size: 8 fl oz" in texts
    assert all(g.goal_id.startswith("synthetic-") for g in catalog.goals)


def test_num_products_keeps_the_first_products(fixture_dir):
    catalog = load_webshop_data(fixture_dir, num_products=6)
    assert [p.asin for p in catalog.products] == [f"B0FIX{n:05d}" for n in range(6)]
    assert {g.asin for g in catalog.goals} <= {p.asin for p in catalog.products}


def test_round_trip_of_a_generated_catalog(tmp_path):
    original = generate_catalog(150, seed=4)
    paths = export_webshop_data(original, tmp_path)
    assert sorted(p.name for p in paths.values()) == sorted(
        ["items_shuffle.json", "items_ins_v2.json", "items_human_ins.json", "reviews.json"]
    )
    loaded = load_webshop_data(tmp_path)
    for a, b in zip(original.products, loaded.products, strict=True):
        assert (a.asin, a.title, a.query, a.product_category, a.attributes, a.options, a.price_text) == (
            b.asin, b.title, b.query, b.product_category, b.attributes, b.options, b.price_text
        )  # fmt: skip
    for i in (0, 75, 149):
        assert loaded.details(i) == original.details(i)
    assert sorted((g.asin, g.attributes, g.options) for g in loaded.goals) == sorted(
        (g.asin, g.attributes, g.options) for g in original.goals
    )


def test_data_env_plays_and_the_expert_wins(fixture_dir):
    env = WebShopDataEnv(fixture_dir, split="test", info_keys={"expert_plan"})
    assert env.task_ids[0].startswith("human-")
    for task in env.task_ids:
        _, info = env.reset(options={"task": task})
        for action in info["expert_plan"]:
            _, reward, terminated, _, info = env.step(action)
        offered = env.catalog.products[env.catalog.index_of_asin[env.goal.asin]].options
        # product 5 offers no option, so its instruction's option cannot be met: (2 + 0 + 1) / 4
        assert terminated and reward == (1.0 if offered else 0.75) and info["won"] == bool(offered)
    files = env._config()["catalog"]["files"]
    assert files["products"][0] == str(fixture_dir / "items_shuffle_1000.json")
    other = WebShopDataEnv(fixture_dir, goals="synthetic", split="test")
    with pytest.raises(DataError, match=r"'train' split .* has no instruction"):
        WebShopDataEnv(fixture_dir, split="train")
    assert other.env_key != env.env_key and other.task_ids[0].startswith("synthetic-")


# ---------------------------------------------------------------------- malformed data
def _expect(folder: Path, *fragments: str, **kwargs):
    with pytest.raises(DataError) as err:
        load_webshop_data(folder, **kwargs)
    message = str(err.value)
    for fragment in fragments:
        assert fragment in message, message


def test_missing_folder_and_files(tmp_path):
    _expect(tmp_path / "nope", "nope", "is not a folder")
    folder = write_fixture(tmp_path / "d")
    (folder / "items_human_ins.json").unlink()
    _expect(folder, "items_human_ins", str(folder))
    load_webshop_data(folder, goals="synthetic")  # human instructions are only needed for human goals
    (folder / "items_shuffle.json").write_text("[]")  # preferred to items_shuffle_1000.json
    _expect(folder, "items_shuffle.json holds no usable product", goals="synthetic")
    (folder / "items_shuffle.json").rename(folder / "items_shuffle_a.json")
    (folder / "items_shuffle_1000.json").rename(folder / "items_shuffle_b.json")
    _expect(folder, "several items_shuffle*.json", "items_shuffle_a.json, items_shuffle_b.json", goals="synthetic")
    with pytest.raises(DataError, match="is not a folder"):
        WebShopDataEnv(tmp_path / "missing")
    with pytest.raises(DataError, match="needs data_dir="):
        WebShopDataEnv()


def test_invalid_json_and_top_level_types(tmp_path):
    folder = write_fixture(tmp_path / "a")
    (folder / "items_shuffle_1000.json").write_text('[{"asin": "B0X"},')
    _expect(folder, "items_shuffle_1000.json", "not valid JSON", "line 1")
    folder = write_fixture(tmp_path / "b")
    (folder / "items_ins_v2_1000.json").write_text("[]")
    _expect(folder, "items_ins_v2_1000.json", "JSON list", "expected a JSON object")
    folder = write_fixture(tmp_path / "c", products=[])
    _expect(folder, "items_shuffle_1000.json", "no usable product")


@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        ({"name": None}, ["product #2", "'name' must be a string"]),
        ({"customization_options": ["red"]}, ["product #2", "'customization_options' must be an object"]),
        ({"small_description": 5}, ["product #2", "'small_description' must be a list of strings"]),
        ({"pricing": "12.99"}, ["product #2", "no '$' price"]),
        ({"asin": 7}, ["product #2", "'asin' string"]),
        ({"query": 5}, ["product #2", "'query'"]),
        ({"pricing": "$abc$"}, ["product #2", "cannot read the price"]),
        ({"pricing": 12.5}, ["product #2", "'pricing' must be a string"]),
        ({"customization_options": {"Color": ["red"]}}, ["product #2", "'Color'", "list of {'value': str}"]),
    ],
)
def test_malformed_products_name_the_file_and_product(tmp_path, change, fragments):
    products = [_raw_product(n) for n in range(5)]
    products[2].update(change)
    folder = write_fixture(tmp_path, products=products)
    _expect(folder, "items_shuffle_1000.json", *fragments)


def test_missing_product_key(tmp_path):
    products = [_raw_product(n) for n in range(5)]
    del products[1]["asin"]
    folder = write_fixture(tmp_path, products=products, attributes={}, human={})
    _expect(folder, "items_shuffle_1000.json", "product #1", "'asin'")


def test_malformed_instructions_and_reviews(tmp_path):
    products = [_raw_product(n) for n in range(5)]
    human = {products[0]["asin"]: [{"instruction": "x", "instruction_attributes": "sulfate free"}]}
    _expect(write_fixture(tmp_path / "a", products=products, human=human), "items_human_ins.json", "list of strings")
    human = {products[0]["asin"]: {"instruction": "x"}}
    _expect(
        write_fixture(tmp_path / "b", products=products, human=human), "items_human_ins.json", "list of instructions"
    )
    reviews = [{"asin": products[0]["asin"], "reviews": [{"score": "five"}]}]
    _expect(write_fixture(tmp_path / "c", products=products, reviews=reviews), "reviews.json", "not a number")
    human = {p["asin"]: [{"instruction": "x", "instruction_attributes": []}] for p in products[:2]}
    _expect(write_fixture(tmp_path / "d", products=products, human=human), "no human instruction with attributes")
    attributes = {products[0]["asin"]: {"attributes": "soft"}}
    _expect(write_fixture(tmp_path / "e", products=products, attributes=attributes), "items_ins_v2", "'attributes'")


def test_bad_arguments(fixture_dir):
    with pytest.raises(InvalidOptionError, match="goals"):
        load_webshop_data(fixture_dir, goals="crowd")
    with pytest.raises(InvalidOptionError, match="num_products"):
        load_webshop_data(fixture_dir, num_products=0)


# ---------------------------------------------------------------------- every shape WebShop's loader accepts
def test_field_shapes_webshop_accepts(tmp_path):
    products = [_raw_product(n) for n in range(8)]
    products[0]["customization_options"] = ""  # the real items_shuffle_1000.json's first record
    products[1]["customization_options"] = {}
    products[2].pop("pricing")
    products[3]["small_description"] = ""
    products[4]["small_description"] = None
    products[5]["full_description"] = None
    products[6]["customization_options"] = {"Color": None, "Size": [{"value": "Small/Petite"}]}
    for key in ("category", "query", "product_category", "images", "brand"):
        products[7].pop(key)
    attributes = {p["asin"]: {"attributes": ["sulfate free"], "instruction": "x", "instruction_attributes": ["a"]}
                  for p in products}  # fmt: skip
    attributes[products[1]["asin"]] = {"attributes": []}  # kept empty
    attributes[products[2]["asin"]] = {"instruction": "i want shampoo"}  # no 'attributes' key: DUMMY_ATTR
    del attributes[products[3]["asin"]]  # no entry: DUMMY_ATTR
    reviews = [
        {"asin": products[0]["asin"], "reviews": [{"title": "T", "stars": 5, "review": "R"}], "average_rating": 4.5},
        {"asin": products[1]["asin"], "reviews": [{"title": "U", "score": "3.0", "body": "B"}]},
    ]
    folder = write_fixture(tmp_path, products=products, attributes=attributes, reviews=reviews)
    catalog = load_webshop_data(folder)
    by_asin = {p.asin: (p, catalog.details(i)) for i, p in enumerate(catalog.products)}
    first, first_details = by_asin[products[0]["asin"]]
    assert first.options == () and by_asin[products[1]["asin"]][0].options == ()
    assert by_asin[products[1]["asin"]][0].attributes == ()
    assert by_asin[products[2]["asin"]][0].attributes == ("DUMMY_ATTR",)
    assert by_asin[products[3]["asin"]][0].attributes == ("DUMMY_ATTR",)
    assert by_asin[products[2]["asin"]][0].price_text == "$100.0"
    assert by_asin[products[3]["asin"]][1].bullet_points == ("",)
    assert by_asin[products[4]["asin"]][1].bullet_points == ()
    assert by_asin[products[5]["asin"]][1].description == ""
    assert by_asin[products[6]["asin"]][0].options == (("size", ("small | petite",)),)
    seventh = by_asin[products[7]["asin"]][0]
    assert (seventh.category, seventh.query, seventh.product_category) == ("", "", "")
    assert (
        first_details.reviews[0].body == "R" and first_details.reviews[0].score == 5 and first_details.rating == "4.5"
    )
    assert by_asin[products[1]["asin"]][1].reviews[0].score == 3 and by_asin[products[1]["asin"]][1].rating == "N.A."


def test_human_instruction_text_strips_only_dots(tmp_path):
    products = [_raw_product(n) for n in range(3)]
    human = {p["asin"]: [{"instruction": ". i need shampoo. ", "instruction_attributes": ["a"]}] for p in products}
    catalog = load_webshop_data(write_fixture(tmp_path, products=products, human=human))
    assert {g.instruction.split(", and price")[0] for g in catalog.goals} == {" i need shampoo. "}
    assert all(g.options == () for g in catalog.goals), "missing instruction_options read as none"


def test_synthetic_goals_share_the_product_price_bound(fixture_dir):
    catalog = load_webshop_data(fixture_dir, goals="synthetic")
    bounds: dict[str, set[float]] = {}
    for goal in catalog.goals:
        bounds.setdefault(goal.asin, set()).add(goal.price_upper)
    assert all(len(b) == 1 for b in bounds.values()), "one bound per product, as WebShop draws it"
    assert any(len([g for g in catalog.goals if g.asin == a]) > 1 for a in bounds)


def test_data_splits_follow_webshop_goal_index():
    catalog = load_webshop_data(example_data_dir())
    ids = [g.goal_id for g in catalog.goals]
    assert catalog.goal_ids("test") == ids[:500] and catalog.goal_ids("valid") == ids[500:1500]
    assert catalog.goal_ids("train") == ids[1500:] and len(ids) > 1500
    assert ids[:3] == ["human-00000", "human-00001", "human-00002"]
