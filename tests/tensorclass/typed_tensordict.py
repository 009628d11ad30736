"""tensordict v0.14.0's TypedTensorDict tests (test/tensorclass/test_typedtensordict.py), run on
the classes `tcgen --lang python --python-base TypedTensorDict` writes from tests/goldens/
typed.yaml (module `golden`, on PYTHONPATH). Each check below is named after the upstream test it
ports. The upstream tests that declare classes in the test (a field shadowing a TensorDict member
without `shadow`, `data` without `shadow`, an unknown option) are schema errors here, checked by
tests/generator/test_python.cpp; the classes they derive (a frozen or a shadow child, an empty
class) are in the schema. No pytest: a check is a function, and the run prints what failed.

Usage: typed_tensordict.py  (exit status 0 when every check passes)
"""

import re
import sys
import tempfile
import traceback

import torch
from tensordict import TensorDict, TypedTensorDict, lazy_stack
from tensordict.base import TensorDictBase

from golden import (
    Empty,
    FrozenChild,
    FrozenClass,
    ObservedState,
    PredictorState,
    ShadowChild,
    ShadowClass,
    ShadowFrozenClass,
    SurvivalState,
)

CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


class raises:
    """`with raises(TypeError, "pattern"):` the block raises that type, its message matching."""

    def __init__(self, kind, pattern=None):
        self.kind, self.pattern = kind, pattern

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is None:
            raise AssertionError(f"{self.kind.__name__} not raised")
        if not issubclass(kind, self.kind):
            return False
        if self.pattern and not re.search(self.pattern, str(value)):
            raise AssertionError(f"{str(value)!r} does not match {self.pattern!r}")
        return True


def predictor(*batch, widths=(3, 4, 1), **extra):
    """A PredictorState of batch size `batch` whose leaves have the trailing sizes `widths`."""
    eta, x, beta = (torch.randn(*batch, w) if w else torch.randn(*batch) for w in widths)
    return PredictorState(eta=eta, X=x, beta=beta, batch_size=list(batch), **extra)


def observed(n=3, **extra):
    leaves = {k: torch.randn(n) for k in ("eta", "X", "beta", "y", "mu")}
    return ObservedState(**leaves, **extra, batch_size=[n])


def plain_td():
    return TensorDict(
        {"eta": torch.randn(5, 3), "X": torch.randn(5, 4), "beta": torch.randn(5, 1)},
        batch_size=[5],
    )


# ---- construction


@check
def test_basic_construction():
    state = predictor(5)
    for kind in (PredictorState, TypedTensorDict, TensorDictBase):
        assert isinstance(state, kind), kind
    assert state.batch_size == torch.Size([5])


@check
def test_missing_required_field():
    with raises(TypeError, "missing required field.*beta"):
        PredictorState(eta=torch.randn(5, 3), X=torch.randn(5, 4), batch_size=[5])


@check
def test_extra_field():
    with raises(TypeError, "unexpected field.*z"):
        predictor(5, z=torch.randn(5))


@check
def test_device():
    assert predictor(3, widths=(0, 0, 0), device="cpu").device == torch.device("cpu")


@check
def test_names():
    state = predictor(3, 2, widths=(0, 0, 0), names=["batch", "time"])
    assert state.names == ["batch", "time"]


@check
def test_multidim_batch():
    assert predictor(4, 6, widths=(1, 3, 1)).batch_size == torch.Size([4, 6])


# ---- field access


@check
def test_attribute_access():
    state = predictor(3, widths=(2, 4, 1))
    assert (state.eta.shape, state.X.shape, state.beta.shape) == ((3, 2), (3, 4), (3, 1))


@check
def test_string_key_access():
    state = predictor(3, widths=(2, 4, 1))
    assert (state["eta"].shape, state["X"].shape, state["beta"].shape) == ((3, 2), (3, 4), (3, 1))


@check
def test_attribute_set():
    state = predictor(3, widths=(2, 4, 1))
    state.eta = torch.ones(3, 2)
    assert bool((state.eta == 1).all())


@check
def test_string_key_set():
    state = predictor(3, widths=(2, 4, 1))
    state["eta"] = torch.ones(3, 2)
    assert bool((state["eta"] == 1).all())


@check
def test_attribute_error_undeclared():
    with raises(AttributeError):
        predictor(3, widths=(0, 0, 0)).nonexistent


@check
def test_keys():
    assert set(predictor(3, widths=(0, 0, 0)).keys()) == {"eta", "X", "beta"}


# ---- spreading


@check
def test_spread_to_dict():
    spread = dict(**predictor(3, widths=(0, 0, 0)))
    assert set(spread) == {"eta", "X", "beta"}
    assert all(isinstance(v, torch.Tensor) for v in spread.values())


@check
def test_spread_to_child():
    obs = ObservedState(**predictor(5), y=torch.randn(5, 3), mu=torch.randn(5, 3), batch_size=[5])
    assert isinstance(obs, ObservedState) and isinstance(obs, PredictorState)
    assert set(obs.keys()) == {"eta", "X", "beta", "y", "mu"}


@check
def test_pipeline_transition():
    state = predictor(5)
    y = state.eta + 0.1 * torch.randn_like(state.eta)
    obs = ObservedState(**state, y=y, mu=state.eta, batch_size=state.batch_size)
    assert obs.y.shape == state.eta.shape
    assert bool((obs.eta == state.eta).all())


# ---- inheritance


@check
def test_isinstance():
    obs = observed()
    for kind in (ObservedState, PredictorState, TypedTensorDict, TensorDictBase):
        assert isinstance(obs, kind), kind


@check
def test_field_accumulation():
    base = {"eta", "X", "beta"}
    assert PredictorState.__expected_keys__ == frozenset(base)
    assert ObservedState.__expected_keys__ == frozenset(base | {"y", "mu", "noise"})
    assert SurvivalState.__expected_keys__ == frozenset(
        base | {"y", "mu", "noise", "event_time", "indicator", "observed_time"}
    )


@check
def test_required_vs_optional():
    assert PredictorState.__required_keys__ == frozenset({"eta", "X", "beta"})
    assert PredictorState.__optional_keys__ == frozenset()
    assert ObservedState.__required_keys__ == frozenset({"eta", "X", "beta", "y", "mu"})
    assert ObservedState.__optional_keys__ == frozenset({"noise"})


@check
def test_three_level_inheritance():
    names = ("eta", "X", "beta", "y", "mu", "event_time", "indicator", "observed_time")
    surv = SurvivalState(**{k: torch.randn(3) for k in names}, batch_size=[3])
    for kind in (SurvivalState, ObservedState, PredictorState):
        assert isinstance(surv, kind), kind
    assert len(surv.keys()) == 8


# ---- NotRequired


@check
def test_optional_omitted():
    obs = observed()
    assert "noise" not in obs
    assert set(obs.keys()) == {"eta", "X", "beta", "y", "mu"}


@check
def test_optional_provided():
    obs = observed(noise=torch.randn(3))
    assert "noise" in obs and obs.noise.shape == (3,)


@check
def test_access_missing_optional():
    with raises(AttributeError, "declared but not set"):
        observed().noise


# ---- TensorDict operations


@check
def test_clone():
    state = predictor(5)
    copy = state.clone()
    assert set(copy.keys()) == set(state.keys()) and bool((copy["eta"] == state["eta"]).all())


@check
def test_slice():
    part = predictor(5)[0:3]
    assert part.batch_size == torch.Size([3]) and part["eta"].shape[0] == 3


@check
def test_index():
    row = predictor(5)[0]
    assert row.batch_size == torch.Size([]) and row["eta"].shape == (3,)


@check
def test_to_device():
    assert predictor(5).to("cpu").device == torch.device("cpu")


@check
def test_contiguous():
    state = predictor(5)
    assert set(state.contiguous().keys()) == set(state.keys())


@check
def test_stack():
    parts = [predictor(3, widths=(0, 0, 0)) for _ in range(4)]
    assert torch.stack(parts, dim=0).batch_size == torch.Size([4, 3])


@check
def test_cat():
    parts = [predictor(3, widths=(2, 2, 2)) for _ in range(4)]
    assert torch.cat(parts, dim=0).batch_size == torch.Size([12])


@check
def test_unbind():
    assert len(predictor(5).unbind(0)) == 5


@check
def test_apply():
    state = predictor(5)
    assert bool((state.apply(lambda t: t * 2)["eta"] == state["eta"] * 2).all())


@check
def test_update():
    state = predictor(5)
    state.update({"eta": torch.ones(5, 3)})
    assert bool((state["eta"] == 1).all())


@check
def test_to_dict():
    assert set(predictor(5).to_dict()) == {"eta", "X", "beta"}


@check
def test_select():
    assert set(predictor(5).select("eta", "X").keys()) == {"eta", "X"}


@check
def test_exclude():
    assert set(predictor(5).exclude("beta").keys()) == {"eta", "X"}


# ---- class options


@check
def test_shadow_allows_conflicting_names():
    s = ShadowClass(data=torch.randn(3, 2), clone=torch.randn(3, 4), batch_size=[3])
    assert s.data.shape == (3, 2) and s.clone.shape == (3, 4)


@check
def test_shadow_set_via_attr():
    s = ShadowClass(data=torch.randn(3, 2), clone=torch.randn(3, 4), batch_size=[3])
    s.data = torch.ones(3, 2)
    assert bool((s.data == 1).all())


@check
def test_frozen():
    assert FrozenClass(x=torch.randn(3), batch_size=[3]).is_locked


@check
def test_frozen_prevents_modification():
    frozen = FrozenClass(x=torch.randn(3), batch_size=[3])
    with raises(RuntimeError):
        frozen["x"] = torch.ones(3)


@check
def test_combined_options():
    both = ShadowFrozenClass(data=torch.randn(3, 2), batch_size=[3])
    assert both.data.shape == (3, 2) and both.is_locked


@check
def test_option_propagation():
    assert FrozenChild._frozen is True
    assert FrozenChild(x=torch.randn(3), y=torch.randn(3), batch_size=[3]).is_locked


@check
def test_option_propagation_shadow():
    assert ShadowChild._shadow is True
    child = ShadowChild(
        data=torch.randn(3), clone=torch.randn(3), extra=torch.randn(3), batch_size=[3]
    )
    assert child.data.shape == (3,)


# ---- edge cases


@check
def test_empty_subclass():
    empty = Empty(batch_size=[3])
    assert empty.batch_size == torch.Size([3]) and len(empty.keys()) == 0


@check
def test_batch_iter():
    assert len(list(predictor(4, widths=(3, 3, 3)))) == 4


@check
def test_contains():
    state = predictor(3, widths=(0, 0, 0))
    assert "eta" in state and "nonexistent" not in state


@check
def test_len():
    assert len(predictor(4, widths=(0, 0, 0))) == 4


@check
def test_repr():
    text = repr(predictor(3, widths=(0, 0, 0)))
    assert "PredictorState" in text or "TensorDict" in text


# ---- from_tensordict


@check
def test_from_tensordict_basic():
    td = plain_td()
    state = PredictorState.from_tensordict(td)
    assert isinstance(state, PredictorState) and isinstance(state, TensorDictBase)
    assert state.batch_size == torch.Size([5]) and state.eta.shape == (5, 3)
    assert state._source is td


@check
def test_from_tensordict_missing_key():
    with raises(TypeError, "missing required field"):
        PredictorState.from_tensordict(TensorDict({"eta": torch.randn(5, 3)}, batch_size=[5]))


@check
def test_from_tensordict_extra_keys():
    td = plain_td()
    td["extra"] = torch.randn(5)
    state = PredictorState.from_tensordict(td)
    assert isinstance(state, PredictorState) and "extra" in state.keys()


@check
def test_from_tensordict_lazy_stack():
    rows = [
        TensorDict({"eta": torch.randn(3), "X": torch.randn(4), "beta": torch.randn(1)}, [])
        for _ in range(2)
    ]
    state = PredictorState.from_tensordict(lazy_stack(rows))
    assert isinstance(state, PredictorState)
    assert state.batch_size == torch.Size([2]) and state.eta.shape == (2, 3)


@check
def test_from_tensordict_memmap():
    with tempfile.TemporaryDirectory() as where:
        state = PredictorState.from_tensordict(plain_td().memmap_(where))
        assert isinstance(state, PredictorState) and state._is_memmap
        assert state.eta.shape == (5, 3)


@check
def test_from_tensordict_live_link():
    td = plain_td()
    PredictorState.from_tensordict(td).eta = torch.ones(5, 3)
    assert bool((td["eta"] == 1).all())


@check
def test_from_tensordict_operations():
    state = PredictorState.from_tensordict(plain_td())
    assert isinstance(state.clone(), PredictorState)
    row = state[0]
    assert isinstance(row, PredictorState) and row.batch_size == torch.Size([])
    wide = state.expand(2, 5)
    assert isinstance(wide, PredictorState) and wide.batch_size == torch.Size([2, 5])


@check
def test_from_tensordict_stack():
    both = torch.stack([PredictorState.from_tensordict(plain_td()) for _ in range(2)])
    assert isinstance(both, PredictorState) and both.batch_size == torch.Size([2, 5])


@check
def test_from_tensordict_check_false_empty():
    state = PredictorState.from_tensordict(TensorDict({}, batch_size=[5]), check=False)
    assert isinstance(state, PredictorState) and state.batch_size == torch.Size([5])
    assert len(list(state.keys())) == 0


@check
def test_from_tensordict_check_false_partial():
    td = TensorDict({"eta": torch.randn(5, 3)}, batch_size=[5])
    state = PredictorState.from_tensordict(td, check=False)
    assert isinstance(state, PredictorState) and state.eta.shape == (5, 3)
    with raises(AttributeError, "declared but not set"):
        state.X


@check
def test_from_tensordict_check_false_then_fill():
    state = PredictorState.from_tensordict(TensorDict({}, batch_size=[5]), check=False)
    for key, width in (("eta", 3), ("X", 4), ("beta", 1)):
        state[key] = torch.randn(5, width)
    assert state.eta.shape == (5, 3) and set(state.keys()) == {"eta", "X", "beta"}


@check
def test_from_tensordict_check_true_rejects_empty():
    with raises(TypeError, "missing required field"):
        PredictorState.from_tensordict(TensorDict({}, batch_size=[5]))


def main():
    failed = []
    for fn in CHECKS:
        try:
            fn()
        except Exception:  # every failure is reported, then the run fails
            failed.append(fn.__name__)
            print(f"FAILED {fn.__name__}", file=sys.stderr)
            traceback.print_exc()
    print(f"typed_tensordict: {len(CHECKS) - len(failed)} of {len(CHECKS)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
