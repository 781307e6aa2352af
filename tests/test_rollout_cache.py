"""What the model computes while the package plays rollouts (extra ``trl``): a group's shared prompt read once,
the keys / values written in place while decoding, logits only where a token is sampled; none of it changes a token.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

from tests.train_support import tiny_config

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="TRL needs Python >= 3.11")


class _Reads:
    """Records, for every forward pass of ``model``: the ``[rows, tokens]`` read, the positions the output layer
    computed logits for, and the storage of the first layer's cached keys it was given."""

    def __init__(self, model):
        self.inputs, self.logit_positions, self.key_storage = [], [], []
        self.handles = [
            model.register_forward_pre_hook(self._forward, with_kwargs=True),
            model.get_output_embeddings().register_forward_hook(self._logits),
        ]

    def _forward(self, module, args, kwargs):
        self.inputs.append(tuple(kwargs["input_ids"].shape))
        cache = kwargs.get("cache", kwargs.get("past_key_values"))
        layers = getattr(cache, "layers", None)
        self.key_storage.append(layers[0].keys.data_ptr() if layers and layers[0].keys is not None else None)

    def _logits(self, module, args, output):
        self.logit_positions.append(output.shape[1])

    def close(self):
        for handle in self.handles:
            handle.remove()


def _sessions(count):
    from agentgym_budget.integrations.session import EpisodeSession

    config = replace(tiny_config("fixed").session_config(), max_turns=3)
    return [EpisodeSession(config) for _ in range(count)]


def _play(local, batch_size):
    from agentgym_budget.agents.hf_generation import Sampling
    from agentgym_budget.train.rollouts import GroupSpec, play_groups

    sessions = _sessions(4)
    reads = _Reads(local.model)
    try:
        groups = play_groups(
            local,
            sessions,
            [GroupSpec({"task": 0, "seed": 3}, 4, seed=11)],
            Sampling(max_new_tokens=12),
            batch_size=batch_size,
        )
    finally:
        reads.close()
        for session in sessions:
            session.close()
    return groups[0], reads


def test_a_group_reads_its_shared_prompt_once_and_plays_what_each_member_plays_alone(local):
    group, reads = _play(local, batch_size=None)
    prompt = len(group[0].prompt_ids)
    assert reads.inputs[0] == (1, prompt), "the 4 members' identical first prompt must be prefilled once"
    # Every later forward pass reads new tokens only: one per row while decoding, the turn's additions at a turn.
    assert all(tokens < prompt for _, tokens in reads.inputs[1:])
    alone, _ = _play(local, batch_size=1)
    assert [r.completion_ids for r in group] == [r.completion_ids for r in alone]
    assert [r.model_mask for r in group] == [r.model_mask for r in alone]


def test_decoding_writes_keys_and_values_in_place_and_computes_only_the_sampled_logits(local):
    from agentgym_budget.agents.hf_generation import GenerationRequest, PrefixCache, Sampling, generate

    ids = tuple(local.tokenizer.encode("You are in a hall. An exit to the east. " * 3))
    sampling = Sampling(max_new_tokens=8)
    reads = _Reads(local.model)
    try:
        first = generate(
            local, [GenerationRequest(ids, 5, sampling, PrefixCache()), GenerationRequest(ids, 6, sampling)]
        )
    finally:
        reads.close()
    decoding = [ptr for (_, tokens), ptr in zip(reads.inputs, reads.key_storage, strict=True) if tokens == 1]
    assert len(decoding) >= 2 and len(set(decoding)) == 1, "a decoding step must not copy the cache to grow it"
    assert set(reads.logit_positions) == {1}, "logits are needed at the last position only"
    alone = [generate(local, [GenerationRequest(ids, seed, sampling)])[0] for seed in (5, 6)]
    assert [g.ids for g in first] == [g.ids for g in alone]
