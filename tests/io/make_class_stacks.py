"""Writes tensorclass directories shaped as TorchRL's History with ContentBase content, from
stand-in classes (module `chat`, written next to the output): a lazy stack of messages, each
message's `content` a lazy stack of parts holding only the fields they set.

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
sys.path.insert(0, out)

from chat import Message, Part  # noqa: E402
from tensordict import lazy_stack  # noqa: E402

parts = lazy_stack([Part(type="text", text="Describe this."), Part(type="image", url="u")])
answer = lazy_stack([Part(type="text", text="A cat.")])
chat = lazy_stack([Message(role="user", content=parts), Message(role="assistant", content=answer)])
chat.memmap(os.path.join(out, "chat"))
Message(role="user", content=parts).memmap(os.path.join(out, "message"))
