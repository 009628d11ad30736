#!/usr/bin/env python3
"""The C++ snippets of the project's Markdown files, as programs the build compiles and links.

Every fenced block whose info string starts with cpp, c++, cxx or cc is a snippet and is
compiled, unless an HTML comment directly above its fence says otherwise. The markers (the
comment must end on the line right before the fence; several may be stacked):

  <!-- snippet: continues -->         same scope as the previous snippet of the file: its
                                      variables, `using`s and includes carry over
  <!-- snippet: context               hidden C++ lines compiled before the snippet, in its
  int rank = 0;                       scope (declarations the prose assumes); `#include`s
  -->                                 in them are hoisted like the snippet's own
  <!-- snippet: file=NAME -->         the block is the file NAME (a schema, a header, a script):
                                      written out for the other snippets of the file; a C++
                                      header is compiled on its own, a NAME.cpp holding main()
                                      is the program `<page target>_program_NAME`, which tests
                                      can run (docs/store.md's actor)
  <!-- snippet: top-level -->         declarations: kept at namespace scope, its own TU
  <!-- snippet: requires=A,B -->      compiled only when the build has features A and B
                                      (distributed, sentencepiece, tcgen); skipped otherwise
  <!-- snippet: not compiled (why) -->  pseudo-code; the reason is required

Tokens combine in one comment (`<!-- snippet: continues requires=distributed -->`); `context`
comes last on its line and its code follows on the next lines, up to a line holding `-->`.

A plain snippet is a function body: its `#include` lines are hoisted to the top of the
translation unit, the rest goes into `void run()` in a namespace of its own. A snippet holding
`int main(` is a whole program, kept as it is. Each chain (a snippet and the ones that continue
it) is its own translation unit, so a missing include is seen. `#line` directives point the
compiler's messages at the Markdown file.

  doc_snippets.py sources MD --source-dir DIR --out DIR [--feature F]...
      writes one translation unit per chain and per C++ file= header, DIR/main.cpp (lists the
      page's snippets; with --run, runs them in order, a failure is exit status 1), the file=
      blocks under DIR/files/, and DIR/sources.txt, what the build compiles: `page FILE` lines
      (linked into the page's program) and `program FILE` lines (a snippet holding main(), a
      program of its own). CMake runs it when it configures (tests/docs/CMakeLists.txt).
  doc_snippets.py same-model MD --source-dir DIR --out DIR --tcgen EXE --pair A.yaml B.h ...
                             --compile-commands JSON --anchor SRC
      `tcgen --dump-model` gives the same model for each pair of file= blocks (written by
      `sources` under DIR/files/), the header parsed with the anchor's include paths.
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys

CPP_LANGS = {"cpp", "c++", "cxx", "cc"}
FEATURES = {"distributed", "tcgen", "sentencepiece", "store"}  # what requires= may name
FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)(.*)$")
INCLUDE = re.compile(r"^\s*#\s*include\b")
MAIN = re.compile(r"\bint\s+main\s*\(")
COMMENT_START = re.compile(r"^\s*<!--\s*snippet:(.*)$")
NOT_COMPILED = re.compile(r"not compiled\s*\((.+)\)\s*$")
FILE_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


class DocError(Exception):
    pass


class Block:
    def __init__(self, lang, line, lines):
        self.lang = lang        # first word of the info string, lower case
        self.line = line        # 1-based line of the first content line
        self.lines = lines      # content lines, fence indentation removed
        self.continues = False
        self.top_level = False
        self.file = None
        self.requires = []
        self.ignored = None     # the reason, when not compiled
        self.context = []       # (line, text) hidden lines
        self.marker_line = None

    @property
    def is_cpp(self):
        return self.lang in CPP_LANGS

    @property
    def is_program(self):
        return any(MAIN.search(text) for text in self.lines)


def parse_tokens(block, text, line, path):
    text = text.strip()
    m = NOT_COMPILED.search(text)
    if m:
        if not m.group(1).strip():
            raise DocError(f"{path}:{line}: 'not compiled' needs a reason in parentheses")
        block.ignored = m.group(1).strip()
        text = text[: m.start()].strip()
    elif "not compiled" in text:
        raise DocError(f"{path}:{line}: write 'not compiled (the reason)'")
    for token in text.split():
        if token == "continues":
            block.continues = True
        elif token == "top-level":
            block.top_level = True
        elif token.startswith("file="):
            name = token[len("file="):]
            if not FILE_NAME.match(name):
                raise DocError(f"{path}:{line}: bad file name '{name}' (a plain file name)")
            block.file = name
        elif token.startswith("requires="):
            features = [f for f in token[len("requires="):].split(",") if f]
            unknown = sorted(set(features) - FEATURES)
            if unknown or not features:
                raise DocError(f"{path}:{line}: requires= names {', '.join(unknown) or 'nothing'}"
                               f" (known: {', '.join(sorted(FEATURES))})")
            block.requires += features
        else:
            raise DocError(f"{path}:{line}: unknown snippet marker '{token}' (known: continues, "
                           "context, file=NAME, top-level, requires=A,B, not compiled (why))")


def parse(path, display):
    """The fenced blocks of a Markdown file, with their markers."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = []
    pending = []   # (line, tokens text, context lines) of the markers above the next fence
    i = 0
    while i < len(lines):
        text = lines[i]
        m = FENCE.match(text)
        if m:
            indent, fence, lang = len(m.group(1)), m.group(2), m.group(3).lower()
            start = i + 1
            j = start
            close = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) +
                               r",}\s*$")
            while j < len(lines) and not close.match(lines[j]):
                j += 1
            if j == len(lines):
                raise DocError(f"{display}:{i + 1}: fence never closed")
            body = [ln[indent:] if ln[:indent].strip() == "" else ln.lstrip()
                    for ln in lines[start:j]]
            block = Block(lang, start + 1, body)
            for mline, tokens, context in pending:
                parse_tokens(block, tokens, mline, display)
                block.context += context
                block.marker_line = block.marker_line or mline
            pending = []
            if block.marker_line and not block.is_cpp and block.file is None:
                raise DocError(f"{display}:{block.marker_line}: snippet markers on a "
                               f"'{lang or 'plain'}' block only take file=NAME")
            blocks.append(block)
            i = j + 1
            continue
        m = COMMENT_START.match(text)
        if m:
            rest = m.group(1)
            if "-->" in rest:
                pending.append((i + 1, rest[: rest.index("-->")], []))
                if rest[rest.index("-->") + 3:].strip():
                    raise DocError(f"{display}:{i + 1}: text after a snippet marker")
                i += 1
            else:
                tokens = rest.split()
                if not tokens or tokens[-1] != "context":
                    raise DocError(f"{display}:{i + 1}: a snippet marker spanning lines must "
                                   "end its first line with 'context'")
                j = i + 1
                while j < len(lines) and lines[j].strip() != "-->":
                    j += 1
                if j == len(lines):
                    raise DocError(f"{display}:{i + 1}: snippet context never closed ('-->' "
                                   "alone on a line)")
                context = [(k + 1, lines[k]) for k in range(i + 1, j)]
                pending.append((i + 1, " ".join(tokens[:-1]), context))
                i = j + 1
            if i >= len(lines) or not (FENCE.match(lines[i]) or COMMENT_START.match(lines[i])):
                raise DocError(f"{display}:{pending[-1][0]}: a snippet marker must be directly "
                               "above a fence")
            continue
        if text.lstrip().startswith("<!--") and "snippet" in text:
            raise DocError(f"{display}:{i + 1}: write snippet markers as '<!-- snippet: ... -->'")
        i += 1
    return blocks


class Chain:
    """Snippets compiled in one scope, as one translation unit."""

    def __init__(self, first):
        self.blocks = [first]
        self.kind = ("program" if first.is_program else
                     "top-level" if first.top_level else "body")

    @property
    def line(self):
        return self.blocks[0].line

    @property
    def requires(self):
        return sorted({f for b in self.blocks for f in b.requires})


def chains_of(blocks, display):
    chains, files, ignored = [], [], []
    last = None   # the chain a `continues` snippet joins
    for b in blocks:
        if b.file is not None:
            if b.continues or b.context or b.top_level:
                raise DocError(f"{display}:{b.line}: file= takes no other marker than requires=")
            files.append(b)  # a file shown between two snippets does not end their chain
            continue
        if not b.is_cpp:
            continue
        if b.ignored is not None:
            ignored.append(b)
            last = None
            continue
        if b.continues:
            if last is None or last.kind != "body":
                raise DocError(f"{display}:{b.line}: 'continues' needs a compiled snippet "
                               "(a function body) right before it in the file")
            if b.is_program or b.top_level:
                raise DocError(f"{display}:{b.line}: a program or top-level snippet cannot "
                               "continue another")
            last.blocks.append(b)
            continue
        last = Chain(b)
        chains.append(last)
    return chains, files, ignored


def line_directive(line, display):
    return f'#line {line} "{display}"'


def chain_parts(chain, display):
    """(hoisted include lines, code lines) of a chain, with #line directives."""
    includes, code = [], []
    for b in chain.blocks:
        if b.context:
            code.append(line_directive(b.context[0][0], display))
            for number, text in b.context:
                if INCLUDE.match(text):
                    includes += [line_directive(number, display), text]
                    code.append("")
                else:
                    code.append(text)
        code.append(line_directive(b.line, display))
        for offset, text in enumerate(b.lines):
            if chain.kind == "body" and INCLUDE.match(text):
                includes += [line_directive(b.line + offset, display), text]
                code.append("")
            else:
                code.append(text)
    return includes, code


def namespace_of(chain):
    return f"doc_snippet_{chain.line}"


def translation_unit(chain, display):
    includes, code = chain_parts(chain, display)
    out = [f"// Generated from {display} by tests/docs/doc_snippets.py: do not edit."]
    if chain.kind != "body":
        return "\n".join(out + code) + "\n"
    out += includes
    out.append(f"namespace {namespace_of(chain)} {{")
    out.append("void run() {")
    out += code
    out.append("}")
    out.append("}  // namespace")
    return "\n".join(out) + "\n"


def page_main(chains, display):
    """main() of a page's program: lists the page's snippets, runs them in order with --run.
    Either way it names every snippet's function, so the link resolves all of them."""
    out = [f"// Generated from {display} by tests/docs/doc_snippets.py: do not edit.",
           "#include <cstdio>", "#include <cstring>", "#include <exception>"]
    for c in chains:
        out.append(f"namespace {namespace_of(c)} {{ void run(); }}")
    out.append("int main(int argc, char** argv) {")
    out.append('  const bool run = argc > 1 && std::strcmp(argv[1], "--run") == 0;')
    out.append("  int failed = 0;")
    for c in chains:
        where = f"{display}:{c.line}"
        out.append(f'  std::printf("%s the snippet at {where}\\n", run ? "\\n[docs] running" '
                   ': "linked:");')
        out.append("  std::fflush(stdout);")
        out.append("  try {")
        out.append(f"    if (run) {namespace_of(c)}::run();")
        out.append("  } catch (const std::exception& e) {")
        out.append(f'    std::printf("FAILED: the snippet at {where} threw: %s\\n", e.what());')
        out.append("    failed = 1;")
        out.append("  }")
    out.append("  return failed;")
    out.append("}")
    return "\n".join(out) + "\n"


def write_if_changed(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def write_files(files, out_dir, features):
    for b in files:
        if set(b.requires) - features:
            continue
        write_if_changed(os.path.join(out_dir, "files", b.file), "\n".join(b.lines) + "\n")


def compile_command(db_path, anchor):
    """The anchor's compile command, less its output, input and precompiled header."""
    with open(db_path, encoding="utf-8") as f:
        db = json.load(f)
    anchor = os.path.realpath(anchor)
    for entry in db:
        file = os.path.join(entry.get("directory", ""), entry["file"])
        if os.path.realpath(file) != anchor:
            continue
        args = entry.get("arguments") or shlex.split(entry["command"])
        kept, skip = [], False
        for i, a in enumerate(args):
            if skip:
                skip = False
                continue
            if a in ("-o", "-MF", "-MT", "-MQ", "-include") or (a == "-x" and i > 0):
                skip = True
                continue
            if a in ("-c", "-MD", "-MMD", "-Winvalid-pch") or os.path.realpath(a) == anchor:
                continue
            kept.append(a)
        return kept, entry.get("directory", ".")
    raise DocError(f"{anchor} is not in {db_path} (build the docs_snippet_flags target)")


def sources(args, blocks, display):
    """Writes the page's translation units and DIR/sources.txt, the list the build compiles:
    `page FILE` lines (one unit per chain and per C++ file= header, and main.cpp: linked into
    one program) and `program FILE` lines (a snippet holding main(): a program of its own)."""
    features = set(args.feature)
    chains, files, ignored = chains_of(blocks, display)
    out_dir = args.out
    os.makedirs(out_dir, exist_ok=True)
    write_files(files, out_dir, features)
    listed, bodies = [], []
    for b in ignored:
        print(f"not compiled: {display}:{b.line} ({b.ignored})")
    for c in chains:
        missing = set(c.requires) - features
        if missing:
            print(f"skipped: {display}:{c.line} (this build has no {', '.join(sorted(missing))})")
            continue
        name = f"{'program' if c.kind == 'program' else 'snippet'}_{c.line}.cpp"
        write_if_changed(os.path.join(out_dir, name), translation_unit(c, display))
        listed.append(f"{'program' if c.kind == 'program' else 'page'} {name}")
        if c.kind == "body":
            bodies.append(c)
    for b in files:
        if not b.is_cpp:
            continue
        if set(b.requires) - features:
            print(f"skipped: {display}:{b.line} file {b.file}")
            continue
        if b.file.endswith(".cpp") and b.is_program:
            name = f"program_{b.file}"
            write_if_changed(os.path.join(out_dir, name),
                             f'#line {b.line} "{display}"\n' + "\n".join(b.lines) + "\n")
            listed.append(f"program {name}")
            continue
        if not b.file.endswith((".h", ".hh", ".hpp", ".hxx")):
            continue
        name = f"header_{b.file}.cpp"
        write_if_changed(os.path.join(out_dir, name), f'#include "files/{b.file}"\n')
        listed.append(f"page {name}")
    if any(line.startswith("page ") for line in listed):  # else the page has no program
        write_if_changed(os.path.join(out_dir, "main.cpp"), page_main(bodies, display))
        listed.append("page main.cpp")
    write_if_changed(os.path.join(out_dir, "sources.txt"), "".join(f"{x}\n" for x in listed))
    return 0


def dump_model(tcgen, schema, clang_args):
    result = subprocess.run([tcgen, "--dump-model", schema] + clang_args, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        raise DocError(f"tcgen --dump-model {schema} failed:\n{result.stdout}")
    # The model names its source files; the two forms differ there only.
    return re.sub(r"(?m)^schema \S+", "schema", result.stdout)


def same_model(args, display):
    """The C++ form of a schema (file= headers) gives tcgen the same model as the YAML form."""
    command, _ = compile_command(args.compile_commands, args.anchor)
    clang_args = []
    for i, a in enumerate(command):
        if a in ("-isystem", "-I") and i + 1 < len(command):
            clang_args.append(f"--clang-arg={a}{command[i + 1]}")
        elif a.startswith(("-I", "-D", "-std=")) and len(a) > 2:
            clang_args.append(f"--clang-arg={a}")
    ok = True
    for yaml_file, header in zip(args.pair[::2], args.pair[1::2]):
        files = os.path.join(args.out, "files")
        a = dump_model(args.tcgen, os.path.join(files, yaml_file), [])
        b = dump_model(args.tcgen, os.path.join(files, header), clang_args)
        if a != b:
            print(f"FAILED: {display}: {yaml_file} and {header} give different models:\n"
                  f"--- {yaml_file}\n{a}--- {header}\n{b}")
            ok = False
        else:
            print(f"ok: {display}: {yaml_file} and {header} give the same model")
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["sources", "same-model"])
    parser.add_argument("markdown")
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--compile-commands")
    parser.add_argument("--anchor")
    parser.add_argument("--feature", action="append", default=[])
    parser.add_argument("--tcgen")
    parser.add_argument("--pair", nargs=2, action="extend", default=[])
    args = parser.parse_args()
    display = os.path.relpath(os.path.abspath(args.markdown), os.path.abspath(args.source_dir))
    try:
        blocks = parse(args.markdown, display)
        if args.mode == "sources":
            return sources(args, blocks, display)
        if not args.compile_commands or not args.anchor:
            raise DocError("same-model needs --compile-commands and --anchor")
        return same_model(args, display)
    except DocError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
