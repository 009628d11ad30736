"""What a generated Python module defines, read by Python's own compiler and tokenizer.

Usage: python3 python_module_shape.py MODULE.py

Prints one JSON object: {"error": message} when Python refuses the file (compile()), else
{"imports": [...], "classes": [...], "comments": [...], "other": [...]}: the import statements,
each class (name, bases, keywords, decorators, docstring, fields with their annotation and
default, and any other statement of its body), every comment token, and every module-level
statement that is neither an import nor a class. A test compares it with the definitions a schema
means, so injected code shows up as an unexpected entry.
"""

import ast
import io
import json
import sys
import tokenize


def default_shape(node):
    """A field's default: {"value": v} for a literal, {"factory": v} for
    _field(default_factory=lambda: v), {"tensor": v} for _torch.tensor(v) (the module's aliases of
    dataclasses.field and torch), else {"code": text}."""
    if node is None:
        return None
    if isinstance(node, ast.Call) and ast.unparse(node.func) == "_field" and not node.args:
        keywords = {k.arg: k.value for k in node.keywords}
        factory = keywords.get("default_factory")
        if len(keywords) == 1 and isinstance(factory, ast.Lambda):
            inner = factory.body
            if isinstance(inner, ast.Call) and ast.unparse(inner.func) == "_torch.tensor":
                return {"factory": {"tensor": ast.literal_eval(inner.args[0])}}
            return {"factory": ast.literal_eval(inner)}
    try:
        return {"value": ast.literal_eval(node)}
    except ValueError:
        return {"code": ast.unparse(node)}


def class_shape(node):
    body = list(node.body)
    doc = None
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        doc = body.pop(0).value.value
    fields, other = [], []
    for statement in body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) \
                and statement.simple:
            fields.append({"name": statement.target.id,
                           "annotation": ast.unparse(statement.annotation),
                           "default": default_shape(statement.value)})
        elif isinstance(statement, ast.Pass) and len(body) == 1:
            pass
        else:
            other.append(ast.unparse(statement))
    return {"name": node.name,
            "bases": [ast.unparse(b) for b in node.bases],
            "keywords": {k.arg: ast.unparse(k.value) for k in node.keywords},
            "decorators": [ast.unparse(d) for d in node.decorator_list],
            "doc": doc, "fields": fields, "other": other}


def module_shape(path):
    with open(path, "rb") as f:
        source = f.read()
    try:
        compile(source, path, "exec", dont_inherit=True)
        tree = ast.parse(source, path)
    except (SyntaxError, ValueError) as e:
        return {"error": str(e)}
    shape = {"imports": [], "classes": [], "comments": [], "other": []}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            shape["imports"].append(ast.unparse(node))
        elif isinstance(node, ast.ClassDef):
            shape["classes"].append(class_shape(node))
        else:
            shape["other"].append(ast.unparse(node))
    for token in tokenize.tokenize(io.BytesIO(source).readline):
        if token.type == tokenize.COMMENT:
            shape["comments"].append(token.string)
    return shape


if __name__ == "__main__":
    json.dump(module_shape(sys.argv[1]), sys.stdout)
