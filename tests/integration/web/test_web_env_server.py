"""The web environment through the environment server's HTTP API with its real catalog
and task sets: scripted agents solve a sample of shop tasks (purchases and questions),
and the graded reward separates a careful agent from careless and wrong ones."""

from __future__ import annotations

import statistics

from web_agents import Episode, elements, researcher, shopper, wrong_shopper

from environments.client import EnvironmentsClient
from services.common.wire import SessionCreate, ToolCall


def _open(client: EnvironmentsClient, task_id: str) -> tuple[Episode, str]:
    info = client.create_session(SessionCreate(env="web", task_id=task_id))
    instruction = info.observation.split("\n\n")[1]
    assert "URL: http://shop.localhost/" in info.observation
    return Episode(client, info.session_id, info.observation), instruction


def test_catalog_and_splits(web_server: str) -> None:
    client = EnvironmentsClient(web_server, retries=0, timeout=60)
    envs = {e.name: e for e in client.list_environments().environments}
    web = envs["web"]
    assert {t.function.name for t in web.tools} == {
        "goto", "click", "type", "back", "scroll", "finish"
    }  # fmt: skip
    sizes = web.task_sets["default"]
    assert int(sizes["train"]) + int(sizes["eval"]) >= 500 and int(sizes["eval"]) >= 100
    views = client.list_tasks("web", split="eval", limit=1000).tasks
    assert {v.metadata["kind"] for v in views} == {"buy", "info"}
    assert all("gold" not in v.model_dump() for v in views)


def test_scripted_shopper_separates_right_from_wrong(web_server: str) -> None:
    client = EnvironmentsClient(web_server, retries=0, timeout=60)
    views = client.list_tasks("web", split="eval", limit=1000).tasks
    buys = [v.task_id for v in views if v.metadata["kind"] == "buy"][:8]
    careful, careless, wrong = [], [], []
    for task_id in buys:
        ep, instruction = _open(client, task_id)
        careful.append(shopper(ep, instruction))
        ep, instruction = _open(client, task_id)
        careless.append(shopper(ep, instruction, careful=False))
        ep, instruction = _open(client, task_id)
        wrong.append(wrong_shopper(ep, instruction))
    means = [statistics.mean(x) for x in (careful, careless, wrong)]
    print(f"web buy: careful={careful} careless={careless} wrong={wrong} means={means}")
    assert means[0] >= 0.9 and min(careful) >= 0.5
    assert means[0] > means[1] > means[2]
    assert max(wrong) <= 0.25


def test_scripted_researcher_answers_questions(web_server: str) -> None:
    client = EnvironmentsClient(web_server, retries=0, timeout=60)
    views = client.list_tasks("web", split="eval", limit=1000).tasks
    questions = [v for v in views if v.metadata["kind"] == "info" and "cheapest" not in v.prompt][
        :9
    ]
    right, wrong = [], []
    for view in questions:
        ep, question = _open(client, view.task_id)
        right.append(researcher(ep, question.removeprefix("Question: ")))
        ep, _ = _open(client, view.task_id)
        wrong.append(ep.finish("12"))
    print(f"web info: right={right} wrong={wrong}")
    assert right == [1.0] * len(questions)
    assert max(wrong) == 0.0


def test_navigation_scroll_back_and_blocking(web_server: str) -> None:
    client = EnvironmentsClient(web_server, retries=0, timeout=60)
    ep, _ = _open(client, "web-buy-0000")
    for url in ("https://example.com/", "file:///etc/passwd", "http://10.0.0.1/"):
        blocked = ep.act("goto", url=url)
        assert blocked.error is not None and blocked.error.kind == "refused", blocked
    ep.act("goto", url="http://shop.localhost/category/shoes")
    assert "Title: Category: shoes" in ep.obs and "Next page >" in ep.obs
    scrolled = ep.act("scroll", direction="down")  # a short page: nothing moves
    assert scrolled.error is None and elements(ep.obs)[0].eid == 1
    ep.act("back")
    assert "Title: Shop — Home" in ep.obs
    bad = ep.act("click", element_id=999)
    assert bad.error is not None and bad.error.kind == "tool_error"
    nothing = client.step(ep.sid, ToolCall(name="finish", arguments={"answer": "done"}))
    assert nothing.done and nothing.reward == 0.0  # bought nothing
