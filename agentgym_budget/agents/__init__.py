"""Agents: the protocol, the built-in agents and the name registry used by ``--agent``.

====================================  ===========================================================
``random``                            uniform over the admissible actions
``expert``                            the family's reference solver (``expert_action``)
``noisy-expert-recover[:eps=E]``      expert that errs with probability E and re-plans after errors
``noisy-expert-norecover[:eps=E]``    expert that errs with probability E and keeps its stale plan
``openai:MODEL[:key=value,...]``      chat model behind any OpenAI-compatible endpoint
``hf:PATH[:key=value,...]``           local Hugging Face causal LM (e.g. a training checkpoint)
``score:MODEL[:key=value,...]``        causal LM choosing among the admissible commands by likelihood
====================================  ===========================================================

The room for agents (the protocol, the built-in ones, model-backed ones, the ``--agent`` name registry); a
new agent is a module here plus one :func:`~agentgym_budget.agents.registry.register_agent` call.

May import: :mod:`agentgym_budget.chat` (same layer), :mod:`agentgym_budget.core`, :mod:`agentgym_budget.storage`,
:mod:`agentgym_budget.dependencies`, :mod:`agentgym_budget.errors` and the layers below. The runner, the
evaluations, the RL plug-ins and training import it; it imports none of them.

Example:
    >>> from agentgym_budget.agents import parse_agent
    >>> sorted(agent_kinds())
    ['expert', 'hf', 'noisy-expert-norecover', 'noisy-expert-recover', 'openai', 'random', 'score']
    >>> parse_agent("random").build()
    RandomAgent()
"""

from __future__ import annotations

from typing import Any

from agentgym_budget.agents.base import (
    Agent as Agent,
)
from agentgym_budget.agents.base import (
    AsyncAgent as AsyncAgent,
)
from agentgym_budget.agents.base import (
    SeededAgent as SeededAgent,
)
from agentgym_budget.agents.base import (
    is_async_agent as is_async_agent,
)
from agentgym_budget.agents.base import (
    required_info_keys as required_info_keys,
)
from agentgym_budget.agents.builtin import ExpertAgent, NoisyExpertNoRecover, NoisyExpertRecover, RandomAgent
from agentgym_budget.agents.registry import (
    AgentKind as AgentKind,
)
from agentgym_budget.agents.registry import (
    AgentSpec as AgentSpec,
)
from agentgym_budget.agents.registry import (
    Param,
    register_agent,
)
from agentgym_budget.agents.registry import (
    agent_kinds as agent_kinds,
)
from agentgym_budget.agents.registry import (
    parse_agent as parse_agent,
)
from agentgym_budget.agents.registry import (
    unregister_agent as unregister_agent,
)

__all__: list[str] = []

DEFAULT_EPS = 0.3
"""Default error rate of the noisy experts."""


def _openai_agent(model: str, **options: Any) -> Any:
    from agentgym_budget.agents.openai_chat import OpenAIChatAgent

    return OpenAIChatAgent(model, **options)


def _hf_agent(path: str, **options: Any) -> Any:
    from agentgym_budget.agents.hf_agent import HFAgent

    return HFAgent(path, **options)


def _score_agent(path: str, **options: Any) -> Any:
    from agentgym_budget.agents.scoring.agent import ScoreAgent

    return ScoreAgent(path, **options)


def _check_normalise(value: str) -> None:
    from agentgym_budget.agents.scoring.policy import check_normalise

    check_normalise(value)


def _check_model_dir(path: str) -> None:
    from agentgym_budget.agents.hf_model import check_model_dir

    check_model_dir(path)


def _check_template(path: str) -> None:
    if path:
        from agentgym_budget.agents.prompting import PromptTemplate

        PromptTemplate.from_file(path)


_OPENAI_PARAMS = (
    Param("base_url", str, "", "API root, e.g. http://localhost:8000/v1 ($OPENAI_BASE_URL)", operational=True),
    Param("api_key_env", str, "OPENAI_API_KEY", "environment variable holding the key", operational=True),
    Param("temperature", float, 0.7, "sampling temperature", minimum=0.0),
    Param("top_p", float, 1.0, "nucleus sampling mass", minimum=0.0, maximum=1.0, above_minimum=True),
    Param("max_tokens", int, 256, "completion tokens per turn", minimum=1),
    Param("history", int, 8, "past turns shown in the prompt", minimum=0),
    Param("show_actions", bool, True, "show the admissible actions"),
    Param("template", str, "", "JSON prompt template file", check=_check_template),
    Param("timeout", float, 60.0, "total seconds per request", operational=True, minimum=0.0, above_minimum=True),
    Param("retries", int, 4, "retries after a retryable failure", operational=True, minimum=0),
    Param("backoff", float, 1.0, "first retry delay in seconds", operational=True, minimum=0.0),
    Param("concurrency", int, 8, "requests in flight per worker process", operational=True, minimum=1),
    Param("send_seed", bool, True, "send a per-turn seed"),
)
"""Options of ``openai:MODEL`` agents."""

_HF_PARAMS = (
    Param("temperature", float, 1.0, "sampling temperature (0: greedy)", minimum=0.0),
    Param("top_p", float, 1.0, "nucleus sampling mass", minimum=0.0, maximum=1.0, above_minimum=True),
    Param("top_k", int, 0, "keep the k most likely tokens (0: off)", minimum=0),
    Param("max_new_tokens", int, 128, "tokens per reply", minimum=1),
    Param("batch_size", int, 8, "replies generated in one batch", operational=True, minimum=1),
    Param("concurrency", int, 8, "episodes played at once per worker process", operational=True, minimum=1),
    Param(
        "threads",
        int,
        1,
        "torch threads per worker process (0: torch default = cores)",
        operational=True,
        minimum=0,
    ),
    Param(
        "prefix_cache",
        bool,
        True,
        "reuse the conversation's keys/values across turns (same replies, less work)",
        operational=True,
    ),
)
"""Options of ``hf:PATH`` agents."""

_SCORE_PARAMS = (
    Param("temperature", float, 1.0, "softmax temperature over the candidates' scores (0: greedy)", minimum=0.0),
    Param(
        "normalise",
        str,
        "word",
        "a candidate's score: its log-likelihood per word, per token (mean) or sum",
        check=_check_normalise,
    ),
    Param("epsilon", float, 0.0, "probability spread uniformly over the candidates", minimum=0.0, maximum=1.0),
    Param("batch_size", int, 64, "most candidates scored in one forward pass", operational=True, minimum=1),
    Param("concurrency", int, 8, "episodes played at once per worker process", operational=True, minimum=1),
    Param(
        "threads", int, 1, "torch threads per worker process (0: torch default = cores)", operational=True, minimum=0
    ),
    Param("max_candidates", int, 1000, "most candidates in a state (more: an error)", minimum=1),
    Param("command_tokens", int, 64, "tokens of a command that are scored", minimum=1),
)
"""Options of ``score:MODEL`` agents."""


def _register_builtins() -> None:
    eps = Param(
        "eps",
        float,
        DEFAULT_EPS,
        "probability of a random non-expert action each turn",
        identity=True,
        minimum=0.0,
        maximum=1.0,
    )
    register_agent("random", RandomAgent, description="Uniformly random admissible actions.")
    register_agent("expert", ExpertAgent, description="The family's reference solver, re-planned every turn.")
    register_agent(
        "noisy-expert-recover",
        NoisyExpertRecover,
        description="Expert that errs with probability eps and re-plans from wherever the error led.",
        params=[eps],
    )
    register_agent(
        "noisy-expert-norecover",
        NoisyExpertNoRecover,
        description="Expert that errs with probability eps and keeps following the plan it made at reset.",
        params=[eps],
    )
    register_agent(
        "openai",
        _openai_agent,
        argument="model",
        description="Chat model behind an OpenAI-compatible endpoint (vLLM, SGLang, llama.cpp, Ollama...).",
        params=_OPENAI_PARAMS,
    )
    register_agent(
        "hf",
        _hf_agent,
        argument="path",
        check_argument=_check_model_dir,
        description="Local Hugging Face causal LM directory (a training checkpoint), played through the act tool.",
        params=_HF_PARAMS,
    )
    register_agent(
        "score",
        _score_agent,
        argument="model",
        check_argument=_check_model_dir,
        description="Local causal LM choosing among the admissible commands by their likelihood (no generation).",
        params=_SCORE_PARAMS,
    )


_register_builtins()
