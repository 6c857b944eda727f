#!/usr/bin/env python3
"""ccltune.torch.enable()'s compiler pass on one GPU (issue 23): one process, world size 1,
NCCL, libccltune without winners (so NCCL, then the separate epilogue kernel).

Checks, each compiled with fullgraph=True, dynamic=False, under torch.no_grad():
- baseline: without enable() nothing changes (no pass installed, no ccltune op in the code);
- block-bfloat16-residual-copy: block-bfloat16 with enable(residual="copy");
- block-<dtype>: a tensor-parallel Llama-shaped model written with functional collectives
  (2 blocks; row-parallel outputs all-reduced, then residual add and RMSNorm; the four norms
  mix nn.RMSNorm and Llama's written-out form with eps 1e-5 and 1e-6): the post-grad graph
  the pass returns holds 4 fused ops and no c10d all-reduce, each eps as written;
- llama-<dtype>-<eps>: transformers' LlamaForCausalLM (small config, random weights; the
  o_proj / down_proj outputs all-reduced by forward hooks with functional collectives,
  the model's code untouched): 4 fused ops (2 layers x 2);
- graphs-<...>: mode="reduce-overhead" (CUDA graphs), three calls with new inputs;
- cache: the same block compiled again after torch._dynamo.reset() is served from
  Inductor's cache (the pass's uuid keys it) and still computes the same;
- not fused (one each): the norm over dim 0, a max all-reduce, an all-reduce whose sum is
  also used elsewhere, a group enable() does not serve: no fused op, the reason reported;
- plain: all-gather, reduce-scatter and an avg all-reduce become ccltune ops;
- dist-all-reduce: the block with torch.distributed.all_reduce in place (Dynamo traces it
  into the functional collective): 4 fused ops. (DTensor's RowwiseParallel emits no
  all-reduce at all on a 1-rank mesh, so it is checked on 2+ GPUs only.)
- pool-*: enable(pool="always") on the block (eager-Inductor and CUDA graphs) and on
  transformers' Llama: every fused site gets pooled slots (its mm writing straight into the
  input slot, the residual chained from site to site), the fused op runs on slots only
  (`pooled_arranged`), outputs match, and outputs held from the first call still match their
  reference after later calls (no graph output lives in a slot); pool="auto" without winners
  leaves the sites unpooled (same choice either way); a group without a pool says so.
  With one rank the pool is this GPU's own memory, so the runtime still runs the unfused
  path: what runs on the slots with peers is measured on 2+ GPUs (issue 27).
Outputs are compared with the same model run eagerly (not compiled):
max |compiled - eager| / max |eager| <= TOL[dtype] for every output. With one rank the
all-reduce is the identity, so the comparison checks the residual add, the norm, eps and
the weight, not the reduction across ranks.

Writes --out/compile-pass.json (every check) and --out/graphs.txt (each graph's report and
its text before and after the pass). Exit 0 all passed, 1 any failed, 77 no PyTorch/GPU.

    PYTHONPATH=runtime/python CCLTUNE_LIBRARY=build/runtime/libccltune.so.0 \\
        python3 tests/gpu/compile_pass_check.py --out /tmp/out
"""
import argparse
import collections
import json
import os
import sys
import tempfile
import time
import traceback

TOL = {"bfloat16": 5e-2, "float16": 1e-2, "float32": 1e-4}
FUSED_OP = "ccltune.group_all_reduce_residual_rmsnorm.default"
C10D_AR = "_c10d_functional.all_reduce.default"


class Checks:
    def __init__(self, budget_s, after_each):
        self.results, self.t0, self.budget = [], time.time(), budget_s
        self.after_each = after_each  # writes the results so far (a crash keeps them)

    def run(self, name, fn):
        if time.time() - self.t0 > self.budget:
            self.results.append(dict(name=name, status="not run", detail="budget spent"))
            print("NOT RUN %s (budget)" % name, flush=True)
            return
        t = time.time()
        try:
            detail = fn() or {}
            bad = detail.pop("failures", [])
            status = "failed" if bad else "passed"
            detail["failures"] = bad
        except Exception as e:  # one broken case must not hide the others
            status, detail = "failed", {"failures": ["%s: %s" % (type(e).__name__, e)],
                                        "traceback": traceback.format_exc()[-3000:]}
        detail["seconds"] = round(time.time() - t, 1)
        self.results.append(dict(name=name, status=status, **detail))
        print("%s %s (%.1f s) %s" % (status.upper(), name, detail["seconds"],
                                     "; ".join(detail["failures"])[:600]), flush=True)
        self.after_each(self)


def rel_err(torch, got, want):
    got, want = got.float(), want.float()
    if not torch.isfinite(got).all():
        return float("inf")
    return ((got - want).abs().max() / want.abs().max().clamp_min(1e-6)).item()


def compare(torch, got, want, dtype_name, failures, what):
    errs = []
    for i, (g, w) in enumerate(zip(got, want)):
        e = rel_err(torch, g, w)
        errs.append(e)
        if not e <= TOL[dtype_name]:
            failures.append("%s output %d: relative error %.3g > %g" % (what, i, e, TOL[dtype_name]))
    return errs


def as_tuple(x):
    if hasattr(x, "logits"):
        return (x.logits,)
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


class Env:
    """torch, the group, ccltune.torch and the model builders, set up once."""

    def __init__(self, torch, dist, ct):
        self.torch, self.dist, self.ct = torch, dist, ct
        self.group = dist.group.WORLD
        import torch.distributed._functional_collectives as funcol
        self.funcol = funcol

    def pass_module(self):
        return sys.modules.get("ccltune.compile_pass")

    def reports(self):
        return self.ct.explain() if self.pass_module() else []

    def op_calls(self):
        return dict(self.pass_module().calls) if self.pass_module() else {}

    def compiled_case(self, build, inputs, dtype_name, want_fused, want_eps=None, code=False,
                      mode=None, calls=1, pooled=None):
        """torch.compile(build()) after a dynamo reset; run it `calls` times against the
        uncompiled function; check the pass's reports (want_fused fused ops, their eps) and
        the outputs. Returns the detail dict (failures listed in it)."""
        torch = self.torch
        torch._dynamo.reset()
        fn = build()
        failures, detail = [], {}
        n0, calls0 = len(self.reports()), self.op_calls()
        from torch._dynamo.utils import counters
        skips0 = counters["inductor"]["cudagraph_skips"]
        opts = dict(fullgraph=True, dynamic=False, **({"mode": mode} if mode else {}))
        errs = []
        with torch.no_grad():
            try:
                errs = self.run_calls(torch.compile(fn, **opts), fn, inputs, calls, code,
                                      want_fused, dtype_name, detail, failures,
                                      held=mode != "reduce-overhead")
            except torch._dynamo.exc.Unsupported as e:
                # Not traceable in one graph: a failure, but see what the pass does anyway.
                failures.append("fullgraph=True: %s" % str(e).splitlines()[0][:300])
                torch._dynamo.reset()
                opts["fullgraph"] = False
                errs = self.run_calls(torch.compile(fn, **opts), fn, inputs, calls, code,
                                      want_fused, dtype_name, detail, failures)
        torch.cuda.synchronize()
        detail["rel_err_max"] = max(errs) if errs else None
        reports = self.reports()[n0:]
        fused = [f for r in reports for f in r.fused]
        after = sum((r.ops_after for r in reports), collections.Counter())
        calls1 = self.op_calls()
        detail.update(graphs=len(reports), fused=len(fused),
                      eps=[f["eps"] for f in fused], forms=sorted({f["form"] for f in fused}),
                      choices=[f["choices"] for f in fused][:1], ops_after=dict(after),
                      op_calls={k: v - calls0.get(k, 0) for k, v in calls1.items()
                                if v != calls0.get(k, 0)},
                      reasons=[nm.reason for r in reports for nm in list(r.not_fused) + list(r.left)],
                      lines=[r.line for r in reports])
        if want_fused is not None and len(fused) != want_fused:
            failures.append("%d fused ops in the post-grad graph, want %d" % (len(fused), want_fused))
        ran = detail["op_calls"].get("group_all_reduce_residual_rmsnorm", 0)
        if want_fused and ran < want_fused:
            failures.append("the fused op ran %d times, want %d or more" % (ran, want_fused))
        if want_fused and after.get(C10D_AR):
            failures.append("%d c10d all_reduce left" % after[C10D_AR])
        if mode == "reduce-overhead":
            detail["cudagraph_skips"] = counters["inductor"]["cudagraph_skips"] - skips0
            if detail["cudagraph_skips"]:
                failures.append("Inductor skipped CUDA graphs (%d)" % detail["cudagraph_skips"])
        detail["pool"] = [f.get("pool") for f in fused]
        if pooled is not None:
            check_pooled(detail, failures, pooled, calls, mode)
        if want_eps is not None and [f["eps"] for f in fused] != want_eps:
            failures.append("eps %s, want %s" % ([f["eps"] for f in fused], want_eps))
        detail["failures"] = failures
        return detail

    def run_calls(self, compiled, fn, inputs, calls, code, want_fused, dtype_name, detail,
                  failures, held=False):
        """Each call against fn; with `held`, call 0's outputs, kept as returned, are compared
        with their reference again after the last call (nothing returned may alias memory a
        later call writes, such as a pooled slot)."""
        errs, first = [], None
        for call in range(calls):
            args = inputs(call)
            want = as_tuple(fn(*args))
            if code and call == 0:
                out = self.run_and_check_code(compiled, args, want_fused, detail, failures)
            else:
                out = compiled(*args)
            if call == 0:
                first = (as_tuple(out), want)
            got = [t.clone() for t in as_tuple(out)]
            errs += compare(self.torch, got, want, dtype_name, failures, "call %d" % call)
        if held and calls > 1:
            errs += compare(self.torch, list(first[0]), first[1], dtype_name, failures,
                            "call 0's outputs after %d more calls" % (calls - 1))
        return errs

    @staticmethod
    def run_and_check_code(compiled, args, want_fused, detail, failures):
        from torch._inductor.utils import run_and_get_code
        out, sources = run_and_get_code(compiled, *args)
        text = "\n".join(sources)
        detail["code_fused_calls"] = text.count("ccltune.group_all_reduce_residual_rmsnorm")
        detail["code_pool_ops"] = {op: text.count("ccltune.%s" % op)
                                   for op in ("pool_mm", "pool_place", "pool_slot")}
        detail["code_c10d_all_reduce"] = text.count("_c10d_functional.all_reduce")
        detail["code_lines"] = [line.strip() for line in text.splitlines()
                                if "ccltune." in line or "_c10d_functional" in line][:12]
        if detail["code_fused_calls"] < want_fused:
            failures.append("generated code calls the fused op %d times, want %d"
                            % (detail["code_fused_calls"], want_fused))
        return out


# --- the tensor-parallel Llama-shaped model, written with functional collectives -------------
def tp_model(env, dt, hidden=512, heads=8, inter=1024, reduce=None):
    """`reduce(x)`: how the row-parallel outputs are summed across ranks (default: the
    functional collective; dist_reduce: torch.distributed.all_reduce in place)."""
    torch, funcol, group = env.torch, env.funcol, env.group
    nn, F = torch.nn, torch.nn.functional
    reduce = reduce or (lambda x: funcol.all_reduce(x, "sum", group))

    class LlamaStyleRMSNorm(nn.Module):  # transformers' LlamaRMSNorm, verbatim
        def __init__(self, eps):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden))
            self.variance_epsilon = eps

        def forward(self, hidden_states):
            input_dtype = hidden_states.dtype
            hidden_states = hidden_states.to(torch.float32)
            variance = hidden_states.pow(2).mean(-1, keepdim=True)
            hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
            return self.weight * hidden_states.to(input_dtype)

    class Block(nn.Module):
        def __init__(self, norm_attn, norm_mlp):
            super().__init__()
            self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)       # column-parallel
            self.o = nn.Linear(hidden, hidden, bias=False)             # row-parallel
            self.gate_up = nn.Linear(hidden, 2 * inter, bias=False)    # column-parallel
            self.down = nn.Linear(inter, hidden, bias=False)           # row-parallel
            self.norm_attn, self.norm_mlp = norm_attn, norm_mlp

        def forward(self, h, residual):
            b, s, _ = h.shape
            q, k, v = self.qkv(h).view(b, s, 3, heads, hidden // heads).permute(2, 0, 3, 1, 4).unbind(0)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            a = a.transpose(1, 2).reshape(b, s, hidden)
            residual = residual + reduce(self.o(a))
            h = self.norm_attn(residual)
            g, u = self.gate_up(h).chunk(2, dim=-1)
            residual = residual + reduce(self.down(F.silu(g) * u))
            return self.norm_mlp(residual), residual

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm0 = nn.RMSNorm(hidden, eps=1e-5)
            self.blocks = nn.ModuleList([
                Block(nn.RMSNorm(hidden, eps=1e-5), LlamaStyleRMSNorm(1e-6)),
                Block(LlamaStyleRMSNorm(1e-5), nn.RMSNorm(hidden, eps=1e-6))])

        def forward(self, x):
            residual, h = x, self.norm0(x)
            for blk in self.blocks:
                h, residual = blk(h, residual)
            return h, residual

    torch.manual_seed(0)
    m = Model()
    with torch.no_grad():
        for name, p in m.named_parameters():
            p.copy_(1 + 0.1 * torch.randn_like(p) if p.dim() == 1 else torch.randn_like(p) * p.shape[1] ** -0.5)
    return m.to(device="cuda", dtype=dt).eval()


def dist_reduce(env):
    """torch.distributed.all_reduce in place, as Megatron-style code writes it (Dynamo traces
    it into the functional collective)."""
    def reduce(x):
        env.dist.all_reduce(x, group=env.group)
        return x
    return reduce


BLOCK_EPS = [1e-5, 1e-6, 1e-5, 1e-6]  # graph order: block 0 attn, mlp; block 1 attn, mlp


def block_inputs(torch, dt):
    def make(call):
        g = torch.Generator(device="cuda").manual_seed(100 + call)
        return (torch.randn(2, 16, 512, generator=g, device="cuda").to(dt),)
    return make


# --- transformers' Llama, row-parallel outputs all-reduced by hooks -------------------------
def hf_llama(env, dt, eps, layers=2):
    torch, funcol, group = env.torch, env.funcol, env.group
    from transformers import LlamaConfig, LlamaForCausalLM
    kw = dict(vocab_size=512, hidden_size=256, intermediate_size=512, num_hidden_layers=layers,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
              rms_norm_eps=eps, tie_word_embeddings=False)
    cfg = LlamaConfig(**kw)
    try:
        cfg._attn_implementation = "sdpa"
    except Exception:  # transformers' default then
        pass
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg)
    with torch.no_grad():  # weights of the norms away from 1, so a missed weight shows
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.1 * torch.randn_like(p))
    model = model.to(device="cuda", dtype=dt).eval()

    def row_parallel(module, args, output):  # what RowwiseParallel / Megatron do
        return funcol.all_reduce(output, "sum", group)

    for layer in model.model.layers:
        layer.self_attn.o_proj.register_forward_hook(row_parallel)
        layer.mlp.down_proj.register_forward_hook(row_parallel)

    def forward(ids):
        return model(input_ids=ids, use_cache=False).logits
    return forward


def ids_inputs(torch):
    def make(call):
        g = torch.Generator(device="cuda").manual_seed(200 + call)
        return (torch.randint(0, 512, (2, 16), generator=g, device="cuda"),)
    return make


# --- patterns that must not be fused ---------------------------------------------------------
def written_norm(torch, s, w, eps, dim=-1):
    x = s.float()
    return (x * torch.rsqrt(x.pow(2).mean(dim, keepdim=True) + eps)).to(s.dtype) * w


def negative_cases(env):
    torch, funcol, group = env.torch, env.funcol, env.group
    other = env.dist.new_group([0])
    dt, H = torch.bfloat16, 512

    def params():
        g = torch.Generator(device="cuda").manual_seed(7)
        return [torch.randn(32, H, generator=g, device="cuda").to(dt),
                torch.randn(32, H, generator=g, device="cuda").to(dt),
                (1 + 0.1 * torch.randn(H, generator=g, device="cuda")).to(dt)]

    def other_dim(x, r, w):
        s = r + funcol.all_reduce(x, "sum", group)
        return written_norm(torch, s, w, 1e-5, dim=0), s

    def max_reduce(x, r, w):
        s = r + funcol.all_reduce(x, "max", group)
        return written_norm(torch, s, w, 1e-5), s

    def sum_used_elsewhere(x, r, w):
        a = funcol.all_reduce(x, "sum", group)
        s = r + a
        return written_norm(torch, s, w, 1e-5), s, a * 2

    def unserved_group(x, r, w):
        s = r + funcol.all_reduce(x, "sum", other)
        return written_norm(torch, s, w, 1e-5), s

    return [  # name, fn, reason wanted, op wanted after the pass
        ("not-fused-other-dim", other_dim, "not the last one only", "ccltune.group_all_reduce.default"),
        ("not-fused-max", max_reduce, "reduce op max: the fused op sums", "ccltune.group_all_reduce.default"),
        ("not-fused-sum-used-elsewhere", sum_used_elsewhere, "the all-reduced sum is used by 2 nodes",
         "ccltune.group_all_reduce.default"),
        ("not-fused-unserved-group", unserved_group, "is not served", C10D_AR),
    ], params


def negative_check(env, fn, reason, want_op, params):
    torch = env.torch
    detail = env.compiled_case(lambda: fn, lambda call: params(), "bfloat16", 0)
    failures = detail["failures"]
    if not any(reason in x for x in detail["reasons"]):
        failures.append("no near-miss reason containing %r (got %s)" % (reason, detail["reasons"]))
    if not detail["ops_after"].get(want_op):
        failures.append("%s not in the graph after the pass (%s)" % (want_op, detail["ops_after"]))
    return detail


def plain_check(env):
    torch, funcol, group = env.torch, env.funcol, env.group

    def plain(x):
        ag = funcol.all_gather_tensor(x, 0, group)
        rs = funcol.reduce_scatter_tensor(ag, "sum", 0, group)
        return funcol.all_reduce(rs, "avg", group) * 2

    detail = env.compiled_case(lambda: plain, lambda c: (torch.randn(64, 256, device="cuda"),),
                               "float32", 0)
    for op in ("ccltune.group_all_gather.default", "ccltune.group_reduce_scatter.default",
               "ccltune.group_all_reduce.default"):
        if not detail["ops_after"].get(op):
            detail["failures"].append("%s missing after the pass" % op)
    left = [k for k in detail["ops_after"] if k.startswith("_c10d_functional.") and "wait" not in k]
    if left:
        detail["failures"].append("c10d collectives left: %s" % left)
    return detail


def check_pooled(detail, failures, want, calls, mode):
    """`want`: per site, the (input, residual) arrangement expected, or for a site that must
    not be pooled a fragment of the reason."""
    got = detail["pool"]
    if len(got) != len(want):
        failures.append("%d fused sites with a pool report, want %d" % (len(got), len(want)))
        return
    arranged = 0
    for i, (g, w) in enumerate(zip(got, want)):
        if isinstance(w, str):
            if g["arranged"] or w not in (g.get("why") or ""):
                failures.append("site %d: %s, want not pooled because of %r" % (i, g, w))
        elif not g["arranged"] or (g["input"], g["residual"]) != w:
            failures.append("site %d: %s, want pooled with input/residual %s" % (i, g, w))
        else:
            arranged += 1
    ran = detail["op_calls"].get("pooled_arranged", 0)
    # Eager runs call the op each time; under CUDA graphs replays do not reach Python.
    need = arranged * calls if mode != "reduce-overhead" else arranged
    if ran < need:
        failures.append("the fused op ran on pooled slots %d times, want %d or more (not on "
                        "slots: %d)" % (ran, need, detail["op_calls"].get("pooled_not_arranged", 0)))
    if not arranged and ran:
        failures.append("the fused op ran on pooled slots %d times, want none" % ran)


MM, CHAIN, COPY = "mm into the slot", "chained", "copied in"
BLOCK_POOLED = [(MM, COPY), (MM, CHAIN), (MM, CHAIN), (MM, CHAIN)]


def pool_checks(env, checks):
    """pool="always" on the block (eager and CUDA graphs) and on transformers' Llama; then
    pool="auto" (no winners: the same choice either way); a group without a pool."""
    torch, ct, bf = env.torch, env.ct, env.torch.bfloat16
    ct.enable(pool="always", record_graphs=True)
    checks.run("pool-always-block-bfloat16", lambda: env.compiled_case(
        lambda: tp_model(env, bf), block_inputs(torch, bf), "bfloat16", 4, BLOCK_EPS, code=True,
        calls=3, pooled=BLOCK_POOLED))
    checks.run("pool-always-graphs-block-bfloat16", lambda: env.compiled_case(
        lambda: tp_model(env, bf), block_inputs(torch, bf), "bfloat16", 4, BLOCK_EPS,
        mode="reduce-overhead", calls=3, pooled=BLOCK_POOLED))
    # Llama's first residual is the embedding's output (copied into a slot once).
    checks.run("pool-always-llama-bfloat16", lambda: env.compiled_case(
        lambda: hf_llama(env, bf, 1e-6), ids_inputs(torch), "bfloat16", 4, [1e-6] * 4,
        code=True, calls=2, pooled=[(MM, COPY), (MM, CHAIN), (MM, CHAIN), (MM, CHAIN)]))
    checks.run("pool-always-graphs-llama-bfloat16", lambda: env.compiled_case(
        lambda: hf_llama(env, bf, 1e-6), ids_inputs(torch), "bfloat16", 4, [1e-6] * 4,
        mode="reduce-overhead", calls=3, pooled=[(MM, COPY), (MM, CHAIN), (MM, CHAIN), (MM, CHAIN)]))
    ct.enable(pool="auto", record_graphs=True)
    checks.run("pool-auto-same-choice", lambda: uncached(env, lambda: env.compiled_case(
        lambda: tp_model(env, bf), block_inputs(torch, bf), "bfloat16", 4, BLOCK_EPS, calls=2,
        pooled=["pooled and plain buffers run the same choice"] * 4)))
    checks.run("pool-group-without-pool", lambda: no_pool_check(env))
    try:
        ct.enable(pool="sometimes")
        bad = "enable(pool='sometimes') was accepted"
    except ValueError as e:
        bad = None if "pool='sometimes'" in str(e) else "error does not name pool: %s" % e
    checks.run("pool-bad-value", lambda: {"failures": [bad] if bad else []})


def uncached(env, fn):
    """fn() with Inductor's and AOTAutograd's caches off: block-bfloat16 compiled the same
    graph with the same settings, and a cache hit skips the pass (and its report)."""
    torch = env.torch
    import torch._functorch.config
    with torch._inductor.config.patch(fx_graph_cache=False), \
            torch._functorch.config.patch(enable_autograd_cache=False):
        return fn()


def no_pool_check(env):
    """A group served without a pool (pool_bytes=0): fused, not pooled, the reason says so."""
    torch, dist = env.torch, env.dist
    sub = dist.new_group([0])
    env.ct.enable(sub, pool="always", pool_bytes=0, record_graphs=True)
    saved, env.group = env.group, sub
    try:
        return env.compiled_case(lambda: tp_model(env, torch.bfloat16),
                                 block_inputs(torch, torch.bfloat16), "bfloat16", 4, BLOCK_EPS,
                                 pooled=["no pool"] * 4)
    finally:
        env.group = saved


def baseline_check(env):
    torch = env.torch
    detail = env.compiled_case(lambda: tp_model(env, torch.bfloat16), block_inputs(torch, torch.bfloat16),
                               "bfloat16", 0, code=True)
    if torch._inductor.config.post_grad_custom_post_pass is not None:
        detail["failures"].append("a post-grad pass is installed without enable()")
    if "ccltune.compile_pass" in sys.modules:
        detail["failures"].append("the pass module was imported without enable()")
    if detail.get("code_fused_calls") or not detail.get("code_c10d_all_reduce"):
        detail["failures"].append("generated code: %d fused calls, %d c10d all_reduce"
                                  % (detail.get("code_fused_calls", 0), detail.get("code_c10d_all_reduce", 0)))
    return detail


def cache_check(env):
    """The bf16 block compiled, then again after torch._dynamo.reset(): Inductor serves the
    second from its cache (the pass's uuid is part of the key; a pass without one makes it
    bypass the cache), and the cached code still calls the fused op and computes the same."""
    torch = env.torch
    from torch._dynamo.utils import counters
    env.compiled_case(lambda: tp_model(env, torch.bfloat16), block_inputs(torch, torch.bfloat16),
                      "bfloat16", None)  # in the cache now, if block-bfloat16 did not put it
    counters.clear()
    detail = env.compiled_case(lambda: tp_model(env, torch.bfloat16),
                               block_inputs(torch, torch.bfloat16), "bfloat16", None)
    failures = detail["failures"]
    detail["counters"] = {"%s.%s" % (k, c): v for k in ("inductor", "aot_autograd")
                          for c, v in counters[k].items() if "cache" in c}
    hits = sum(v for k, v in detail["counters"].items() if k.endswith("cache_hit"))
    if not hits:
        failures.append("no cache hit: %s" % detail["counters"])
    if any("bypass" in k for k in detail["counters"]):
        failures.append("cache bypassed: %s" % detail["counters"])
    ran = detail["op_calls"].get("group_all_reduce_residual_rmsnorm", 0)
    if ran != 4:
        failures.append("the cached code ran the fused op %d times, want 4" % ran)
    return detail


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    p.add_argument("--budget", type=float, default=420, help="seconds; later checks are skipped")
    p.add_argument("--quick", action="store_true", help="bf16 only")
    a = p.parse_args()
    os.environ.update({"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                       "NVSHMEM_DISABLE_NVLS": "1"})
    # A cache of this run's own: graphs another run compiled would skip the pass (the cache
    # check below compiles twice within the run).
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="ccltune-inductor-")
    try:
        import torch
    except ImportError:
        print("SKIP: PyTorch is not installed here (the compiler pass needs it; "
              "compile_rules_test.py checks its rules without it)")
        return 77
    if not torch.cuda.is_available():
        print("SKIP: no CUDA GPU")
        return 77
    import torch.distributed as dist
    import torch._inductor.config  # noqa: F401 (the baseline reads it before any compile)
    torch.cuda.set_device(0)
    tmp = tempfile.mkdtemp(prefix="ccltune-compile-")
    dist.init_process_group("nccl", init_method="file://" + os.path.join(tmp, "pg"), rank=0,
                            world_size=1, device_id=torch.device("cuda", 0))
    import ccltune.torch as ct
    env = Env(torch, dist, ct)
    checks = Checks(a.budget, lambda c: write(a.out, c, env))
    try:
        import transformers
        hf = "transformers %s" % transformers.__version__
    except ImportError:
        hf = "no transformers"
    print("torch %s, %s, %s" % (torch.__version__, hf, torch.cuda.get_device_name(0)), flush=True)
    checks.run("baseline-without-enable", lambda: baseline_check(env))
    # A pool for the pool-* checks (pool="auto", the default, pools nothing without winners).
    ct.enable(record_graphs=True, verbose=True, pool_bytes=256 << 20)
    # Most telling first: a later check may be cut by the budget.
    checks.run("block-bfloat16", lambda: env.compiled_case(
        lambda: tp_model(env, torch.bfloat16), block_inputs(torch, torch.bfloat16), "bfloat16", 4,
        BLOCK_EPS, code=True))
    # The same with enable(residual="copy") (a functional op that copies the residual); the
    # rest runs with the default unless only the copy passed.
    ct.enable(residual="copy", record_graphs=True)
    checks.run("block-bfloat16-residual-copy", lambda: env.compiled_case(
        lambda: tp_model(env, torch.bfloat16), block_inputs(torch, torch.bfloat16), "bfloat16", 4,
        BLOCK_EPS))
    status = {r["name"]: r["status"] for r in checks.results}
    mode = "copy" if (status["block-bfloat16"] != "passed" and
                      status["block-bfloat16-residual-copy"] == "passed") else "inplace"
    ct.enable(residual=mode, record_graphs=True)
    print("residual=%s for the other checks" % mode, flush=True)
    cases, params = negative_cases(env)
    for case, fn, reason, op in cases:
        checks.run(case, lambda fn=fn, reason=reason, op=op: negative_check(env, fn, reason, op, params))
    checks.run("plain-collectives", lambda: plain_check(env))
    checks.run("llama-bfloat16-1e-05", lambda: env.compiled_case(
        lambda: hf_llama(env, torch.bfloat16, 1e-5), ids_inputs(torch), "bfloat16", 4, [1e-5] * 4,
        code=True))
    checks.run("graphs-block-bfloat16", lambda: env.compiled_case(
        lambda: tp_model(env, torch.bfloat16), block_inputs(torch, torch.bfloat16), "bfloat16", 4,
        BLOCK_EPS, mode="reduce-overhead", calls=3))
    checks.run("cache", lambda: cache_check(env))
    checks.run("dist-all-reduce-block-bfloat16", lambda: env.compiled_case(
        lambda: tp_model(env, torch.bfloat16, reduce=dist_reduce(env)),
        block_inputs(torch, torch.bfloat16), "bfloat16", 4, BLOCK_EPS, calls=2))
    pool_checks(env, checks)
    ct.enable(residual=mode, pool="auto", record_graphs=True)
    dtypes = [torch.bfloat16] if a.quick else [torch.bfloat16, torch.float16, torch.float32]
    name = {torch.bfloat16: "bfloat16", torch.float16: "float16", torch.float32: "float32"}
    for dt in dtypes[1:]:
        checks.run("block-%s" % name[dt], lambda dt=dt: env.compiled_case(
            lambda: tp_model(env, dt), block_inputs(torch, dt), name[dt], 4, BLOCK_EPS))
    for dt, eps in [(dt, eps) for dt in dtypes for eps in (1e-5, 1e-6)][1:]:
        checks.run("llama-%s-%g" % (name[dt], eps), lambda dt=dt, eps=eps: env.compiled_case(
            lambda: hf_llama(env, dt, eps), ids_inputs(torch), name[dt], 4, [eps] * 4))
    checks.run("graphs-llama-bfloat16", lambda: env.compiled_case(
        lambda: hf_llama(env, torch.bfloat16, 1e-6), ids_inputs(torch), "bfloat16", 4, [1e-6] * 4,
        mode="reduce-overhead", calls=3))
    n = collections.Counter(r["status"] for r in checks.results)
    print("compile_pass_check: %d checks, %d passed, %d failed, %d not run"
          % (len(checks.results), n["passed"], n["failed"], n["not run"]), flush=True)
    dist.destroy_process_group()
    return 1 if n["failed"] else 0


def write(out_dir, checks, env):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "compile-pass.json"), "w") as f:
        json.dump(checks.results, f, indent=1, default=str)
    with open(os.path.join(out_dir, "graphs.txt"), "w") as f:
        for r in env.reports():
            if not r.ops_before:
                continue
            f.write("=== %s\nbefore: %s\nafter: %s\n--- graph before the pass\n%s\n--- after\n%s\n"
                    % (r, dict(r.ops_before), dict(r.ops_after), r.graph_before, r.graph_after))


if __name__ == "__main__":
    sys.exit(main())
