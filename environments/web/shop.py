"""The local shop site, rendered in-process (no browser): home, search with result pages,
category pages, product pages with option selection, cart, checkout and order pages.

`ShopSite.render(url, state)` turns a URL into a `Page`; element actions are either
`("goto", url)` or a callable `(state) -> url` (add to cart, remove, place order, search).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qs, quote_plus, urlencode, urlsplit

from environments.web.catalog import Catalog, Product
from environments.web.page import Page, PageBuilder

HOST = "shop.localhost"
BASE = f"http://{HOST}"
LOCAL_HOSTS = {HOST, "localhost", "127.0.0.1"}
PAGE_SIZE = 10


class NotLocal(ValueError):
    """A URL outside the local site."""


@dataclass
class CartItem:
    product_id: str
    options: dict[str, str]


@dataclass
class Order:
    number: int
    items: list[CartItem]
    total: float


@dataclass
class ShopState:
    """One visitor's session state."""

    cart: list[CartItem] = field(default_factory=list)
    orders: list[Order] = field(default_factory=list)


def normalize(url: str) -> tuple[str, dict[str, str]]:
    """(path, query) of a local URL; raises NotLocal for anything else."""
    parts = urlsplit(url.strip())
    if parts.scheme and parts.scheme not in ("http", "https"):
        raise NotLocal(f"only {BASE}/ pages can be opened (got scheme {parts.scheme!r})")
    if parts.netloc and parts.hostname not in LOCAL_HOSTS:
        raise NotLocal(f"only the local shop at {BASE}/ can be opened, not {parts.netloc!r}")
    if not parts.netloc and parts.scheme:
        raise NotLocal(f"not a URL: {url!r}")
    path = "/" + parts.path.strip("/")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    return path, query


def url_for(path: str, **query: str | int) -> str:
    q = {k: str(v) for k, v in query.items() if v not in ("", None)}
    return f"{BASE}{path}" + (f"?{urlencode(q)}" if q else "")


def money(x: float) -> str:
    return f"${x:,.2f}"


class ShopSite:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def render(self, url: str, state: ShopState) -> Page:
        path, query = normalize(url)
        parts = [p for p in path.split("/") if p]
        if not parts:
            return self._home(state)
        if parts[0] == "search":
            return self._search(query.get("q", ""), _int(query.get("page")), state)
        if parts[0] == "category" and len(parts) == 2:
            return self._category(parts[1], _int(query.get("page")), state)
        if parts[0] == "product" and len(parts) == 2 and parts[1] in self.catalog.by_id:
            return self._product(self.catalog.by_id[parts[1]], query, state)
        if parts[0] == "cart":
            return self._cart(state)
        if parts[0] == "checkout":
            return self._checkout(state)
        if parts[0] == "order" and len(parts) == 2:
            return self._order(_int(parts[1]), state)
        b = PageBuilder(url_for(path), "Page not found")
        b.text(f"There is no page at {path}.")
        b.link("Home", url_for("/"))
        return b.page

    # ------------------------------------------------------------------ pages

    def _header(self, b: PageBuilder, state: ShopState, q: str = "") -> None:
        box = b.add("textbox", "Search products", value=q)
        b.button("Search", lambda _s: url_for("/search", q=box.value or ""))
        b.link(f"Cart ({len(state.cart)})", url_for("/cart"))

    def _home(self, state: ShopState) -> Page:
        b = PageBuilder(url_for("/"), "Shop — Home")
        self._header(b, state)
        b.add("heading", "Shop by category")
        for cat in sorted(self.catalog.by_category):
            n = len(self.catalog.by_category[cat])
            b.link(f"{cat.title()} ({n})", url_for(f"/category/{quote_plus(cat)}"))
        return b.page

    def _listing(
        self,
        b: PageBuilder,
        found: list[Product],
        page: int,
        make_url,
        back_q: str,  # type: ignore[no-untyped-def]
    ) -> None:
        pages = max(1, -(-len(found) // PAGE_SIZE))
        page = min(max(page, 1), pages)
        start = (page - 1) * PAGE_SIZE
        shown = found[start : start + PAGE_SIZE]
        if not found:
            b.text("No products found.")
            return
        b.add(
            "heading",
            f"Results {start + 1}-{start + len(shown)} of {len(found)} (page {page} of {pages})",
        )
        for p in shown:
            b.link(p.title, url_for(f"/product/{p.product_id}", q=back_q))
            b.text(f"{money(p.price)} | rating {p.rating} ({p.reviews} reviews) | {p.brand}")
        if page > 1:
            b.link("< Previous page", make_url(page - 1))
        if page < pages:
            b.link("Next page >", make_url(page + 1))

    def _search(self, q: str, page: int, state: ShopState) -> Page:
        b = PageBuilder(
            url_for("/search", q=q, page=page if page > 1 else ""),
            f"Search: {q}" if q else "Search",
        )
        self._header(b, state, q)
        found = self.catalog.search(q) if q.strip() else []
        self._listing(b, found, page, lambda n: url_for("/search", q=q, page=n), q)
        return b.page

    def _category(self, cat: str, page: int, state: ShopState) -> Page:
        cat = cat.replace("+", " ")
        b = PageBuilder(
            url_for(f"/category/{quote_plus(cat)}", page=page if page > 1 else ""),
            f"Category: {cat}",
        )
        self._header(b, state)
        found = self.catalog.by_category.get(cat, [])
        self._listing(b, found, page, lambda n: url_for(f"/category/{quote_plus(cat)}", page=n), "")
        return b.page

    def _product(self, p: Product, query: dict[str, str], state: ShopState) -> Page:
        chosen = {k: v for k, v in query.items() if k in p.options and v in p.options[k]}
        back_q = query.get("q", "")
        b = PageBuilder(url_for(f"/product/{p.product_id}", q=back_q, **chosen), p.title)
        self._header(b, state)
        b.add("heading", p.title)
        b.text(f"Price: {money(p.price)}")
        b.text(f"Brand: {p.brand} | Category: {p.category}")
        b.text(f"Rating: {p.rating} out of 5 ({p.reviews} reviews)")
        b.text(f"Features: {', '.join(p.attributes)}")
        b.text(p.description)
        for name, values in p.options.items():
            b.text(f"{name}:")
            for value in values:
                picked = {**chosen, name: value}
                url = url_for(f"/product/{p.product_id}", q=back_q, **picked)
                b.add("radio", value, ("goto", url), checked=chosen.get(name) == value)
        missing = [n for n in p.options if n not in chosen]

        def add_to_cart(s: ShopState) -> str:
            if missing:
                return url_for(f"/product/{p.product_id}", q=back_q, **chosen, error="options")
            s.cart.append(CartItem(p.product_id, dict(chosen)))
            return url_for("/cart")

        b.button("Add to cart", add_to_cart)
        if query.get("error") == "options":
            b.page.notice = f"Choose a {' and a '.join(missing)} before adding to the cart."
        if back_q:
            b.link("Back to search results", url_for("/search", q=back_q))
        return b.page

    def _cart(self, state: ShopState) -> Page:
        b = PageBuilder(url_for("/cart"), "Shopping cart")
        b.link("Home", url_for("/"))
        if not state.cart:
            b.text("Your cart is empty.")
            return b.page
        for i, item in enumerate(state.cart):
            p = self.catalog.by_id[item.product_id]
            opts = ", ".join(f"{k}: {v}" for k, v in item.options.items())
            b.link(p.title, url_for(f"/product/{p.product_id}", **item.options))
            b.text(f"{opts} | {money(p.price)}")
            b.button("Remove", _remover(i))
        b.text(f"Total: {money(self._total(state.cart))}")
        b.button("Proceed to checkout", ("goto", url_for("/checkout")))
        return b.page

    def _checkout(self, state: ShopState) -> Page:
        b = PageBuilder(url_for("/checkout"), "Checkout")
        if not state.cart:
            b.text("Your cart is empty.")
            b.link("Home", url_for("/"))
            return b.page
        b.text(f"{len(state.cart)} item(s), total {money(self._total(state.cart))}")

        def place(s: ShopState) -> str:
            order = Order(len(s.orders) + 1, list(s.cart), self._total(s.cart))
            s.orders.append(order)
            s.cart.clear()
            return url_for(f"/order/{order.number}")

        b.button("Place order", place)
        b.link("Back to cart", url_for("/cart"))
        return b.page

    def _order(self, number: int, state: ShopState) -> Page:
        b = PageBuilder(url_for(f"/order/{number}"), f"Order {number}")
        order = next((o for o in state.orders if o.number == number), None)
        if order is None:
            b.text("No such order.")
        else:
            b.add("heading", f"Thank you! Order #{number} is placed.")
            for item in order.items:
                p = self.catalog.by_id[item.product_id]
                opts = ", ".join(f"{k}: {v}" for k, v in item.options.items())
                b.text(f"{p.title} ({opts}) {money(p.price)}")
            b.text(f"Total paid: {money(order.total)}")
        b.link("Home", url_for("/"))
        return b.page

    def _total(self, items: list[CartItem]) -> float:
        return round(sum(self.catalog.by_id[i.product_id].price for i in items), 2)


def _remover(index: int):  # type: ignore[no-untyped-def]
    def remove(s: ShopState) -> str:
        if 0 <= index < len(s.cart):
            s.cart.pop(index)
        return url_for("/cart")

    return remove


def _int(value: str | None) -> int:
    try:
        return int(value or 1)
    except ValueError:
        return 1
