#!/usr/bin/env python3
"""Writes table.json: what real TorchRL's History makes of a broad set of chats and texts.

tests/llm/test_torchrl_table.cpp replays every case on our C++ History and compares.

Regenerate (as root, on a machine with the project's sid chroot, whose /opt/peer-main holds
tensordict main: scripts/python-peer.sh and shared/python-peer/README.md make it; a bare git copy
of pytorch/rl comes with the search tool's `fetch github:pytorch/rl`):

    R=/var/lib/tensorclass/chroots/sid
    mkdir -p $R/opt/rl-main && git -C <bare git of pytorch/rl> archive main | tar -x -C $R/opt/rl-main
    mountpoint -q $R/proc || mount --bind /proc $R/proc
    cp tests/llm/torchrl/make_table.py $R/tmp/
    chroot $R env PYTHONPATH=/opt/peer-main/tensordict:/opt/rl-main:/opt/peer-main/shim \
        RL_COMMIT=$(git -C <bare git of pytorch/rl> rev-parse main) \
        python3 /tmp/make_table.py > tests/llm/torchrl/table.json

Table layout (one JSON object):
  "chats": name -> what History.from_chats is given (a list of messages, or a list of chats).
  "options": name -> apply_chat_template's keyword arguments.
  "render": cases {id, template, chats, options, result | error, [masks], [crash, means,
    instead]}. chats names the input in "chats", options the options in "options": those are
    apply_chat_template's (add_generation_prompt, continue_final_message, tools,
    bos_token, eos_token: the tokenizer's special tokens) plus tokenizer_name (the tokenizer's
    name_or_path, which picks the template when "template" is null). result is one text per
    conversation. masks: per conversation, the [begin, end) code point ranges of the tokens
    transformers marks in assistant_masks, with a tokenizer that makes one token per code point
    (and one per special token). error: TorchRL raised {type, message}. crash: TorchRL fails on
    an input where a user wants an answer; instead is what TorchRL renders for the input a user
    means (the chats named by "means").
  "from_text": cases {id, template, text, [source], result | error}: History.from_text(text,
    chat_template_name=template); result lists the messages {role, content, is_complete,
    tool_calls, tool_responses} (absent: None); source: the chat TorchRL rendered the text from
    (without a generation prompt unless the id ends in /gen), named in "chats", when it was.
"""
import json
import os
import sys
import warnings

warnings.filterwarnings("ignore")

import tensordict  # noqa: E402

tensordict.set_list_to_stack(True).set()

import jinja2  # noqa: E402
import tokenizers  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from tokenizers import models, pre_tokenizers, Regex  # noqa: E402
from torchrl.data.llm.history import History  # noqa: E402

TEMPLATES = ["chatml_format", "qwen", "dialogpt", "falcon", "deepseek", "llama"]
# The special tokens of the families the templates were written for (the C++ defaults), and
# a second pair to check that the tokenizer's own are used.
FAMILY_TOKENS = {
    "dialogpt": (None, "<|endoftext|>"),
    "deepseek": ("<\uff5cbegin\u2581of\u2581sentence\uff5c>", "<\uff5cend\u2581of\u2581sentence\uff5c>"),
    "llama": ("<|begin_of_text|>", None),
}


def tokenizer(bos, eos, name=""):
    model = tokenizers.Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    model.pre_tokenizer = pre_tokenizers.Split(Regex("(?m)."), behavior="isolated")
    kwargs = {}
    if bos is not None:
        kwargs["bos_token"] = bos
    if eos is not None:
        kwargs["eos_token"] = eos
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=model, **kwargs)
    tok.name_or_path = name
    return tok


def error_of(e):
    return {"type": type(e).__name__, "message": str(e).splitlines()[0][:100] if str(e) else ""}


def runs(mask, offsets):
    out = []
    for m, (b, e) in zip(mask, offsets):
        if not m:
            continue
        if out and out[-1][1] == b:
            out[-1][1] = e
        else:
            out.append([b, e])
    return out


def render(template, chats, options):
    kw = dict(
        add_generation_prompt=options.get("add_generation_prompt", True),
        continue_final_message=options.get("continue_final_message", False),
    )
    if "tools" in options:
        kw["tools"] = options["tools"]
    bos, eos = FAMILY_TOKENS.get(template, (None, None))
    bos = options.get("bos_token", bos)
    eos = options.get("eos_token", eos)
    tok = tokenizer(bos, eos, options.get("tokenizer_name", ""))
    name = None if template is None else template
    h = History.from_chats(chats)
    text = h.apply_chat_template(tokenizer=tok, chat_template_name=name, **kw)
    texts = text if isinstance(text, list) else [text]
    masks = []
    if kw["continue_final_message"]:
        return texts, None  # transformers computes no assistant mask when continuing
    try:
        rows = [h[i] for i in range(h.batch_size[0])] if h.ndim > 1 else [h]
        for row, t in zip(rows, texts):
            out = row.apply_chat_template(
                tokenizer=tok, chat_template_name=name, return_dict=True,
                return_assistant_tokens_mask=True, **kw)
            enc = tok(t, add_special_tokens=False, return_offsets_mapping=True)
            ids = out["input_ids"].reshape(-1).tolist()
            if ids != enc["input_ids"]:
                raise RuntimeError("tokens differ")
            masks.append(runs(out["assistant_masks"].reshape(-1).tolist(), enc["offset_mapping"]))
    except Exception as e:  # noqa: BLE001
        masks = {"error": error_of(e)}
    return texts, masks


# Known TorchRL failures on inputs a user means something by: (class, what the user means).
def crash_of(err, chats):
    msg = err["message"]
    if "Boolean value of Tensor with no values is ambiguous" in msg:
        # tool_calls=[] or tool_responses=[] (an empty list is stored as an empty tensor): none.
        key = "tool_calls" if strip_key(chats, "tool_calls") != chats else "tool_responses"
        return "empty " + key, strip_key(chats, key)
    if "Undefined is not JSON serializable" in msg:
        # A tool call without arguments: null arguments.
        return "tool call without arguments", fill_arguments(chats)
    return None, None


def strip_key(chats, key):
    if isinstance(chats[0], dict):
        return [{k: v for k, v in m.items() if not (k == key and v == [])} for m in chats]
    return [strip_key(c, key) for c in chats]


def fill_arguments(chats):
    if isinstance(chats[0], dict):
        out = []
        for m in chats:
            m = dict(m)
            if m.get("tool_calls"):
                calls = []
                for c in m["tool_calls"]:
                    c = json.loads(json.dumps(c))
                    target = c["function"] if "function" in c else c
                    target.setdefault("arguments", None)
                    calls.append(c)
                m["tool_calls"] = calls
            out.append(m)
        return out
    return [fill_arguments(c) for c in chats]


U = "\u00e9t\u00e9 \u65e5\u672c\u8a9e \U0001f600 \u05e9\u05dc\u05d5\u05dd"  # accents, CJK, emoji, RTL
WS = "\u3000\u2028\u00a0\u0085\u2009\u200b\u202f\u205f\u1680\u2003\u001f\u000b\u000c"
LONG = ("The quick brown fox jumps over the lazy dog. " * 12).strip()
CALL = {"name": "get_weather", "arguments": {"city": "Paris", "units": ["C", "F"], "n": 3}}
FN_CALL = {"type": "function", "function": {"name": "search", "arguments": {"q": "caf\u00e9"}}}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]


def m(role, content, **kw):
    return {"role": role, "content": content, **kw}


SYS_UA = [m("system", "You are terse."), m("user", "Hi there"), m("assistant", "Hello!")]
CHATS = {
    # The basics.
    "user": [m("user", "What is 2+2?")],
    "system_only": [m("system", "You are terse.")],
    "system_user_assistant": SYS_UA,
    "multi_turn": SYS_UA + [m("user", "And now?"), m("assistant", "Still here.")],
    "no_system": [m("user", "Hi"), m("assistant", "Yo"), m("user", "Bye")],
    "assistant_last_empty": [m("user", "Hi"), m("assistant", "")],
    "empty_contents": [m("system", ""), m("user", ""), m("assistant", "")],
    "whitespace_contents": [m("system", "  \n"), m("user", " hi "), m("assistant", "\tok \n")],
    "unicode": [m("system", U), m("user", U), m("assistant", U)],
    "unicode_whitespace": [m("system", WS + "sys" + WS), m("user", WS + "u" + WS),
                            m("assistant", WS + "a" + WS)],
    "unicode_ws_only_system": [m("system", WS), m("user", "q")],
    "newlines": [m("system", "line1\nline2\n\n"), m("user", "a\r\nb\n"),
                 m("assistant", "\n\nx\n")],
    "jinja_looking": [m("user", "{{ messages }} {% if x %}y{% endif %} {# c #}"),
                      m("assistant", "{%- raw -%}{{ eos_token }}{% endraw %}")],
    "special_tokens": [m("user", "<|im_start|>user\nfake<|im_end|>"),
                       m("assistant", "<|eot|><|header_start|>x<|endoftext|></s>")],
    "role_prefixes": [m("user", "User: Assistant: x"), m("assistant", "Assistant: y\n\nUser: z")],
    "long": [m("user", LONG), m("assistant", LONG[::-1])],
    "unknown_roles": [m("user", "q"), m("function", "f"), m("developer", "d"), m("assistant", "a")],
    "late_system": [m("user", "q"), m("system", "late"), m("assistant", "a")],
    "two_systems": [m("system", "one"), m("system", "two"), m("user", "q")],
    "padding_role": [m("user", "q"), m("<none>", "pad"), m("assistant", "a")],
    "incomplete_last": [m("user", "q"), m("assistant", "partial", is_complete=False)],
    # Tools.
    "tool_roles": [m("user", "weather?"), m("assistant", "calling"), m("tool", "22C"),
                   m("tool", "sunny"), m("assistant", "22C and sunny")],
    "tool_first": [m("tool", "r0"), m("user", "q")],
    "tool_calls": [m("user", "weather?"), m("assistant", "Let me check.", tool_calls=[CALL]),
                   m("tool", "22C"), m("assistant", "It is 22C.")],
    "tool_calls_no_content": [m("user", "q"), m("assistant", "", tool_calls=[CALL, FN_CALL])],
    "tool_calls_function": [m("user", "q"), m("assistant", "ok", tool_calls=[FN_CALL])],
    "tool_calls_empty_list": [m("user", "q"), m("assistant", "a", tool_calls=[])],
    "tool_call_no_arguments": [m("user", "q"), m("assistant", "a", tool_calls=[{"name": "now"}])],
    "tool_call_string_arguments": [m("user", "q"),
                                   m("assistant", "a", tool_calls=[{"name": "f", "arguments": "{\"x\": 1}"}])],
    "tool_responses": [m("user", "q"), m("tool", "ignored", tool_responses=["r1", "r2"]),
                       m("assistant", "done")],
    "tool_responses_dicts": [m("tool", "c", tool_responses=[{"a": 1, "b": "x"}])],
    # Numbers only: tensordict stores them as a tensor.
    "tool_responses_numbers": [m("tool", "c", tool_responses=[2, 3])],
    "tool_responses_number": [m("tool", "c", tool_responses=[1])],
    "tool_responses_empty": [m("tool", "c", tool_responses=[])],
    # Content given as parts, null, missing.
    "parts_text": [m("user", [{"type": "text", "text": " hello "}])],
    "parts_assistant": [m("user", "q"), m("assistant", [{"type": "text", "text": " hi "},
                                                        {"type": "text", "text": "there\n"}])],
    "parts_image": [m("user", [{"type": "image", "url": "http://x/y.png"},
                               {"type": "text", "text": "What is this?"}])],
    "parts_system": [m("system", [{"type": "text", "text": " sys "}]), m("user", "q")],
    "parts_no_type": [m("user", [{"text": "untyped"}]), m("assistant", "a")],
    "parts_no_type_assistant": [m("user", "q"), m("assistant", [{"text": "untyped"}])],
    "parts_no_text": [m("user", [{"type": "text"}, {"type": "text", "text": "b"}])],
    "parts_unicode_ws": [m("user", [{"type": "text", "text": WS + "x" + WS}])],
    "parts_mixed": [m("user", "plain"), m("assistant", [{"type": "text", "text": "parts"}])],
    "content_null": [m("user", None)],
    "content_null_assistant": [m("user", "q"), m("assistant", None)],
    "content_missing": [{"role": "user"}],
    "content_missing_assistant": [m("user", "q"), {"role": "assistant"}],
    # TorchRL's own test inputs (test/llm/test_data.py, chats_round_trip).
    "torchrl_round_trip_0": [m("system", "You are a helpful assistant."),
                             m("user", "What is the capital of France?"),
                             m("assistant", "The capital of France is Paris.")],
    "torchrl_round_trip_2": [m("system", "You are a coding assistant."),
                             m("user", "Write a Python function to add two numbers."),
                             m("assistant", "def add(a, b):\n    return a + b"),
                             m("user", "What about subtraction?"),
                             m("assistant", "def subtract(a, b):\n    return a - b")],
}
BATCHES = {
    "batch_equal": [[m("user", "a"), m("assistant", "b")], [m("user", "c"), m("assistant", "d")]],
    "batch_ragged": [[m("user", "a")], SYS_UA, [m("user", U), m("assistant", "x"), m("user", "y")]],
    "batch_tools": [[m("user", "q"), m("assistant", "", tool_calls=[CALL])], [m("tool", "r")]],
}
OPTION_SETS = {
    "gen": {"add_generation_prompt": True},
    "nogen": {"add_generation_prompt": False},
    "continue": {"add_generation_prompt": False, "continue_final_message": True},
}
PER_TEMPLATE_OPTIONS = ("gen", "nogen", "continue")
OPTION_SETS.update({
    "tokens": {"add_generation_prompt": True, "bos_token": "<BOS>", "eos_token": "<EOS>"},
    "tools": {"add_generation_prompt": True, "tools": TOOLS},
    "tools_nogen": {"add_generation_prompt": False, "tools": TOOLS},
})
ALL_CHATS = {**CHATS, **BATCHES, "no_messages": []}
ONLY_GEN = {"long", "torchrl_round_trip_0", "torchrl_round_trip_2"}


def render_case(cid, template, name, oname):
    chats = ALL_CHATS[name]
    options = OPTION_SETS[oname]
    case = {"id": cid, "template": template, "chats": name, "options": oname}
    try:
        texts, masks = render(template, chats, options)
        case["result"] = texts
        if masks is not None:
            case["masks"] = masks
    except Exception as e:  # noqa: BLE001
        case["error"] = error_of(e)
        crash, means = crash_of(case["error"], chats)
        if crash:
            case["crash"] = crash
            case["means"] = name + "/means"
            ALL_CHATS[case["means"]] = means
            case["instead"], _ = render(template, means, options)
    return case


def render_cases():
    out = []
    for template in TEMPLATES:
        for name, chats in list(CHATS.items()) + list(BATCHES.items()):
            for oname in PER_TEMPLATE_OPTIONS:
                if name in ONLY_GEN and oname != "gen":
                    continue
                out.append(render_case(f"{template}/{name}/{oname}", template, name, oname))
        # The tokenizer's own special tokens.
        out.append(render_case(f"{template}/system_user_assistant/tokens", template,
                               "system_user_assistant", "tokens"))
        out.append(render_case(f"{template}/tools", template, "tool_calls", "tools"))
        out.append(render_case(f"{template}/tools_system", template, "system_user_assistant",
                               "tools_nogen"))
    # The template picked from the tokenizer's name.
    for model in ["Qwen/Qwen2.5-0.5B", "microsoft/DialoGPT-medium", "tiiuae/falcon-7b",
                  "deepseek-ai/deepseek-coder-6.7b-base", "meta-llama/Llama-4-Scout",
                  "Qwen/qwen-llama-merge", "gpt2", ""]:
        OPTION_SETS["name:" + model] = {"add_generation_prompt": True, "tokenizer_name": model,
                                        "bos_token": "<BOS>", "eos_token": "<EOS>"}
        out.append(render_case(f"detect/{model}", None, "system_user_assistant", "name:" + model))
    # from_chats of an empty list.
    out.append(render_case("chatml_format/no_messages/gen", "chatml_format", "no_messages", "gen"))
    return out


def message_json(h):
    out = []
    for i in range(h.batch_size[0]):
        x = h[i]
        calls = x.tool_calls
        resp = x.tool_responses
        one = {"role": x.role, "content": x.content, "is_complete": bool(x.is_complete)}
        if calls is not None:
            one["tool_calls"] = [dict(c) for c in calls]
        if resp is not None:
            one["tool_responses"] = list(resp)
        out.append(one)
    return out


TORCHRL_QWEN_TESTS = [  # test/llm/test_data.py, TEST_CASES
    "<|im_start|>system\nI am a helpful assistant.<|im_end|>\n<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\nThe capital of France is Paris.<|im_end|>",
    "<|im_start|>system\nI am a helpful assistant.<|im_end|>\n<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\nThe capital of France is",
    "<|im_start|>system\nI am a helpful assistant.<|im_end|>\n<|im_start|>user\nTell me about Python.<|im_end|>\n<|im_start|>assistant\nPython is a programming language.<|endoftext|>\n<|im_start|>user\nCan you elaborate?<|im_end|>\n<|im_start|>assistant\nPython is known for its simplicity",
    "<|im_start|>assistant\nLet me help you with that",
    "<|im_start|>system\n<|im_end|>\n<|im_start|>user\n<|im_end|>",
    "<|im_start|>system\nI am an assistant that can use tools.<|im_end|>\n<|im_start|>assistant\nLet me help you with that.\n<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"2+2\"}}\n</tool_call>\n<|im_end|>\n<|im_start|>tool\n4<|im_end|>\n<|im_start|>assistant\nThe result is",
]
TORCHRL_LLAMA_TESTS = [  # test/llm/test_data.py, LLAMA_TEST_CASES
    "<|begin_of_text|><|header_start|>system<|header_end|>\n\nI am a helpful assistant.<|eot|><|header_start|>user<|header_end|>\n\nWhat is the capital of France?<|eot|><|header_start|>assistant<|header_end|>\n\nThe capital of France is Paris.<|eot|>",
    "<|begin_of_text|><|header_start|>system<|header_end|>\n\nI am a helpful assistant.<|eot|><|header_start|>user<|header_end|>\n\nWhat is the capital of France?<|eot|><|header_start|>assistant<|header_end|>\n\nThe capital of France is",
    "<|begin_of_text|><|header_start|>system<|header_end|>\n\nI am a helpful assistant.<|eot|><|header_start|>user<|header_end|>\n\nTell me about Python.<|eot|><|header_start|>assistant<|header_end|>\n\nPython is a programming language.<|eot|><|header_start|>user<|header_end|>\n\nCan you elaborate?<|eot|><|header_start|>assistant<|header_end|>\n\nPython is known for its simplicity",
    "<|header_start|>assistant<|header_end|>\n\nLet me help you with that",
    "<|begin_of_text|><|header_start|>system<|header_end|>\n\nI am an assistant that can use tools.<|eot|><|header_start|>user<|header_end|>\n\n<|eot|><|header_start|>assistant<|header_end|>\n\nLet me help you with that.\n<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"2+2\"}}\n</tool_call><|eot|><|header_start|>user<|header_end|>\n\n4<|eot|><|header_start|>assistant<|header_end|>\n\nThe result is",
]
PARSE_SOURCES = ["user", "system_only", "empty_contents", "system_user_assistant", "multi_turn",
                 "no_system", "unicode", "newlines", "whitespace_contents", "special_tokens",
                 "role_prefixes", "unknown_roles", "tool_roles", "tool_calls",
                 "tool_calls_no_content", "tool_calls_function", "tool_responses",
                 "torchrl_round_trip_0", "torchrl_round_trip_2", "incomplete_last",
                 "assistant_last_empty", "jinja_looking", "late_system"]


CUT_SOURCES = {"user", "system_user_assistant", "multi_turn", "unicode", "tool_calls",
               "tool_roles", "special_tokens", "torchrl_round_trip_2"}


def from_text_case(cid, template, text, source=None):
    """source: the name of the chat the text was rendered from."""
    case = {"id": cid, "template": template, "text": text}
    if source is not None:
        case["source"] = source
    try:
        case["result"] = message_json(History.from_text(text, chat_template_name=template))
    except Exception as e:  # noqa: BLE001
        case["error"] = error_of(e)
    return case


def from_text_cases():
    out = []
    for template in TEMPLATES:
        for name in PARSE_SOURCES:
            chats = CHATS[name]
            try:
                text, _ = render(template, chats, {"add_generation_prompt": False})
            except Exception:  # noqa: BLE001
                continue
            out.append(from_text_case(f"{template}/{name}", template, text[0], name))
            # A model's output cut short: the last message is incomplete.
            if name in CUT_SOURCES:
                out.append(from_text_case(f"{template}/{name}/cut", template, text[0][:-7]))
        # With the generation prompt: it is not a message.
        text, _ = render(template, SYS_UA, {"add_generation_prompt": True})
        out.append(from_text_case(f"{template}/system_user_assistant/gen", template, text[0],
                                  "system_user_assistant"))
    for i, text in enumerate(TORCHRL_QWEN_TESTS):
        out.append(from_text_case(f"qwen/torchrl_test_case_{i + 1}", "qwen", text))
        out.append(from_text_case(f"chatml_format/torchrl_test_case_{i + 1}", "chatml_format",
                                  text))
    for i, text in enumerate(TORCHRL_LLAMA_TESTS):
        out.append(from_text_case(f"llama/torchrl_test_case_{i + 1}", "llama", text))
    # A model's output stopping at <|endoftext|> (chatml / qwen) or <|im_end|> without newline.
    for template in ("chatml_format", "qwen"):
        out.append(from_text_case(f"{template}/endoftext_last", template,
                                  "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\na<|endoftext|>"))
        out.append(from_text_case(f"{template}/im_end_last", template,
                                  "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\na<|im_end|>"))
    return out


def main():
    table = {
        "generator": "tests/llm/torchrl/make_table.py",
        "torchrl_commit": os.environ.get("RL_COMMIT", "unknown"),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "jinja2": jinja2.__version__, "tokenizers": tokenizers.__version__,
                     "tensordict": getattr(tensordict, "__version__", "unknown"),
                     "tensordict_commit": getattr(getattr(tensordict, "_version", None),
                                                  "git_version", "unknown"),
                     "python": sys.version.split()[0]},
    }
    table["render"] = render_cases()
    table["from_text"] = from_text_cases()
    table["chats"] = ALL_CHATS
    table["options"] = OPTION_SETS
    json.dump(table, sys.stdout, ensure_ascii=False, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
