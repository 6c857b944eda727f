#!/usr/bin/env python3
"""ccltune.compile_rules without PyTorch: the post-grad graphs enable()'s pass reads, built
here node by node as Inductor prints them (all_reduce + wait_tensor, aten.add, the RMSNorm
forms of Llama/Qwen/Mistral and of F.rms_norm), and what the rules decide for each: the
fused rewrite with its arguments and eps, the plain ccltune op with the collective's own
arguments, or the near-miss and its reason.

Run by ctest (runtime_compile_rules) with PYTHONPATH=runtime/python.
"""
import unittest

from ccltune import compile_rules as R

WORLD = {"0": 1, "tp": 2}  # served groups -> ranks


class Node:
    def __init__(self, name, target, args, kwargs, tensor):
        self.name, self.target, self.args, self.kwargs = name, target, tuple(args), kwargs
        self.users = {}
        self.meta = {"tensor": tensor}


class Graph:
    """A post-grad graph, as plain objects the rules' default View reads."""

    def __init__(self):
        self.nodes = []

    def _add(self, target, args, kwargs, tensor):
        n = Node("n%d" % len(self.nodes), target, args, kwargs, tensor)
        for a in list(args) + list(kwargs.values()):
            for x in (a if isinstance(a, (list, tuple)) else [a]):
                if isinstance(x, Node):
                    x.users[n] = None
        self.nodes.append(n)
        return n

    def input(self, dtype, shape, contiguous=True, offset=0):
        return self._add(None, (), {}, R.TensorFacts(dtype, tuple(shape), contiguous, offset))

    def call(self, target, *args, like=None, dtype=None, shape=None, **kwargs):
        like = like or next(a for a in args if isinstance(a, Node))
        t = like.meta["tensor"]
        facts = R.TensorFacts(dtype or t.dtype, tuple(shape if shape is not None else t.shape),
                              True, 0)
        return self._add(target, args, kwargs, facts)

    def output(self, *values):
        return self._add("output", values, {}, None)


def all_reduce(g, x, op="sum", group="0"):
    return g.call(R.WAIT, g.call(R.ALL_REDUCE, x, op, group))


def written_norm(g, s, w, eps=1e-5, upcast=True, weight_first=True):
    """LlamaRMSNorm.forward as post-grad ATen: upcast, pow, mean(-1), + eps, rsqrt, mul,
    cast back, weight * (Qwen2/Mistral are the same; Meta's reference multiplies after)."""
    dt = s.meta["tensor"].dtype
    x = g.call(R.CONVERTS[0], s, "float32", dtype="float32") if upcast else s
    var = g.call(R.MEAN, g.call(R.POW, x, 2), [-1], True, shape=s.meta["tensor"].shape[:-1] + (1,))
    r = g.call(R.RSQRT, g.call(R.ADD[0], var, eps))
    n = g.call(R.MUL, x, r)
    c = g.call(R.CONVERTS[0], n, dt, dtype=dt) if upcast else n
    if w is None:
        return c
    promoted = "float32" if isinstance(w, Node) and w.meta["tensor"].dtype == "float32" else dt
    return g.call(R.MUL, *((w, c) if weight_first else (c, w)), like=c, dtype=promoted)


def functional_norm(g, s, w, eps=1e-6):
    """F.rms_norm / nn.RMSNorm after Inductor's _fused_rms_norm decomposition (weight in fp32,
    then type_as; dims as positive indices; add.Scalar)."""
    t = s.meta["tensor"]
    x = g.call(R.CONVERTS[0], s, "float32", dtype="float32") if t.dtype != "float32" else s
    var = g.call(R.MEAN, g.call(R.POW, x, 2), [len(t.shape) - 1], True, shape=t.shape[:-1] + (1,))
    n = g.call(R.MUL, x, g.call(R.RSQRT, g.call(R.ADD[1], var, eps)))
    m = g.call(R.MUL, n, w, like=n)
    return g.call(R.CONVERTS[0], m, t.dtype, dtype=t.dtype) if t.dtype != "float32" else m


def block(dtype="bfloat16", hidden=4096, norm=written_norm, shape=(2, 7), op="sum", group="0",
          weight_dtype=None, offset=0, **kw):
    """partial -> all-reduce -> + residual -> norm; returns (graph, parts)."""
    g = Graph()
    partial = g.input(dtype, shape + (hidden,), offset=offset)
    residual = g.input(dtype, shape + (hidden,))
    w = g.input(weight_dtype or dtype, (hidden,))
    summed = all_reduce(g, partial, op=op, group=group)
    s = g.call(R.ADD[0], residual, summed)
    y = norm(g, s, w, **kw)
    g.output(y, s)
    return g, dict(partial=partial, residual=residual, weight=w, sum=summed, add=s, out=y)


def plan(g, **kw):
    return R.plan_graph(R.View(), g.nodes, WORLD, **kw)


class FusedTest(unittest.TestCase):
    def assert_fused(self, g, parts, eps):
        p = plan(g)
        self.assertEqual(len(p.fused), 1, p.summary(R.View()))
        m = p.fused[0]
        self.assertIs(m.output, parts["out"])
        self.assertIs(m.add, parts["add"])
        kw = R.fused_kwargs(m)
        self.assertEqual(list(kw), list(R.FUSED_ARGS))
        self.assertIs(kw["input"], parts["partial"])
        self.assertIs(kw["residual"], parts["residual"])
        self.assertIs(kw["weight"], parts["weight"])
        self.assertEqual(kw["eps"], eps)
        self.assertEqual(kw["group_name"], "0")
        # Everything between the collective and the norm's output goes; the add stays
        # reachable through the op's second result, the inputs stay.
        chain = set(map(id, m.chain))
        self.assertIn(id(parts["out"]), chain)
        self.assertFalse({id(parts[k]) for k in ("partial", "residual", "weight")} & chain)
        self.assertEqual(p.plain, [])
        self.assertEqual(p.left, [])
        return m

    def test_llama_written_out_each_dtype_and_eps(self):
        for dt in R.FUSED_DTYPES:
            for eps in (1e-5, 1e-6):
                g, parts = block(dt, eps=eps, upcast=dt != "float32")
                m = self.assert_fused(g, parts, eps)
                self.assertEqual((m.dtype, m.hidden, m.tokens), (dt, 4096, 14))
                self.assertEqual(m.form, "written out (weight)" if dt == "float32" else
                                 "written out (upcast, weight after the cast back)")

    def test_meta_reference_weight_after(self):
        g, parts = block(weight_first=False)
        self.assert_fused(g, parts, 1e-5)

    def test_functional_rms_norm_each_dtype(self):
        for dt in R.FUSED_DTYPES:
            g, parts = block(dt, norm=functional_norm, eps=1e-6)
            m = self.assert_fused(g, parts, 1e-6)
            self.assertEqual(m.form, "written out (weight)" if dt == "float32" else
                             "written out (upcast, weight before the cast back)")

    def test_fused_rms_norm_kept_whole(self):
        def kept(g, s, w, eps):
            n = g.call(R.FUSED_RMS_NORM, s, [4096], w, eps)
            g.call(R.GETITEM, n, 1, shape=(2, 7, 1), dtype="float32")
            return g.call(R.GETITEM, n, 0)
        g, parts = block(norm=kept, eps=None)
        m = self.assert_fused(g, parts, R.FP32_EPS)
        self.assertEqual(m.form, "aten._fused_rms_norm")
        g, parts = block(norm=lambda g, s, w, eps: g.call(R.RMS_NORM, s, [4096], w, eps), eps=1e-6)
        self.assertEqual(self.assert_fused(g, parts, 1e-6).form, "aten.rms_norm")
        g, _ = block(norm=lambda g, s, w, eps: g.call(R.RMS_NORM, s, [7, 4096], w, eps), eps=1e-6)
        self.assertIn("the norm is over [7, 4096], not the last dim only",
                      plan(g).not_fused[0].reason)

    def test_variants_square_by_mul_mean_by_sum_root_by_sqrt(self):
        def variant(g, s, w, eps):
            x = g.call(R.CONVERTS[0], s, "float32", dtype="float32")
            total = g.call(R.SUM, g.call(R.MUL, x, x), [-1], True, shape=(2, 7, 1))
            var = g.call(R.DIV, total, 4096)
            n = g.call(R.DIV, x, g.call(R.SQRT, g.call(R.ADD[0], var, eps)))
            c = g.call(R.CONVERTS[0], n, "bfloat16", dtype="bfloat16")
            return g.call(R.MUL, w, c, like=c)
        g, parts = block(norm=variant, eps=1e-6)
        self.assert_fused(g, parts, 1e-6)

    def test_symbolic_tokens_fuse_symbolic_hidden_does_not(self):
        g, parts = block(shape=(None,))
        self.assertIsNone(self.assert_fused(g, parts, 1e-5).tokens)
        g, _ = block(hidden=None)
        self.assertIn("symbolic", plan(g).not_fused[0].reason)

    def test_two_layers_chain_through_the_new_residual(self):
        g = Graph()
        h = g.input("bfloat16", (4, 4096))
        r = g.input("bfloat16", (4, 4096))
        w1, w2 = g.input("bfloat16", (4096,)), g.input("bfloat16", (4096,))
        s1 = g.call(R.ADD[0], r, all_reduce(g, h))
        y1 = written_norm(g, s1, w1)
        s2 = g.call(R.ADD[0], s1, all_reduce(g, g.call(R.MUL, y1, 2.0)))
        g.output(written_norm(g, s2, w2, eps=1e-6), s2)
        p = plan(g)
        self.assertEqual([m.eps for m in p.fused], [1e-5, 1e-6])
        self.assertIs(p.fused[1].residual, s1)  # the applier maps it to the first op's result


class NearMissTest(unittest.TestCase):
    def reason(self, g):
        p = plan(g)
        self.assertEqual(p.fused, [], p.summary(R.View()))
        return (p.not_fused + p.left)[0].reason, p

    def test_norm_over_another_dim(self):
        def dim0(g, s, w, eps):
            x = g.call(R.CONVERTS[0], s, "float32", dtype="float32")
            var = g.call(R.MEAN, g.call(R.POW, x, 2), [0], True, shape=(1, 4096))
            n = g.call(R.MUL, x, g.call(R.RSQRT, g.call(R.ADD[0], var, eps)))
            c = g.call(R.CONVERTS[0], n, "bfloat16", dtype="bfloat16")
            return g.call(R.MUL, w, c, like=c)
        reason, p = self.reason(block(norm=dim0, shape=(8,), eps=1e-5)[0])
        self.assertIn("dims [0] of a 2-d tensor, not the last one only", reason)
        self.assertEqual([m.kind for m in p.plain], ["all_reduce"])  # still runs through ccltune

    def test_non_sum_reduction(self):
        g, parts = block(op="max")
        reason, p = self.reason(g)
        self.assertEqual(reason, "reduce op max: the fused op sums")
        self.assertEqual(p.plain[0].args, (parts["partial"], "max", "0"))

    def test_sum_used_elsewhere(self):
        g, parts = block()
        g.call(R.MUL, parts["sum"], 2.0)
        reason, _ = self.reason(g)
        self.assertIn("the all-reduced sum is used by 2 nodes", reason)

    def test_intermediate_used_elsewhere(self):
        g, _ = block()
        g.output(next(n for n in g.nodes if n.target == R.RSQRT))  # a training forward's save
        self.assertIn("the inverse root is used by 2 nodes", self.reason(g)[0])

    def test_group_not_served(self):
        reason, p = self.reason(block(group="7")[0])
        self.assertEqual(reason, "group '7' is not served (enable() serves ['0', 'tp'])")
        self.assertEqual((p.plain, p.not_fused), ([], []))

    def test_qualification(self):
        cases = [(dict(dtype="float64", upcast=False), "dtype float64"),
                 (dict(hidden=4100), "hidden 4100: the fused op takes multiples of 8 up to 16384"),
                 (dict(hidden=32768), "hidden 32768")]
        for kw, want in cases:
            self.assertIn(want, self.reason(block(**kw)[0])[0], kw)

    def test_weight_of_another_dtype(self):
        g, _ = block(weight_dtype="float32")  # weight fp32 * bf16 -> fp32 output
        self.assertIn("the norm's output is float32", self.reason(g)[0])

    def test_layout(self):
        g, _ = block(offset=8)
        self.assertIn("input starts 8 bytes into its storage", self.reason(g)[0])

    def test_eps_not_a_constant(self):
        g, _ = block(norm=lambda g, s, w, eps: written_norm(g, s, w, g.input("float64", ())),
                     eps=None)
        self.assertIn("eps is not a constant", self.reason(g)[0])

    def test_no_norm_and_no_weight(self):
        g, _ = block(norm=lambda g, s, w: s)
        self.assertIn("feeds no RMSNorm", self.reason(g)[0])
        g, _ = block(norm=lambda g, s, w: written_norm(g, s, None))
        self.assertIn("followed by output, not a weight product", self.reason(g)[0])
        g, _ = block(norm=lambda g, s, w: written_norm(g, s, 0.5))
        self.assertIn("scaled by the constant 0.5, not a weight", self.reason(g)[0])

    def test_shared_add_fuses_once(self):
        g = Graph()
        a, b, w = g.input("bfloat16", (8, 4096)), g.input("bfloat16", (8, 4096)), g.input("bfloat16", (4096,))
        s = g.call(R.ADD[0], all_reduce(g, a), all_reduce(g, b))
        g.output(written_norm(g, s, w))
        p = plan(g)
        self.assertEqual((len(p.fused), len(p.plain)), (1, 1))
        self.assertIn("already part of another fused rewrite", p.not_fused[0].reason)

    def test_fuse_off_leaves_plain_rewrite(self):
        g, _ = block()
        p = plan(g, fuse=False)
        self.assertEqual((p.fused, [m.kind for m in p.plain]), ([], ["all_reduce"]))
        p = plan(g, fuse=False, collectives=False)
        self.assertIn("collective rewrites are off", p.left[0].reason)


class PlainTest(unittest.TestCase):
    def test_each_collective_keeps_its_arguments(self):
        g = Graph()
        x = g.input("bfloat16", (8, 64))
        ag = g.call(R.WAIT, g.call(R.ALL_GATHER, x, 2, "tp", shape=(16, 64)))
        rs = g.call(R.WAIT, g.call(R.REDUCE_SCATTER, ag, "avg", 2, "tp", shape=(8, 64)))
        ar = g.call(R.WAIT, g.call(R.ALL_REDUCE, rs, "product", "tp"))
        g.output(ar)
        p = plan(g)
        self.assertEqual([(m.kind, m.op, m.args, m.group) for m in p.plain],
                         [("all_gather", "ccltune.group_all_gather", (x, 2, "tp"), "tp"),
                          ("reduce_scatter", "ccltune.group_reduce_scatter", (ag, "avg", 2, "tp"), "tp"),
                          ("all_reduce", "ccltune.group_all_reduce", (rs, "product", "tp"), "tp")])
        self.assertEqual(p.not_fused[0].reason, "reduce op product: the fused op sums")
        line = p.summary(R.View())
        self.assertTrue(line.startswith("fused 0 all_reduce+add+rms_norm; 1 all_gather -> ccltune;"
                                        " 1 all_reduce -> ccltune; 1 reduce_scatter -> ccltune"),
                        line)

    def test_refusals(self):
        g = Graph()
        x = g.input("float64", (8, 64))
        y = g.input("bfloat16", (7, 64))
        outs = [g.call(R.WAIT, g.call(R.ALL_REDUCE, x, "sum", "tp")),
                g.call(R.WAIT, g.call(R.ALL_REDUCE, y, "bxor", "tp")),
                g.call(R.WAIT, g.call(R.ALL_GATHER, y, 4, "tp", shape=(28, 64))),
                g.call(R.WAIT, g.call(R.REDUCE_SCATTER, y, "sum", 2, "tp", shape=(3, 64)))]
        unwaited = g.call(R.ALL_REDUCE, y, "sum", "tp")
        g.output(*outs, unwaited)
        p = plan(g)
        self.assertEqual(p.plain, [])
        self.assertEqual([nm.reason for nm in p.left], [
            "dtype float64: ccltune runs float32, float16, bfloat16, int32, int8",
            "reduce op 'bxor' has no ccltune equivalent (avg, max, min, product, sum)",
            "group_size 4, but the group has 2 ranks",
            "dim 0 (7) is not a known multiple of 2 ranks",
            "its result is read by %s (output), not by one wait_tensor" % g.nodes[-1].name])

    def test_reduce_op_table_names_nccl_ops(self):
        self.assertEqual(R.REDUCE_OPS, {"sum": "sum", "avg": "avg", "product": "prod",
                                        "min": "min", "max": "max"})


def tp_layers(layers=2, tokens=(2, 8), hidden=512, extra_use=None, group="0"):
    """Row-parallel linears (mm, then a view to [b, s, hidden]) all-reduced, each followed by
    the residual add and a norm, `layers` times; returns (graph, outputs of each layer).
    extra_use: index of a layer whose new residual is also returned."""
    g = Graph()
    flat = (tokens[0] * tokens[1], hidden)
    x = g.input("bfloat16", tokens + (hidden,))
    residual = x
    h = x
    layer_out = []
    for i in range(layers):
        a = g.call(R.VIEWS[0], h, list(flat), shape=flat)
        wt = g.input("bfloat16", (hidden, hidden))
        mm = g.call(R.MM, a, wt, shape=flat)
        partial = g.call(R.VIEWS[0], mm, list(tokens) + [hidden], shape=tokens + (hidden,))
        s = g.call(R.ADD[0], residual, all_reduce(g, partial, group=group))
        h = written_norm(g, s, g.input("bfloat16", (hidden,)))
        layer_out.append(dict(mm=mm, partial=partial, add=s, out=h))
        residual = s
    extra = [layer_out[extra_use]["add"]] if extra_use is not None else []
    g.output(h, residual, *extra)
    return g, layer_out


def pool_plan(g, policy="always", refuse=lambda m: None):
    p = plan(g)
    return R.plan_pool(R.View(), p.fused, policy, refuse), p


class PoolPlanTest(unittest.TestCase):
    def test_mm_writes_the_input_slot_and_the_residual_chains(self):
        g, layers = tp_layers(layers=3)
        (pooled, misses), p = pool_plan(g)
        self.assertEqual(misses, [])
        self.assertEqual([x.mm for x in pooled], [l["mm"] for l in layers])
        self.assertEqual([x.residual_from for x in pooled], [None, p.fused[0], p.fused[1]])
        p.pooled, p.not_pooled = pooled, misses
        self.assertIn("pooled buffers for 3 (input from mm 3, copied 0; residual chained 2, "
                      "copied 1)", p.summary(R.View()))

    def test_input_copied_when_the_mm_result_is_read_elsewhere(self):
        g, layers = tp_layers(layers=1)
        g.output(layers[0]["mm"])  # a second reader of the mm's result
        (pooled, _), _ = pool_plan(g)
        self.assertIsNone(pooled[0].mm)
        g, _ = block()  # the all-reduce's input is a graph input: no mm to redirect
        (pooled, _), _ = pool_plan(g)
        self.assertIsNone(pooled[0].mm)

    def test_residual_copied_when_read_by_more_than_the_next_add(self):
        g, layers = tp_layers(layers=3, extra_use=0)
        (pooled, _), p = pool_plan(g)
        self.assertEqual([x.residual_from for x in pooled], [None, None, p.fused[1]])

    def test_refusals_policy_and_symbolic_tokens(self):
        g, _ = tp_layers(layers=2)
        (pooled, misses), _ = pool_plan(g, policy="never")
        self.assertEqual((pooled, [m.reason for m in misses]), ([], ["pool='never'"] * 2))
        (pooled, misses), p = pool_plan(g, policy="auto",
                                        refuse=lambda m: "same choice" if m.eps else None)
        self.assertEqual([m.reason for m in misses], ["same choice"] * 2)
        # A refused site breaks the chain: the next one copies its residual in.
        first = p.fused[0].collective
        (pooled, misses), p = pool_plan(g, refuse=lambda m: "no" if m.collective is first else None)
        self.assertEqual([(x.match, x.residual_from) for x in pooled], [(p.fused[1], None)])
        g, _ = block(shape=(None,))
        (pooled, misses), _ = pool_plan(g)
        self.assertIn("symbolic", misses[0].reason)
        with self.assertRaisesRegex(ValueError, "pool='sometimes': allowed auto, always, never"):
            pool_plan(g, policy="sometimes")


if __name__ == "__main__":
    unittest.main()
