"""The type stubs (`_subla.pyi`) describe the extension module: every
public name of one is in the other, and every method of a class."""

import ast
from pathlib import Path

import subla
from subla import _subla

STUB = Path(subla.__file__).with_name("_subla.pyi")


def stub_names():
    tree = ast.parse(STUB.read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        if isinstance(node, ast.ClassDef):
            members[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
    return top, members


def test_the_stubs_name_the_module():
    top, members = stub_names()
    public = {n for n in dir(_subla) if not n.startswith("_")} | {"__version__"}
    aliases = {"ArrayLike", "FloatArray", "Channel", "Csr", "StrPath"}
    assert public == top - aliases
    for cls, names in members.items():
        have = {n for n in vars(getattr(_subla, cls)) if not n.startswith("_")}
        assert have - {"kind"} <= names, (cls, sorted(have - names))
        assert names - {"__init__"} <= have | {"kind"}, (cls, sorted(names - have))
