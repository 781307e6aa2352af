"""The chat-tool protocol: how a chat model plays an episode through one ``act(command)`` tool.

* :mod:`~agentgym_budget.chat.tool`: the system prompt, the ``act`` tool's schema, tool calls as chat
  messages and text, and how a parsed reply becomes commands;
* :mod:`~agentgym_budget.chat.format`: a trained model's :class:`~agentgym_budget.chat.format.ChatFormat`
  (saved beside its weights) and conversations as token ids exactly as TRL's GRPO builds them.

Agents, training and the RL-library adapters import this package; it imports none of them.

May import: :mod:`agentgym_budget.storage`, :mod:`agentgym_budget.errors` and the layers below (it sits
in the agents/chat/stats layer).
"""

from agentgym_budget.chat.format import ChatFormat as ChatFormat
from agentgym_budget.chat.format import ConversationTokens as ConversationTokens
from agentgym_budget.chat.tool import (
    DEFAULT_SYSTEM_PROMPT as DEFAULT_SYSTEM_PROMPT,
)
from agentgym_budget.chat.tool import (
    act_commands as act_commands,
)
from agentgym_budget.chat.tool import (
    act_tool_schema as act_tool_schema,
)
from agentgym_budget.chat.tool import (
    tool_call as tool_call,
)

__all__: list[str] = []
