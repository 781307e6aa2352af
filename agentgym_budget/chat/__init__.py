"""The chat-tool protocol: how a chat model plays an episode through one ``act(command)`` tool.

* :mod:`~agentgym_budget.chat.tool`: the system prompt, the ``act`` tool's schema, tool calls as chat
  messages and text, and how a parsed reply becomes commands;
* :mod:`~agentgym_budget.chat.format`: a trained model's :class:`~agentgym_budget.chat.format.ChatFormat`
  (saved beside its weights) and conversations as token ids exactly as TRL's GRPO builds them.

Agents, training and the RL-library adapters import this package; it imports none of them.
"""

from agentgym_budget.chat.format import ChatFormat, ConversationTokens
from agentgym_budget.chat.tool import DEFAULT_SYSTEM_PROMPT, act_commands, act_tool_schema, tool_call

__all__ = ["DEFAULT_SYSTEM_PROMPT", "ChatFormat", "ConversationTokens", "act_commands", "act_tool_schema", "tool_call"]
