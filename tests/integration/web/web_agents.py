"""Scripted (non-learning) agents for the web environment. They read only the task
instruction and the text observations, like an LLM agent would, and act through the
environment server's HTTP API."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from environments.client import EnvironmentsClient
from services.common.wire import StepResult, ToolCall

LINE = re.compile(r"^\[(\d+)\] (\w+) ?(.*)$")
VALUE = re.compile(r"(?:^| )value=('.*'|\".*\")$")
BUY = re.compile(
    r"Buy (?:(?P<aud>\S+'s?) )?(?P<noun>.+?) that is (?P<attrs>.+?), with (?P<opts>.+?), "
    r"for less than \$(?P<cap>[\d.]+)\."
)


@dataclass
class El:
    eid: int
    role: str
    text: str
    selected: bool


def elements(observation: str) -> list[El]:
    out = []
    for line in observation.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        rest = m.group(3)
        selected = rest.endswith(" (selected)")
        rest = VALUE.sub("", rest.removesuffix(" (selected)"))
        text = ast.literal_eval(rest) if rest else ""
        out.append(El(int(m.group(1)), m.group(2), text, selected))
    return out


class Episode:
    def __init__(self, client: EnvironmentsClient, session_id: str, observation: str) -> None:
        self.client, self.sid, self.obs = client, session_id, observation
        self.steps = 0

    def act(self, name: str, **arguments: object) -> StepResult:
        result = self.client.step(self.sid, ToolCall(name=name, arguments=arguments))
        self.obs, self.steps = result.observation, self.steps + 1
        return result

    def find(self, role: str, pred) -> El | None:  # type: ignore[no-untyped-def]
        return next((e for e in elements(self.obs) if e.role == role and pred(e.text)), None)

    def finish(self, answer: str) -> float:
        result = self.act("finish", answer=answer)
        assert result.done and result.info["final_answer"] == answer
        return float(result.reward or 0.0)


def parse_buy(instruction: str) -> tuple[str, list[str], dict[str, str], float]:
    m = BUY.search(instruction)
    assert m, instruction
    attrs = m.group("attrs").split(" and ")
    opts = dict(part.split(" ", 1) for part in m.group("opts").split(", "))
    return m.group("noun"), attrs, opts, float(m.group("cap"))


def shopper(ep: Episode, instruction: str, careful: bool = True) -> float:
    """Search for the noun and attributes; open candidates whose listing price fits until
    one has every attribute and option; choose the options; buy. The careless variant
    buys the first search result with the first option values."""
    noun, attrs, opts, cap = parse_buy(instruction)
    ep.act("type", element_id=1, text=f"{noun} {' '.join(attrs)}\n")
    for _page in range(3):
        listing = elements(ep.obs)
        for i, el in enumerate(listing):
            if el.role != "link" or not el.text.lower().endswith(noun):
                continue
            price = float(re.search(r"\$([\d,.]+)", listing[i + 1].text).group(1).replace(",", ""))
            if careful and price > cap:
                continue
            ep.act("click", element_id=el.eid)
            features = next(
                (e.text for e in elements(ep.obs) if e.text.startswith("Features:")), ""
            )
            radios = [e.text for e in elements(ep.obs) if e.role == "radio"]
            if not careful or (all(a in features for a in attrs)
                               and all(v in radios for v in opts.values())):  # fmt: skip
                return _buy(ep, opts if careful else {})
            ep.act("back")
            listing = elements(ep.obs)
        nxt = ep.find("link", lambda t: t.startswith("Next page"))
        if nxt is None:
            break
        ep.act("click", element_id=nxt.eid)
    return ep.finish("done")


def _buy(ep: Episode, opts: dict[str, str]) -> float:
    groups: list[list[El]] = []
    for el in elements(ep.obs):  # radios come in groups after their "name:" text
        if el.role == "text" and el.text.endswith(":"):
            groups.append([])
        elif el.role == "radio" and groups:
            groups[-1].append(el)
    for group in groups:
        wanted = [r for r in group if r.text in opts.values()] or group[:1]
        ep.act("click", element_id=wanted[0].eid)
        assert "Add to cart" in ep.obs, ep.obs
        # ids are stable across re-renders of the product page (same layout)
    ep.act("click", element_id=ep.find("button", lambda t: t == "Add to cart").eid)
    ep.act("click", element_id=ep.find("button", lambda t: t == "Proceed to checkout").eid)
    ep.act("click", element_id=ep.find("button", lambda t: t == "Place order").eid)
    assert "Order #" in ep.obs, ep.obs
    return ep.finish("done")


def wrong_shopper(ep: Episode, instruction: str) -> float:
    """Buys the first product of a category other than the requested one."""
    noun, *_ = parse_buy(instruction)
    cat = ep.find(
        "link",
        lambda t: "(" in t and "Cart" not in t and not any(w in t.lower() for w in noun.split()),
    )
    ep.act("click", element_id=cat.eid)
    first = next(e for e in elements(ep.obs) if e.role == "link" and "Cart" not in e.text)
    ep.act("click", element_id=first.eid)
    assert "Add to cart" in ep.obs, ep.obs
    return _buy(ep, {})


def researcher(ep: Episode, question: str) -> float:
    """Answers price / review / option questions by searching the product's title."""
    m = re.search(r"(?:of|does) the (.+?)(?: have| come in)?\? Answer", question)
    title = m.group(1)
    ep.act("type", element_id=1, text=title + "\n")
    link = ep.find("link", lambda t: t == title)
    assert link is not None, (question, ep.obs)
    ep.act("click", element_id=link.eid)
    texts = [e.text for e in elements(ep.obs)]
    if question.startswith("What is the price"):
        price = next(t for t in texts if t.startswith("Price:"))
        return ep.finish(price.removeprefix("Price: $").replace(",", ""))
    if question.startswith("How many reviews"):
        rating = next(t for t in texts if t.startswith("Rating:"))
        return ep.finish(re.search(r"\((\d+) reviews\)", rating).group(1))
    option = re.search(r"Which (\w+) options", question).group(1)
    els = elements(ep.obs)
    start = next(i for i, e in enumerate(els) if e.text == f"{option}:")
    values = []
    for e in els[start + 1 :]:
        if e.role != "radio":
            break
        values.append(e.text)
    return ep.finish(", ".join(values))


def miniwob_agent(ep: Episode, utterance: str, right: bool = True) -> float:
    """Solves (or, with right=False, deliberately fails) the MiniWoB++ tasks we serve."""
    quoted = re.findall(r'"([^"]*)"', utterance)
    if utterance.startswith("Click on the"):
        role = "button" if utterance.endswith("button.") else "link"
        pick = [e for e in elements(ep.obs) if e.role == role and (e.text == quoted[0]) == right]
        if pick:
            ep.act("click", element_id=pick[0].eid)
    elif utterance.startswith("Enter"):
        box = ep.find("textbox", lambda t: True)
        ep.act("type", element_id=box.eid, text=quoted[0] if right else "wrong answer")
        ep.act("click", element_id=ep.find("button", lambda t: t == "Submit").eid)
    elif utterance.startswith("Focus"):
        if right:
            ep.act("click", element_id=ep.find("textbox", lambda t: True).eid)
    elif utterance.startswith("Select"):
        names = utterance.removeprefix("Select ").removesuffix(" and click Submit.")
        wanted = set() if names == "nothing" else set(names.split(", "))
        for box in [e for e in elements(ep.obs) if e.role == "checkbox"]:
            if (box.text in wanted) == right:
                ep.act("click", element_id=box.eid)
        ep.act("click", element_id=ep.find("button", lambda t: t == "Submit").eid)
    return ep.finish("done")
