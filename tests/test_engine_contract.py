"""The backward engine's contract as torch 2.13 has it: hook order and arguments,
``backward(inputs=)``, nodes reached without a gradient, callable nodes, saved
values on nodes, callbacks, reentrant backward, and the errors of each.

Each scenario is a function of the library (``npgrad`` or ``torch``) returning
plain Python values, run on both and compared.
"""
from __future__ import annotations

import pytest

import npgrad
from npgrad.autograd import engine
from npgrad.autograd.graph import SECOND_BACKWARD_MSG
from torch_oracle import assert_same_error


def _tolist(v):
    if v is None:
        return None
    if isinstance(v, (tuple, list)):
        return type(v)(_tolist(x) for x in v)
    if hasattr(v, "tolist"):
        return ("tensor", v.tolist(), str(v.dtype).split(".")[-1])
    return v


def same_in_torch(scenario) -> None:
    """``scenario(lib)`` gives equal results with npgrad and torch (and a known one without)."""
    torch = pytest.importorskip("torch")
    assert _tolist(scenario(npgrad)) == _tolist(scenario(torch))


def _drop_class(lib):
    class Drop(lib.autograd.Function):  # a custom Function that returns no gradient
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return None
    return Drop


# -- hook order and what hooks see -------------------------------------------------------

def _hook_order(lib):
    log = []

    def hook1(g):
        log.append(1)
        return g * 3

    def hook2(gs):
        log.append(2)
        return tuple(g * 2 for g in gs)

    a = lib.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_prehook(hook2)
    b.register_hook(hook1)
    b.grad_fn.register_prehook(hook2)
    acc = b.grad_fn.next_functions[0][0]
    a.register_hook(hook1)
    acc.register_prehook(hook2)
    a.register_hook(hook1)
    b.sum().backward(retain_graph=True)
    logs = [list(log), a.grad.item()]
    del log[:]
    logs += [lib.autograd.grad(b.sum(), inputs=(a,), retain_graph=True)[0].item(), list(log)]
    del log[:]
    b.sum().backward(inputs=(b,))
    logs += [list(log), b.grad.item(), b.retains_grad, a.grad.item()]
    return logs


def test_hook_order_and_backward_inputs_runs_the_input_node_prehooks():
    same_in_torch(_hook_order)
    log = _hook_order(npgrad)
    assert log[0] == [1, 2, 2, 1, 1, 2] and log[3] == [1, 2, 2, 1, 1]
    assert log[4:] == [[1, 2, 2], 3.0, True, 216.0]


def _inputs_post_hook_sees_unneeded_edges_as_none(lib):
    log = []
    a = lib.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_hook(lambda gi, go: log.append((gi, go)))
    b.sum().backward(inputs=(b,))
    return log, a.grad, b.grad


def test_backward_inputs_computes_nothing_for_edges_it_does_not_need():
    same_in_torch(_inputs_post_hook_sees_unneeded_edges_as_none)


def _capture_before_hooks_on_a_node_that_runs(lib):
    x = lib.tensor(1., requires_grad=True)
    a = x * 2
    a.register_hook(lambda g: g * 10)
    a.grad_fn.register_prehook(lambda gs: (gs[0] * 100,))
    both = lib.autograd.grad(a * 3, [a, x], retain_graph=True)
    only = lib.autograd.grad(a * 3, [a])
    return both, only


def test_grad_captures_raw_on_running_nodes_and_after_tensor_hooks_on_capture_only_ones():
    same_in_torch(_capture_before_hooks_on_a_node_that_runs)
    both, only = _capture_before_hooks_on_a_node_that_runs(npgrad)
    assert (both[0].item(), both[1].item(), only[0].item()) == (3., 6000., 30.)


def _unbind_sibling_hooks(lib):
    x = lib.arange(3.).requires_grad_()
    u = x.clone().unbind()
    log = []
    u[0].register_hook(lambda g: log.append(("u0", g)))
    u[1].register_hook(lambda g: log.append(("u1", g)))
    u[0].grad_fn.register_prehook(lambda gs: log.append(("pre", gs)))
    (u[2] * 2).backward()
    return log, x.grad


def test_unbind_hooks_see_none_when_only_a_sibling_is_used():
    same_in_torch(_unbind_sibling_hooks)
    log, grad = _unbind_sibling_hooks(npgrad)
    assert log[0] == ("u0", None) and log[1] == ("u1", None)
    assert grad.tolist() == [0., 0., 2.]


def _node_reached_without_gradient(lib):
    x = lib.tensor([1., 2.], requires_grad=True)
    log = []
    x.register_hook(lambda g: log.append(("leaf", g)))
    y = x * 2
    y.register_hook(lambda g: log.append(("y", g)))
    y.grad_fn.register_prehook(lambda gs: log.append(("pre", gs)))
    y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi, go)))
    y.grad_fn.next_functions[0][0].register_prehook(lambda gs: log.append(("accpre", gs)))
    x.register_post_accumulate_grad_hook(lambda t: log.append(("postacc", t.grad)))
    _drop_class(lib).apply(y).sum().backward()
    return log, x.grad


def test_nodes_reached_without_a_gradient_run_their_hooks_with_none():
    same_in_torch(_node_reached_without_gradient)
    log, grad = _node_reached_without_gradient(npgrad)
    assert [entry[0] for entry in log] == ["y", "pre", "post", "leaf", "accpre", "postacc"]
    assert grad is None


def _custom_function_called_with_zeros(lib):
    seen = []

    class Pass(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            seen.append(g)
            return g

    x = lib.tensor([1., 2.], requires_grad=True)
    _drop_class(lib).apply(Pass.apply(x)).sum().backward()
    return seen, x.grad


def test_custom_function_reached_without_gradient_gets_zeros():
    same_in_torch(_custom_function_called_with_zeros)
    seen, grad = _custom_function_called_with_zeros(npgrad)
    assert seen[0].tolist() == [0., 0.] and grad.tolist() == [0., 0.]


# -- hook results ------------------------------------------------------------------------

def _hook_env(lib):
    def named(g):
        return g.to(lib.float16)

    class Callable:
        def __call__(self, g):
            return g.double()

    def fresh(hook, leaf=True):
        x = lib.randn(3, requires_grad=True)
        t = x if leaf else x * 2
        t.register_hook(hook)
        return (t * 2).sum()

    return {"lib": lib, "fresh": fresh, "named": named, "Callable": Callable,
            "Drop": _drop_class(lib)}


@pytest.mark.parametrize("expr", [
    "fresh(lambda g: g.double()).backward()",
    "fresh(lambda g: g.double(), leaf=False).backward()",
    "fresh(named).backward()",
    "fresh(Callable()).backward()",
    "fresh(lambda g: g.to(lib.int64)).backward()",
    "fresh(lambda g: g.to(lib.bool)).backward()",
    "fresh(lambda g: g.to(lib.bfloat16)).backward()",
    "fresh(lambda g: g.sum()).backward()",
    "fresh(lambda g: 3).backward()",
])
def test_hook_changing_its_gradient_raises_torchs_error(expr):
    assert_same_error(expr, _hook_env)


def _replace_none_env(lib):
    x = lib.randn(2, requires_grad=True)
    x.register_hook(lambda g: lib.ones(2))
    y = lib.randn(2, requires_grad=True) * 2
    y.register_hook(lambda g: lib.ones(2))
    return {"Drop": _drop_class(lib), "x": x, "y": y}


@pytest.mark.parametrize("expr", ["Drop.apply(x).sum().backward()",
                                  "Drop.apply(y).sum().backward()"])
def test_hook_replacing_a_none_gradient_raises(expr):
    assert_same_error(expr, _replace_none_env)


def _misc_env(lib):
    x = lib.randn(3, requires_grad=True)
    p = lib.randn(3, requires_grad=True)
    p.register_post_accumulate_grad_hook(lambda t: 1)
    return {"lib": lib, "x": x, "p": p}


@pytest.mark.parametrize("expr", [
    "(x * 2).sum().backward(2.0)",
    "lib.autograd.backward((x * 2).sum(), 2.0)",
    "lib.autograd.grad((x * 2).sum(), x, 2.0)",
    "(p * 2).sum().backward()",
    "setattr(x, 'grad', x)",
    "setattr(x, 'output_nr', 1)",
    "lib.autograd.graph.get_gradient_edge(lib.ones(2))",
    "lib.autograd.Variable._execution_engine.queue_callback(lambda: None)",
])
def test_engine_errors_match_torch(expr):
    assert_same_error(expr, _misc_env)


# -- callable nodes, output_nr, gradient edges -------------------------------------------

def _callable_nodes(lib):
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    w = lib.tensor([[1.], [2.]], requires_grad=True)
    results = [(x * 2).grad_fn(lib.ones(3)), x.sum().grad_fn(lib.tensor(2.)),
               x.unbind()[0].grad_fn(lib.tensor(1.), None, lib.tensor(2.)),
               (x + w).grad_fn(lib.ones(2, 3))]
    results.append([x.output_nr, (x * 2).output_nr, [t.output_nr for t in x.unbind()]])
    return results


def test_calling_a_node_runs_its_backward():
    same_in_torch(_callable_nodes)
    res = _callable_nodes(npgrad)
    assert res[0][0].tolist() == [2., 2., 2.] and res[0][1] is None
    assert res[3][1].tolist() == [[1.] * 3] * 2  # not reduced to w's shape: the engine does that


def _gradient_edges(lib):
    from importlib import import_module

    graph = import_module(f"{lib.__name__}.autograd.graph")
    x = lib.tensor([1., 2.], requires_grad=True)
    y = x * x
    edge, leaf_edge = graph.get_gradient_edge(y), graph.get_gradient_edge(x)
    names = [type(edge).__name__, edge.node.name(), edge.output_nr, edge.ownership_token,
             leaf_edge.node.name()]
    return names, lib.autograd.grad(y.sum(), edge, retain_graph=True), \
        lib.autograd.grad(y.sum(), leaf_edge)


def test_get_gradient_edge():
    same_in_torch(_gradient_edges)


# -- saved values on nodes ---------------------------------------------------------------

def _saved_values(lib):
    x = lib.tensor([1., 2.], requires_grad=True)
    w = lib.tensor([3., 4.], requires_grad=True)
    m = lib.tensor([[1., 2.]], requires_grad=True)
    out = []
    y = x * w
    out += [y.grad_fn._saved_self is x, y.grad_fn._saved_other is w]
    y = x * 2
    out += [y.grad_fn._saved_self, y.grad_fn._saved_other]
    out += [lib.add(x, w, alpha=2).grad_fn._saved_alpha, (x ** 3).grad_fn._saved_exponent,
            (x ** 3).grad_fn._saved_self is x]
    for fn in ("exp", "tanh", "sigmoid"):
        r = getattr(x, fn)()
        saved = r.grad_fn._saved_result
        out += [saved.tolist() == r.tolist(), saved.grad_fn is r.grad_fn,
                hasattr(r.grad_fn, "_saved_self")]
    mm = lib.mm(m, w.unsqueeze(1))
    out += [mm.grad_fn._saved_self is m, mm.grad_fn._saved_mat2.tolist(),
            tuple(x.sum().grad_fn._saved_self_sym_sizes)]
    y = x * w
    y.sum().backward()
    try:
        out.append(y.grad_fn._saved_self)
    except RuntimeError as e:
        out.append(str(e))
    return out


def test_saved_values_as_node_attributes():
    same_in_torch(_saved_values)
    assert _saved_values(npgrad)[-1] == SECOND_BACKWARD_MSG


def _raw_saved_hooks(lib):
    x = lib.tensor([1., 2.], requires_grad=True)
    w = lib.tensor([3., 4.], requires_grad=True)
    y = x * w
    raw = y.grad_fn._raw_saved_self
    raw.register_hooks(lambda t: t * 10, lambda t: t + 1)
    seen = y.grad_fn._saved_self.tolist()
    errors = []
    try:
        raw.register_hooks(lambda t: t, lambda t: t)
    except RuntimeError as e:
        errors.append(str(e))
    r = x.exp()
    r.grad_fn._raw_saved_result.register_hooks(lambda t: t * 0 + 5, lambda t: t)
    r.sum().backward()
    y.sum().backward()
    return seen, errors, w.grad, x.grad


def test_raw_saved_tensor_register_hooks():
    same_in_torch(_raw_saved_hooks)
    seen, errors, wgrad, xgrad = _raw_saved_hooks(npgrad)
    assert seen == [11., 21.] and wgrad.tolist() == [11., 21.]
    assert xgrad.tolist() == [8., 9.]  # exp's saved result replaced by 5, plus w


# -- callbacks ---------------------------------------------------------------------------

def _callbacks(lib):
    log = []
    x = lib.tensor([1., 2.], requires_grad=True)
    y = x * 2
    engine_ = lib.autograd.Variable._execution_engine

    def hook(g):
        log.append("hook")
        engine_.queue_callback(lambda: log.append(("first", x.grad.tolist())))
        engine_.queue_callback(lambda: (log.append("second"),
                                        engine_.queue_callback(lambda: log.append("third"))))
    y.register_hook(hook)
    (y * 3).sum().backward()
    log.append("after")
    return log


def test_queue_callback_runs_at_the_end_of_backward():
    same_in_torch(_callbacks)
    assert _callbacks(npgrad) == ["hook", ("first", [6., 6.]), "second", "third", "after"]


# -- reentrant backward ------------------------------------------------------------------

def _deep_reentrant(lib, depth):
    class Deep(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with lib.enable_grad():
                ctx.inner = x.detach().requires_grad_() - 1
            return ctx.inner.detach()

        @staticmethod
        def backward(ctx, g):
            if ctx.inner.item() > 0:
                with lib.enable_grad():
                    Deep.apply(ctx.inner).sum().backward()
            return g * 2

    v = lib.tensor(float(depth), requires_grad=True)
    Deep.apply(v).sum().backward()
    return v.grad


def test_reentrant_backward_matches_torch():
    same_in_torch(lambda lib: _deep_reentrant(lib, 50))


def test_ten_thousand_deep_reentrant_chain_backprops():
    assert _deep_reentrant(npgrad, 10_000).item() == 2.0


def test_errors_in_deep_reentrant_backward_reach_the_caller():
    class Fail(npgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with npgrad.enable_grad():
                ctx.inner = x.detach().requires_grad_() - 1
            return ctx.inner.detach()

        @staticmethod
        def backward(ctx, g):
            if ctx.inner.item() > 0:
                with npgrad.enable_grad():
                    Fail.apply(ctx.inner).sum().backward()
                return g
            raise ValueError("deep failure")

    v = npgrad.tensor(100., requires_grad=True)
    with pytest.raises(ValueError, match="deep failure"):
        Fail.apply(v).sum().backward()
    assert engine.current_graph_task_id() == -1


def test_reentrant_worker_keeps_saved_tensor_hooks():
    packed = []

    class Deep(npgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with npgrad.enable_grad():
                ctx.inner = x.detach().requires_grad_() - 1
            return ctx.inner.detach()

        @staticmethod
        def backward(ctx, g):
            if ctx.inner.item() > 0:
                with npgrad.enable_grad():
                    y = Deep.apply(ctx.inner) * ctx.inner  # saves ctx.inner
                    y.sum().backward()
            return g

    v = npgrad.tensor(40., requires_grad=True)
    with npgrad.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
        Deep.apply(v).sum().backward()
    assert len(packed) == 2 * 39  # each nested level (some on worker threads) saves two


# -- small API pieces ----------------------------------------------------------------------

def test_force_original_view_tracking_and_current_level():
    torch = pytest.importorskip("torch")
    import npgrad.autograd.forward_ad as fw
    from npgrad import _mode

    states = []
    with npgrad.autograd._force_original_view_tracking(True):
        states.append(_mode._is_view_replay_enabled())
    states.append(_mode._is_view_replay_enabled())

    @npgrad.autograd._force_original_view_tracking(True)
    def inside():
        return _mode._is_view_replay_enabled()

    states += [_mode._is_view_replay_enabled(), inside(), _mode._is_view_replay_enabled()]
    theirs = []
    with torch.autograd._force_original_view_tracking(True):
        theirs.append(torch._C._is_view_replay_enabled())
    theirs.append(torch._C._is_view_replay_enabled())

    @torch.autograd._force_original_view_tracking(True)
    def inside_t():
        return torch._C._is_view_replay_enabled()

    theirs += [torch._C._is_view_replay_enabled(), inside_t(), torch._C._is_view_replay_enabled()]
    assert states == theirs == [True, False, False, True, False]
    levels = [fw._current_level]
    with fw.dual_level():
        levels.append(fw._current_level)
    levels.append(fw._current_level)
    assert levels == [-1, 0, -1]


# -- allow_mutation_on_saved_tensors -------------------------------------------------------

def _mutation_on_saved(lib):
    from importlib import import_module

    allow = import_module(f"{lib.__name__}.autograd.graph").allow_mutation_on_saved_tensors
    out = []
    with allow():
        a = lib.tensor([1., 2.], requires_grad=True)
        b = a * 3
        c = b.exp()
        d = (b * c).sum()
        b.mul_(10)
        c.zero_()
        d.backward()
        out.append(a.grad)
        x = lib.tensor([1., 2.], dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad((x ** 3).sum(), x, create_graph=True)
        out += [g, lib.autograd.grad(g.sum(), x)[0]]  # unmodified: history kept
        late = (x.clone() * 2).pow(2).sum()
    try:
        late.backward()
    except AssertionError as e:
        out.append(str(e))
    try:
        with allow():
            with allow():
                pass
    except RuntimeError as e:
        out.append(str(e))
    return out


def test_allow_mutation_on_saved_tensors():
    same_in_torch(_mutation_on_saved)
    out = _mutation_on_saved(npgrad)
    assert out[2].tolist() == [6., 12.]
    assert out[-1] == "allow_mutation_on_saved_tensors contexts cannot be nested"


def test_mutating_a_saved_tensor_outside_the_block_still_raises():
    a = npgrad.tensor([1., 2.], requires_grad=True)
    b = a * 3
    d = (b * b).sum()
    b.mul_(10)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        d.backward()


def _history_through_saved_tensor_hooks(lib):
    from importlib import import_module

    hooks = import_module(f"{lib.__name__}.autograd.graph").saved_tensors_hooks
    x = lib.tensor([1., 2.], requires_grad=True)
    with hooks(lambda t: t.detach() * 1, lambda t: t):
        y = (x ** 3).sum()
        h = x.exp()
    g, = lib.autograd.grad(y, x, create_graph=True)
    saved = h.grad_fn._saved_result
    gh, = lib.autograd.grad(h.sum(), x, create_graph=True)
    def rounded(t):  # exp differs from torch's in the last float32 bit
        return [round(v, 5) for v in t.tolist()]

    return [g, g.requires_grad, lib.autograd.grad(g.sum(), x)[0], rounded(saved),
            saved.grad_fn is h.grad_fn, rounded(lib.autograd.grad(gh.sum(), x)[0])]


def test_tensors_unpacked_by_hooks_keep_their_place_in_the_graph():
    same_in_torch(_history_through_saved_tensor_hooks)
    out = _history_through_saved_tensor_hooks(npgrad)
    assert out[2].tolist() == [6., 12.] and out[4] is True
