"""A single-turn bandit task for learner tests: a producer samples completions from the
current policy with transformers (recording behaviour logprobs and versions exactly as an
engine would) and rewards the fraction of completion tokens in a target set; the caller
puts the groups into replay."""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import load_file

from services.common.wire import Trajectory, TurnSpan


def target_tokens(model: torch.nn.Module, seed: int, fraction: float = 0.25) -> torch.Tensor:
    """The rewarded pattern, planted so a policy can learn it by generalising rather than
    memorising single tokens: the `fraction` of the vocabulary whose initial output
    embedding projects most on a fixed random direction."""
    weight = model.get_output_embeddings().weight.detach().float()
    direction = torch.randn(weight.shape[1], generator=torch.Generator().manual_seed(seed))
    score = weight @ direction
    return score > torch.quantile(score, 1.0 - fraction)


class BanditProducer:
    def __init__(
        self,
        model_path: Path,
        job_id: str,
        *,
        group_size: int = 8,
        prompt_len: int = 6,
        completion_len: int = 8,
        num_tasks: int = 16,
        seed: int = 0,
    ) -> None:
        from transformers import AutoModelForCausalLM

        self.model = AutoModelForCausalLM.from_pretrained(str(model_path), dtype=torch.float32)
        self.model.eval()
        self.job_id = job_id
        self.group_size = group_size
        self.completion_len = completion_len
        self.gen = torch.Generator().manual_seed(seed)
        vocab = self.model.config.vocab_size
        task_gen = torch.Generator().manual_seed(seed + 1)
        self.prompts = torch.randint(100, vocab, (num_tasks, prompt_len), generator=task_gen)
        self.target = target_tokens(self.model, seed + 2)
        self.loaded_version = 0
        self.rounds = 0

    def reward_of(self, completion: list[int]) -> float:
        """Fraction of the completion's tokens in the target set."""
        return sum(bool(self.target[t]) for t in completion) / max(len(completion), 1)

    def load(self, folder: str | Path, version: int) -> None:
        """Swap in published weights (what an inference replica does on /v1/weights)."""
        if version == self.loaded_version:
            return
        state = load_file(str(Path(folder) / "model.safetensors"))
        self.model.load_state_dict({k: v.float() for k, v in state.items()}, strict=False)
        self.model.tie_weights()
        self.loaded_version = version

    @torch.no_grad()
    def _sample(self, prompts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        ids, past = prompts, None
        tokens, logps = [], []
        for _ in range(self.completion_len):
            out = self.model(input_ids=ids, past_key_values=past, use_cache=True)
            past = out.past_key_values
            logp = torch.log_softmax(out.logits[:, -1].float(), dim=-1)
            tok = torch.multinomial(logp.exp(), 1, generator=self.gen)
            tokens.append(tok)
            logps.append(logp.gather(-1, tok))
            ids = tok
        return torch.cat(tokens, 1), torch.cat(logps, 1)

    def produce(self, num_groups: int) -> list[Trajectory]:
        """`num_groups` groups of `group_size` samples from the loaded policy."""
        task_ids = [(self.rounds * num_groups + g) % len(self.prompts) for g in range(num_groups)]
        self.rounds += 1
        prompts = self.prompts[task_ids].repeat_interleave(self.group_size, 0)
        completions, logps = self._sample(prompts)
        out = []
        p_len = prompts.shape[1]
        for row in range(prompts.shape[0]):
            g, k = divmod(row, self.group_size)
            comp = completions[row].tolist()
            n = len(comp)
            out.append(
                Trajectory(
                    job_id=self.job_id,
                    task_id=f"task-{task_ids[g]}",
                    group_id=f"r{self.rounds}-g{g}",
                    group_size=self.group_size,
                    sample_index=k,
                    env="bandit",
                    token_ids=prompts[row].tolist() + comp,
                    loss_mask=[0] * p_len + [1] * n,
                    behavior_logprobs=[0.0] * p_len + logps[row].tolist(),
                    policy_versions=[0] * p_len + [self.loaded_version] * n,
                    prompt_length=p_len,
                    start_version=self.loaded_version,
                    reward=self.reward_of(comp),
                    turn_spans=[TurnSpan(turn=0, start=p_len, end=p_len + n)],
                )
            )
        return out
