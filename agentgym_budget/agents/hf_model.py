"""Local Hugging Face causal LMs for the ``hf:PATH`` agent: checking a directory, loading it once, reading replies.

:func:`check_model_dir` checks a directory without importing torch (so ``hf:PATH`` names are checked
when they are parsed, before a run starts): it must hold ``config.json``, weights (``*.safetensors``
or ``pytorch_model*.bin``), a tokenizer (``tokenizer.json`` or ``tokenizer_config.json``) and, if
present, a valid ``agentgym_chat.json``
(:class:`~agentgym_budget.chat.format.ChatFormat`). A named pretrained model (``hf:smollm2-135m``) or a
``.gguf`` file is first resolved to its cached directory (:func:`~agentgym_budget.agents.pretrained.resolve_model`:
dequantised once, which needs the ``smollm2`` extra). :func:`load_local_model` loads the model
once per process and directory (every agent of a worker shares it; a directory whose files changed
since is loaded again) and prepares it the way TRL's
GRPO trainer prepares it for multi-turn tool calling:

* the tokenizer's chat template must render tool calls; a template that is not prefix-preserving is
  replaced by TRL's training template (``get_training_chat_template``), as the trainer does (a
  template TRL cannot patch is kept: conversations are extended by concatenation either way);
* replies are read with TRL's ``parse_response`` and the response schema TRL's ``add_response_schema``
  sets for the template (Qwen, Llama 3, ...). For a template TRL does not know, ``<tool_call>{json}</tool_call>``
  blocks (the Hermes / Qwen convention) are read instead, and the rest of the reply is its text.

Needs the ``trl`` extra (torch, transformers, trl).

Example:
    >>> check_model_dir("/no/such/model")
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.ModelPathError: No model directory at '/no/such/model' (the path does not exist). Give a directory written by save_pretrained (a training run's checkpoint, e.g. runs/train-bm/final); nothing is downloaded.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym_budget.agents.pretrained import PRETRAINED, resolve_model
from agentgym_budget.chat.format import ChatFormat
from agentgym_budget.dependencies import require
from agentgym_budget.errors import DataError, InvalidOptionError, ModelPathError, did_you_mean

__all__ = ["LocalModel", "load_causal_lm", "load_local_model", "local_model"]

_FEATURE = "The hf: agent (local Hugging Face models)"
_LOADER_FEATURE = "Training and hf: agents"
_WEIGHTS = ("*.safetensors", "*.safetensors.index.json", "pytorch_model*.bin", "pytorch_model*.bin.index.json")
_TOKENIZER = ("tokenizer.json", "tokenizer_config.json")
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def _hint(directory: Path) -> str:
    parent = directory.parent
    if not parent.is_dir():
        return ""
    siblings = sorted(p.name for p in parent.iterdir() if p.is_dir())
    return did_you_mean(directory.name, siblings)


def check_model_dir(path: str | Path) -> Path:
    """The model directory ``path``, checked without loading it (see the module docstring).

    Raises:
        ModelPathError: The path does not exist, is not a directory, or lacks config, weights or tokenizer.
        DataError: Its ``agentgym_chat.json`` is not a chat format.
    """
    if str(path) in PRETRAINED or str(path).endswith(".gguf"):
        path = resolve_model(path)
    directory = Path(path).expanduser()
    advice = (
        "Give a directory written by save_pretrained (a training run's checkpoint, e.g. runs/train-bm/final); "
        "nothing is downloaded."
    )
    if not directory.exists():
        raise ModelPathError(
            f"No model directory at {str(path)!r} (the path does not exist).{_hint(directory)} {advice}"
        )
    if not directory.is_dir():
        raise ModelPathError(f"{str(path)!r} is a file, not a model directory. {advice}")
    missing = []
    if not (directory / "config.json").is_file():
        missing.append("config.json")
    if not any(any(directory.glob(pattern)) for pattern in _WEIGHTS):
        missing.append("weights (*.safetensors or pytorch_model*.bin)")
    if not any((directory / name).is_file() for name in _TOKENIZER):
        missing.append("a tokenizer (tokenizer.json or tokenizer_config.json)")
    if missing:
        subdirs = sorted(p.name for p in directory.iterdir() if p.is_dir() and (p / "config.json").is_file())
        inside = f" Model directories inside it: {', '.join(subdirs)}." if subdirs else ""
        raise ModelPathError(f"{str(path)!r} holds no model: it lacks {', '.join(missing)}.{inside} {advice}")
    from agentgym_budget.chat.format import ChatFormat

    ChatFormat.load(directory)
    return directory


def load_causal_lm(path: str | Path) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of a local Hugging Face causal LM directory (never downloads).

    Raises:
        InvalidOptionError: ``path`` is not a model directory.
        DataError: The directory cannot be loaded, or its chat template cannot render tool calls.
        MissingDependencyError: transformers / torch are not installed (extra ``trl``).
    """
    transformers = require("transformers", extra="trl", feature=_LOADER_FEATURE)
    require("torch", extra="trl", feature=_LOADER_FEATURE)
    directory = Path(path).expanduser()
    if not (directory / "config.json").is_file():
        raise InvalidOptionError(
            f"{str(path)!r} is not a local Hugging Face model directory (no config.json); give the directory a "
            "training run wrote (e.g. runs/train-bm/final) or one saved with save_pretrained. Nothing is downloaded."
        )
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(directory, local_files_only=True)
        model = transformers.AutoModelForCausalLM.from_pretrained(directory, local_files_only=True)
    except (OSError, ValueError) as err:
        raise DataError(f"Cannot load the model in {directory}: {err}") from err
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    templates = require(
        "trl.chat_template_utils", extra="trl", feature=_LOADER_FEATURE, package="trl", min_python=(3, 11)
    )
    if not templates.supports_tool_calling(tokenizer):
        raise DataError(
            f"The chat template of {directory} cannot render tool calls (assistant tool_calls and tool messages); "
            "training and hf: agents play through an `act` tool. Use a model whose template supports tools."
        )
    model.eval()
    return model, tokenizer


@dataclass(frozen=True)
class LocalModel:
    """A loaded model, shared by the agents of a process.

    Attributes:
        path: The directory it was loaded from (resolved).
        model: The ``transformers`` causal LM (eval mode, CPU).
        tokenizer: Its tokenizer (chat template prepared as TRL's trainer prepares it).
        chat_format: The :class:`~agentgym_budget.chat.format.ChatFormat` it was trained with.
        eos_ids: Tokens that end a reply (the tokenizer's end token and the generation config's).
        pad_id: Token used for left padding.
        context: Longest sequence the model takes (``max_position_embeddings``).
        parser: ``"trl"`` (TRL's response parser) or ``"tool_call_tags"`` (the fallback).
    """

    path: Path
    model: Any
    tokenizer: Any
    chat_format: Any
    eos_ids: frozenset[int]
    pad_id: int
    context: int
    parser: str

    def parse(self, completion: Sequence[int], prefix: Sequence[int]) -> dict[str, Any]:
        """The assistant message of ``completion`` (token ids), generated after ``prefix``."""
        if self.parser == "trl":
            from trl.chat_template_utils import parse_response

            from agentgym_budget.chat.tool import act_tool_schema

            return parse_response(self.tokenizer, list(completion), prefix=list(prefix), tools=[act_tool_schema()])
        text = self.tokenizer.decode(list(completion), skip_special_tokens=False)
        for token in {self.tokenizer.eos_token, self.tokenizer.pad_token} - {None}:
            text = text.replace(token, "")
        calls = []
        for block in _TOOL_CALL.findall(text):
            try:
                data = json.loads(block)
            except ValueError:
                continue
            if isinstance(data, dict):
                calls.append({"type": "function", "function": data})
        content = _TOOL_CALL.sub("", text).strip()
        return {"role": "assistant", "content": content, **({"tool_calls": calls} if calls else {})}


_CACHE: dict[tuple[Path, tuple[tuple[str, int, int], ...]], LocalModel] = {}
_LOCK = threading.Lock()


def _prepare_tokenizer(tokenizer: Any) -> str:
    templates = require("trl.chat_template_utils", extra="trl", feature=_FEATURE, package="trl", min_python=(3, 11))
    parser = "trl"
    if getattr(tokenizer, "response_template", None) is None and getattr(tokenizer, "response_schema", None) is None:
        try:  # recognised from the model's own template, before it is replaced below (as in TRL)
            templates.add_response_schema(tokenizer)
        except ValueError:
            parser = "tool_call_tags"
    if not templates.is_chat_template_prefix_preserving(tokenizer):
        try:
            training = templates.get_training_chat_template(tokenizer)
        except ValueError:  # TRL could not have trained with it either; its own template still renders the turns
            training = None
        if training is not None:
            tokenizer.chat_template = training
    return parser


def local_model(model: Any, tokenizer: Any, chat_format: Any, path: str | Path = "<in memory>") -> LocalModel:
    """A :class:`LocalModel` of a model already in memory (e.g. the policy a trainer is training), prepared as
    :func:`load_local_model` prepares a loaded one: eval mode, TRL's response parser and training template.

    Raises:
        DataError: The model has no end-of-sequence token.
        MissingDependencyError: trl is not installed (extra ``trl``).
    """
    model.eval()
    parser = _prepare_tokenizer(tokenizer)
    eos = model.generation_config.eos_token_id
    eos_ids = {tokenizer.eos_token_id, *([eos] if isinstance(eos, int) else eos or [])} - {None}
    if not eos_ids:
        raise DataError(f"The model in {path} has no end-of-sequence token: replies could not end.")
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(eos_ids)
    context = int(getattr(model.config, "max_position_embeddings", 0) or tokenizer.model_max_length)
    return LocalModel(Path(path), model, tokenizer, chat_format, frozenset(eos_ids), int(pad), context, parser)


def load_local_model(path: str | Path, *, threads: int = 0, loader: Callable[[Path], Any] | None = None) -> LocalModel:
    """The model in ``path``, loaded once per process (see the module docstring).

    Args:
        path: A model directory (:func:`check_model_dir`).
        threads: ``torch.set_num_threads(threads)`` when positive (process-wide).
        loader: ``loader(directory) -> (model, tokenizer)``; default
            :func:`load_causal_lm` (local files only).

    Raises:
        ModelPathError: See :func:`check_model_dir`.
        DataError: The model cannot be loaded, or its chat template cannot render tool calls.
        MissingDependencyError: torch / transformers / trl are not installed (extra ``trl``).
    """
    torch = require("torch", extra="trl", feature=_FEATURE)
    if threads > 0:
        torch.set_num_threads(int(threads))
    directory = check_model_dir(path).resolve()
    # A directory rewritten since (a new checkpoint saved over it) is loaded again.
    files = tuple(sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in directory.iterdir() if p.is_file()))
    key = (directory, files)
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
        if loader is None:
            loader = load_causal_lm
        model, tokenizer = loader(directory)
        loaded = local_model(model, tokenizer, ChatFormat.load(directory), directory)
        for old in [k for k in _CACHE if k[0] == directory]:
            del _CACHE[old]
        _CACHE[key] = loaded
        return loaded
