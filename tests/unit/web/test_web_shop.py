"""The text shop: catalog, site navigation, cart/checkout, grading, rendering, task sets."""

from __future__ import annotations

import pytest

from environments.web.catalog import CATALOG_SIZE, generate_catalog
from environments.web.grading import buy_reward, grade_item, info_reward
from environments.web.page import Element, Page, render
from environments.web.shop import NotLocal, ShopSite, normalize, url_for
from environments.web.tasks import generate_miniwob, generate_shop
from environments.web.text_browser import ActionError, TextBrowser


@pytest.fixture(scope="module")
def catalog():  # type: ignore[no-untyped-def]
    return generate_catalog(0)


def test_catalog_is_seeded_and_rich(catalog) -> None:  # type: ignore[no-untyped-def]
    assert len(catalog.products) == CATALOG_SIZE >= 1000
    again = generate_catalog(0)
    assert [p.title for p in again.products] == [p.title for p in catalog.products]
    assert [p.title for p in generate_catalog(1).products] != [p.title for p in catalog.products]
    assert len(catalog.by_category) == 8
    assert all(p.options and p.attributes and p.price > 0 for p in catalog.products)


def test_search_ranks_matching_products_first(catalog) -> None:  # type: ignore[no-untyped-def]
    hits = catalog.search("waterproof hiking boots")
    assert "hiking boots" in hits[0].title and "waterproof" in hits[0].attributes


@pytest.mark.parametrize(
    "url", ["https://example.com/", "file:///etc/passwd", "ftp://shop.localhost/", "//evil.com/x"]
)
def test_only_local_urls(url: str) -> None:
    with pytest.raises(NotLocal):
        normalize(url)


def test_full_purchase_flow(catalog) -> None:  # type: ignore[no-untyped-def]
    browser = TextBrowser(ShopSite(catalog))
    product = catalog.products[3]
    browser.goto(url_for(f"/product/{product.product_id}"))
    add = next(e for e in browser.page.elements if e.text == "Add to cart")
    browser.click(add.eid)  # options missing: stays, with a notice
    assert browser.page.notice and "Choose" in browser.page.notice
    for name, values in product.options.items():
        radio = next(e for e in browser.page.elements if e.role == "radio" and e.text == values[-1])
        browser.click(radio.eid)
        assert f"{name}=" in browser.page.url
    browser.click(next(e for e in browser.page.elements if e.text == "Add to cart").eid)
    assert browser.page.title == "Shopping cart" and len(browser.state.cart) == 1
    browser.click(next(e for e in browser.page.elements if e.text == "Proceed to checkout").eid)
    browser.click(next(e for e in browser.page.elements if e.text == "Place order").eid)
    assert browser.page.title == "Order 1" and not browser.state.cart
    assert browser.state.orders[0].items[0].options == {
        k: v[-1] for k, v in product.options.items()
    }
    browser.back()
    assert browser.page.title == "Checkout"
    with pytest.raises(ActionError):
        browser.click(999)


def test_search_box_submits_with_enter(catalog) -> None:  # type: ignore[no-untyped-def]
    browser = TextBrowser(ShopSite(catalog))
    browser.type(1, "noise cancelling earbuds\n")
    assert browser.page.url.startswith(url_for("/search")) and "earbuds" in browser.page.title
    nxt = next(e for e in browser.page.elements if e.text == "Next page >")
    browser.click(nxt.eid)
    assert "page=2" in browser.page.url


def test_webshop_grading(catalog) -> None:  # type: ignore[no-untyped-def]
    p = catalog.products[0]
    opts = {k: v[0] for k, v in p.options.items()}
    goal = {"category": p.category, "noun": p.noun, "attributes": p.attributes[:2],
            "options": opts, "price_max": p.price + 1}  # fmt: skip
    assert grade_item(goal, p.product_id, opts, catalog)[0] == 1.0
    wrong_opts = {k: v[1] for k, v in p.options.items()}
    partial = grade_item(goal, p.product_id, wrong_opts, catalog)[0]
    assert 0 < partial < 1
    other = next(q for q in catalog.products if q.category != p.category)
    assert grade_item(goal, other.product_id, {}, catalog)[0] == 0.0
    cheap_goal = {**goal, "price_max": p.price - 1}
    assert grade_item(cheap_goal, p.product_id, opts, catalog)[0] < 1.0
    from environments.web.shop import ShopState

    assert buy_reward(goal, ShopState(), catalog)[0] == 0.0


def test_info_grading() -> None:
    assert info_reward("number", "59.99", "$59.99") == 1.0
    assert info_reward("number", "59.99", "60") == 0.0
    assert info_reward("set", "black, white, red", "red, black and white") == 1.0
    assert 0 < info_reward("set", "black, white, red", "black") < 1
    assert info_reward("text", "Acorn", " acorn. ") == 1.0


def test_render_viewport() -> None:
    page = Page("http://shop.localhost/", "T", [Element(i, "text", f"t{i}") for i in range(1, 46)])
    first = render(page, 0)
    assert "[1] text 't1'" in first and "[31]" not in first and "scroll down" in first
    second = render(page, 30)
    assert "[31] text 't31'" in second and "scroll up" in second and "[1] " not in second


def test_task_sets(catalog) -> None:  # type: ignore[no-untyped-def]
    shop = generate_shop("default", 0, "1", catalog)
    assert len(shop) >= 500 and shop.sizes()["eval"] >= 80
    kinds = {t.gold["kind"] for t in shop.tasks}
    assert kinds == {"buy", "info"}
    for task in shop.tasks[:50]:  # every purchase goal is achievable by its target
        target = catalog.by_id[task.gold["target"]]
        reward, _ = grade_item(task.gold["goal"], target.product_id,
                               task.gold["goal"]["options"], catalog)  # fmt: skip
        assert reward == 1.0
    assert generate_shop("default", 0, "1", catalog).fingerprint() == shop.fingerprint()
    miniwob = generate_miniwob("miniwob", 0, "1")
    assert len(miniwob) == 20 and miniwob.sizes()["eval"] == 5


def test_browser_url_guard(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from environments.web.chromium import is_allowed

    (tmp_path / "page.html").write_text("<p>x</p>")
    roots = [tmp_path]
    assert is_allowed((tmp_path / "page.html").as_uri(), roots)
    assert is_allowed("http://localhost:8000/x", roots)
    assert is_allowed("http://shop.localhost/", roots)
    for url in ("file:///etc/passwd", (tmp_path / ".." / "x").as_uri(), "https://example.com/",
                "http://203.0.113.7/", "javascript:alert(1)", "chrome://settings"):  # fmt: skip
        assert not is_allowed(url, roots), url
