"""Writes tensorclass directories shaped as TorchRL's History, from stand-in classes written next
to the output (module `chat`, and `torchrl.data.llm.history` unless TorchRL is importable):

- chat, message: a lazy stack of messages (and one message), each message's `content` a lazy
  stack of parts holding only the fields they set, as TorchRL's ContentBase content;
- chats: History.from_chats's layout, a lazy stack of conversations, each a lazy stack of 0-D
  messages.

    make_class_stacks.py OUT_DIR
"""
import os
import sys

try:
    import td_compat  # noqa: F401  (../shared/python-peer's shims for old torch)
except ImportError:
    pass

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "chat.py"), "w") as module:
    module.write(
        "from typing import Any, Optional\n"
        "from tensordict import tensorclass\n\n"
        "@tensorclass(nocast=True, shadow=True)\n"
        "class Part:\n"
        "    type: Any\n"
        "    text: Any = None\n"
        "    url: Any = None\n\n"
        "@tensorclass(nocast=True)\n"
        "class Message:\n"
        "    role: Any\n"
        "    content: Any\n"
    )
try:
    import torchrl.data.llm.history  # noqa: F401
except ImportError:  # TorchRL's History as a stand-in: its name and fields, nocast
    package = os.path.join(out, "torchrl", "data", "llm")
    os.makedirs(package, exist_ok=True)
    for level in ("torchrl", "torchrl/data", "torchrl/data/llm"):
        open(os.path.join(out, level, "__init__.py"), "w").close()
    with open(os.path.join(package, "history.py"), "w") as module:
        module.write(
            "from typing import Any, Optional\n"
            "from tensordict import tensorclass\n\n"
            "@tensorclass(nocast=True)\n"
            "class History:\n"
            "    role: Any\n"
            "    content: Any\n"
            "    is_complete: Any = True\n"
            "    tool_calls: Optional[list] = None\n"
            "    tool_responses: Optional[list] = None\n"
        )
sys.path.insert(0, out)

from chat import Message, Part  # noqa: E402
from tensordict import lazy_stack  # noqa: E402

parts = lazy_stack([Part(type="text", text="Describe this."), Part(type="image", url="u")])
answer = lazy_stack([Part(type="text", text="A cat.")])
chat = lazy_stack([Message(role="user", content=parts), Message(role="assistant", content=answer)])
chat.memmap(os.path.join(out, "chat"))
Message(role="user", content=parts).memmap(os.path.join(out, "message"))

from torchrl.data.llm.history import History  # noqa: E402

chats = [
    [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}],
    [{"role": "user", "content": "Bye"}],
]
lazy_stack([lazy_stack([History(**message) for message in chat]) for chat in chats]).memmap(
    os.path.join(out, "chats")
)
