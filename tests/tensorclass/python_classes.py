# Run by test_python_classes.cpp with Python tensordict (TC_PYTHON_PEER) and the generated Python
# module of one golden schema on PYTHONPATH (argv[2]: "nested", "inherit", "recursive",
# "tensor_only", "defaults", or "recursive_typed" with the TypedTensorDict module; each declares
# module `golden`): loads what C++ wrote as the generated classes, checks the values, writes the
# same objects from Python, and lists the state_dict keys.
import json
import sys

try:  # ../shared/python-peer's shims for torch 1.13, before tensordict; torch 2.x needs none
    import td_compat  # noqa: F401
except ImportError:
    pass
import torch
from tensordict import TensorDict

out, case = sys.argv[1], sys.argv[2]

if case == "nested":
    from golden import Inner, Outer

    outer = TensorDict.load_memmap(out + "/cpp_outer")
    assert type(outer) is Outer, type(outer)
    assert type(outer.inner) is Inner, type(outer.inner)
    assert torch.equal(outer.inner.x, torch.arange(2.0)), outer.inner.x
    assert torch.equal(outer.y, torch.ones(2)), outer.y
    assert outer.maybe is None, outer.maybe
    Outer(inner=Inner(x=torch.arange(2.0), batch_size=[2]), y=torch.ones(2),
          batch_size=[2]).memmap(out + "/py_outer")

    from golden import Holder

    holder = TensorDict.load_memmap(out + "/cpp_holder")
    assert type(holder) is Holder and type(holder.entries) is TensorDict, type(holder.entries)
    assert torch.equal(holder.entries["a"], torch.arange(4.0).reshape(2, 2)), holder.entries
    assert holder.spare is None, holder.spare
    Holder(entries=TensorDict(b=torch.ones(2, 3), batch_size=[2]), batch_size=[2]).memmap(
        out + "/py_holder")
    with open(out + "/py_state_dict.json", "w") as f:
        json.dump(sorted(outer.state_dict().keys()), f)

    # Instances stored in a plain TensorDict and in a TensorDict field keep their classes.
    tree = TensorDict.load_memmap(out + "/cpp_tree")
    assert type(tree) is TensorDict, type(tree)
    assert type(tree["item"]) is Outer and type(tree["item"].inner) is Inner, type(tree["item"])
    assert torch.equal(tree["item"].inner.x, torch.arange(2.0)), tree["item"]
    assert type(tree["sub", "leaf"]) is Inner, type(tree["sub", "leaf"])
    assert type(tree["holder"]) is Holder, type(tree["holder"])
    assert type(tree["holder"].entries["pick"]) is Inner, type(tree["holder"].entries["pick"])
    TensorDict(
        item=Outer(inner=Inner(x=torch.ones(2), batch_size=[2]), y=torch.zeros(2), batch_size=[2]),
        sub=TensorDict(leaf=Inner(x=torch.full((2,), 3.0), batch_size=[2]), batch_size=[2]),
        batch_size=[2]).memmap(out + "/py_tree")
elif case == "inherit":
    from golden import Charged, Particle, Point

    charged = TensorDict.load_memmap(out + "/cpp_charged")
    assert type(charged) is Charged, type(charged)
    assert isinstance(charged, Particle) and isinstance(charged, Point)
    assert torch.equal(charged.position, torch.arange(4.0).reshape(2, 2)), charged.position
    assert (charged.label, charged._serial, charged.mass) == ("c", 9, 0.5), charged
    assert torch.equal(charged.data, torch.full((2,), 3.0)), charged.data
    Charged(position=torch.ones(2, 2), velocity=torch.zeros(2, 2), label="py", _serial=11,
            mass=4.0, batch_size=[2]).memmap(out + "/py_charged")
elif case == "recursive":
    from golden import Chain, Node

    # A list of three nodes, each node's `next` the class itself, the last one None.
    chain = TensorDict.load_memmap(out + "/cpp_chain")
    assert type(chain) is Chain and chain.length == 3, chain
    node, values = chain.head, []
    while node is not None:
        assert type(node) is Node, type(node)
        values.append(node.value.tolist())
        node = node.next
    assert values == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]], values
    tail = Node(value=torch.full((2,), 7.0), batch_size=[2])
    Chain(head=Node(value=torch.full((2,), 6.0), next=tail, batch_size=[2]), length=2,
          batch_size=[2]).memmap(out + "/py_chain")

    # Classes that hold each other, Forest declared (and annotated) before Tree.
    from golden import Forest, Shape, Square, Tree

    root = TensorDict.load_memmap(out + "/cpp_tree_of_forests")
    assert type(root) is Tree and type(root.children) is Forest, type(root.children)
    assert type(root.children.first) is Tree, type(root.children.first)
    assert torch.equal(root.children.rest.first.value, torch.full((2,), 2.0)), root
    assert root.children.rest.rest is None and root.children.first.children is None, root
    Tree(value=torch.zeros(2), children=Forest(first=Tree(value=torch.full((2,), 5.0),
                                                           batch_size=[2]), batch_size=[2]),
         batch_size=[2]).memmap(out + "/py_tree_of_forests")
    shape = TensorDict.load_memmap(out + "/cpp_shape")
    assert type(shape) is Shape and type(shape.inner) is Square, type(shape.inner)
    assert torch.equal(shape.inner.side, torch.full((2,), 3.0)), shape.inner
    Shape(area=torch.ones(2), inner=Square(area=torch.ones(2), side=torch.full((2,), 4.0),
                                           batch_size=[2]), batch_size=[2]).memmap(
        out + "/py_shape")
elif case == "recursive_typed":
    # TypedTensorDict classes: a NotRequired field naming a class defined further down stays
    # optional (its annotation is resolved before that class exists).
    from golden import Forest, Shape, Square, Tree

    square = Square(area=torch.ones(2), side=torch.full((2,), 2.0), batch_size=[2])
    shape = Shape(area=torch.ones(2), inner=square, batch_size=[2])
    assert type(shape.inner) is Square and isinstance(square, Shape), type(shape.inner)
    forest = Forest(first=Tree(value=torch.zeros(2), batch_size=[2]), batch_size=[2])
    tree = Tree(value=torch.ones(2), children=forest, batch_size=[2])
    assert type(tree.children.first) is Tree, type(tree.children.first)
    optional_fields = ((Shape, "inner"), (Square, "inner"), (Forest, "rest"), (Tree, "children"))
    for cls, optional in optional_fields:
        assert optional not in cls.__required_keys__, (cls, cls.__required_keys__)

    # Pytree nodes under their dotted names, with JSON contexts: the spec serializes, the tree
    # comes back, and torch.export takes and returns the classes.
    from torch.utils import _pytree as pytree

    leaves, spec = pytree.tree_flatten(tree)
    spec = pytree.treespec_loads(pytree.treespec_dumps(spec))
    assert "golden.Forest" in pytree.treespec_dumps(spec) and len(leaves) == 2, spec
    back = pytree.tree_unflatten(leaves, spec)
    assert type(back.children.first) is Tree and torch.equal(back.value, tree.value), back

    class Double(torch.nn.Module):
        def forward(self, tree):
            return Tree(value=tree.value * 2, children=tree.children, batch_size=tree.batch_size)

    exported = torch.export.export(Double(), (tree,), strict=False)
    doubled = exported.module()(tree)
    assert type(doubled) is Tree and torch.equal(doubled.value, torch.full((2,), 2.0)), doubled
    assert type(doubled.children.first) is Tree, doubled
elif case == "tensor_only":
    from golden import Tagged
    from tensordict import MetaData, NonTensorData

    # NonTensorData and MetaData fields: C++'s MetaData loads as MetaData, and Python's typed
    # MetaData[str] loads in C++ as MetaData.
    tagged = TensorDict.load_memmap(out + "/cpp_tagged")
    assert type(tagged) is Tagged, type(tagged)
    stored = tagged._tensordict
    for name, kind, value in (("label", NonTensorData, "a"), ("source", MetaData, "s"),
                              ("step", MetaData, 3)):
        entry = stored.get(name)
        assert type(entry) is kind and entry.data == value, (name, type(entry), entry)
    Tagged(x=torch.ones(2), label=NonTensorData("py"), source=MetaData[str]("from-python"),
           step=MetaData(5), batch_size=[2]).memmap(out + "/py_tagged")
else:
    from golden import Defaults

    defaults = TensorDict.load_memmap(out + "/cpp_defaults")
    assert type(defaults) is Defaults, type(defaults)
    assert (defaults.s, defaults.i, defaults.f, defaults.b) == ('a "quoted" \\ text', 3, 2.0, False)
    assert defaults.l == ["a", "b"] and defaults.a == {"k": [1, 2]} and defaults.o is None
    Defaults().memmap(out + "/py_defaults")

    # Tensor defaults: C++ made the same tensors (values and dtypes) as the Python class makes.
    from golden import TensorDefaults

    made, expected = TensorDict.load_memmap(out + "/cpp_tensor_defaults"), TensorDefaults()
    assert type(made) is TensorDefaults, type(made)
    for name in ("grid", "weights", "sevens", "halves", "table", "scale", "mask"):
        ours, theirs = getattr(made, name), getattr(expected, name)
        assert ours.dtype == theirs.dtype and torch.equal(ours, theirs), (name, ours, theirs)
    assert TensorDefaults().grid is not expected.grid  # a tensor per instance
    expected.memmap(out + "/py_tensor_defaults")
