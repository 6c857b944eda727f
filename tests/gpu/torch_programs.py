"""Unmodified PyTorch programs that call NCCL through torch.distributed (issue 22's check).

Nothing here knows of ccltune: nccl_shim_on_device.sh runs this file with and without
LD_PRELOAD=libccltune-nccl.so and nccl_shim_compare.py compares what it saved bitwise.

  python3 torch_programs.py OUT.pt [--only allreduce]

One rank (world size 1) on GPU 0, NCCL backend: dist.all_reduce (sum, max, avg, and product,
which the test winners leave untuned), all_gather_into_tensor, reduce_scatter_tensor (sum,
avg) over dtypes and sizes 1 KiB-8 MiB (the winners' tuned sizes and between), a DDP
training step, an all-reduce captured in a CUDA graph and replayed, a
capture that is a new group's first collective, and torch.compile over functional
collectives. Inputs are seeded; every output is saved.
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

DTYPES = [torch.float32, torch.bfloat16, torch.float16]
SIZES = [1 << 10, 2 << 10, 8 << 10, 32 << 10, 128 << 10, 512 << 10, 2 << 20, 4 << 20, 8 << 20]


def rand(numel, dtype, gen):
    return torch.randn(numel, generator=gen, device="cuda", dtype=torch.float32).to(dtype)


def collectives(out, gen):
    for dtype in DTYPES:
        esize = torch.tensor([], dtype=dtype).element_size()
        for size in SIZES:
            n = size // esize
            x = rand(n, dtype, gen)
            dist.all_reduce(x)  # in place
            out["all_reduce/%s/%d" % (dtype, size)] = x.clone()
            y = rand(n, dtype, gen)
            dist.all_reduce(y, op=dist.ReduceOp.MAX)
            out["all_reduce_max/%s/%d" % (dtype, size)] = y.clone()
            g = torch.empty(n * dist.get_world_size(), device="cuda", dtype=dtype)
            dist.all_gather_into_tensor(g, rand(n, dtype, gen))
            out["all_gather/%s/%d" % (dtype, size)] = g
            r = torch.empty(n // dist.get_world_size(), device="cuda", dtype=dtype)
            dist.reduce_scatter_tensor(r, rand(n, dtype, gen))
            out["reduce_scatter/%s/%d" % (dtype, size)] = r
            # ncclAvg, as FSDP2 reduce-scatters its gradients.
            a = torch.empty(n // dist.get_world_size(), device="cuda", dtype=dtype)
            dist.reduce_scatter_tensor(a, rand(n, dtype, gen), op=dist.ReduceOp.AVG)
            out["reduce_scatter_avg/%s/%d" % (dtype, size)] = a
            v = rand(n, dtype, gen)
            dist.all_reduce(v, op=dist.ReduceOp.AVG)
            out["all_reduce_avg/%s/%d" % (dtype, size)] = v.clone()
        # A reduction the test winners never tuned: forwarded as "no records".
        p = rand(4096 // esize, dtype, gen)
        dist.all_reduce(p, op=dist.ReduceOp.PRODUCT)
        out["all_reduce_prod/%s" % dtype] = p.clone()
    torch.cuda.synchronize()


def ddp_step(out):
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(),
                                torch.nn.Linear(4096, 1024)).cuda()
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for step in range(3):
        x = torch.randn(64, 1024, device="cuda")
        loss = ddp(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    for i, p in enumerate(model.parameters()):
        out["ddp/param%d" % i] = p.detach().clone()


def graph_capture(out, gen):
    x = rand(1 << 20, torch.bfloat16, gen)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        dist.all_reduce(x)  # warm-up outside the capture
    torch.cuda.current_stream().wait_stream(s)
    # One rank: NCCL enqueues nothing for an in-place all-reduce, so the graph also holds an
    # out-of-place all-gather (a copy), whose replays must write its output.
    gathered = torch.zeros(x.numel() * dist.get_world_size(), device="cuda", dtype=x.dtype)
    with torch.cuda.stream(s):
        dist.all_gather_into_tensor(gathered, x)
    torch.cuda.current_stream().wait_stream(s)
    gathered.zero_()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        dist.all_reduce(x)
        dist.all_gather_into_tensor(gathered, x * 2)
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    if dist.get_world_size() == 1 and not torch.equal(gathered, x * 2):
        raise SystemExit("graph: the replayed all-gather did not write its output")
    out["graph/all_reduce"] = x.clone()
    out["graph/all_gather"] = gathered.clone()
    # A group whose first collective is captured: no context can be made in a capture.
    group = dist.new_group([0])
    y = rand(1 << 16, torch.float32, gen)
    g2 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g2):
        dist.all_reduce(y, group=group)
    g2.replay()
    torch.cuda.synchronize()
    out["graph/first_call"] = y.clone()


def compiled(out, gen):
    def f(x):
        y = funcol.all_reduce(x * 2, "sum", dist.group.WORLD)
        z = funcol.all_gather_tensor(y + 1, 0, dist.group.WORLD)
        return funcol.reduce_scatter_tensor(z, "sum", 0, dist.group.WORLD)

    fc = torch.compile(f, fullgraph=True)
    for size in (4096, 1 << 20):
        x = rand(size, torch.bfloat16, gen)
        out["compile/%d" % size] = fc(x).clone()
    torch.cuda.synchronize()


def main():
    path = sys.argv[1]
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%s" %
                            os.environ.get("TORCH_PROGRAMS_PORT", "29531"),
                            rank=0, world_size=1, device_id=torch.device("cuda", 0))
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    out = {}
    only = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--only" else None
    steps = [("collectives", lambda: collectives(out, gen)), ("ddp", lambda: ddp_step(out)),
             ("graph", lambda: graph_capture(out, gen)), ("compile", lambda: compiled(out, gen))]
    for name, step in steps:
        if only is None or name == only:
            step()
            print("%s: done" % name, flush=True)
    torch.save({k: v.cpu() for k, v in out.items()}, path)
    dist.destroy_process_group()
    print("saved %d tensors to %s" % (len(out), path))


if __name__ == "__main__":
    main()
