"""Token-level invariants of a trajectory, for tests and debugging (`problems` returns
what is wrong, empty when the trajectory is sound):

- the token ids decode to the chat transcript of its messages (nothing re-tokenized);
- the loss mask is 1 exactly on the model turns' tokens (`turn_spans`);
- template/observation tokens carry no logprob and no version;
- each model turn decodes to its assistant message (minus the stop token).
"""

from __future__ import annotations

from collections.abc import Sequence

from services.common.wire import ToolSpec, Trajectory
from services.rollout.chat import ChatTokenizer


def problems(
    chat: ChatTokenizer, traj: Trajectory, tools: Sequence[ToolSpec] | None = None
) -> list[str]:
    out: list[str] = []
    text = chat.decode(traj.token_ids)
    transcript = chat.render_transcript(traj.messages, tools)
    if text != transcript and not transcript.startswith(text):
        out.append("token_ids do not decode to the messages' transcript")
    spans = {i for s in traj.turn_spans for i in range(s.start, s.end)}
    masked = {i for i, m in enumerate(traj.loss_mask) if m}
    if masked != spans:
        out.append(f"loss mask covers {len(masked)} tokens, model turns {len(spans)}")
    for i in set(range(len(traj.token_ids))) - spans:
        if traj.behavior_logprobs[i] != 0.0 or traj.policy_versions[i] != 0:
            out.append(f"template token {i} carries a logprob or a version")
            break
    assistants = [m for m in traj.messages if m.role == "assistant"]
    if len(assistants) != len(traj.turn_spans):
        out.append(f"{len(assistants)} assistant messages, {len(traj.turn_spans)} turn spans")
    for span, message in zip(traj.turn_spans, assistants, strict=False):
        ids = traj.token_ids[span.start : span.end]
        if ids and chat.is_stop(ids[-1]):
            ids = ids[:-1]
        if chat.decode(ids) != message.content:
            out.append(f"turn {span.turn} does not decode to its assistant message")
    return out
