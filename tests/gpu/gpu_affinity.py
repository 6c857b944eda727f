"""CPU cores for each rank of a one-process-per-GPU benchmark: those local to its GPU.

Eager collectives in PyTorch are bound by the host (23-50 µs a call on 2x H200 SXM), so where
a rank's threads run moves its times: unpinned, the same preloaded configuration measured
24 µs a call in one process and 43 µs in the next. Launchers that care (torchrun's NUMA
binding, Slurm's --cpu-bind, Kubernetes' static CPU manager) pin each rank near its GPU; the
benchmarks do the same, identically for every run they compare. Pinning narrows the spread
between processes but does not remove it (tests/gpu/results/eager-host.md): eager figures
still come from runs alternated several times, as medians.

cores_per_rank(torch, world) -> [set of cores per rank] or None (the reason printed): the cores
of each GPU's NUMA node (/sys/bus/pci/devices/BUS/local_cpulist; all of this process's allowed
cores where that is not known), split evenly, by whole physical cores, among the ranks whose
GPUs share that node.
"""
import os


def parse_cpulist(text):
    """'0-3,8,10-11' -> {0, 1, 2, 3, 8, 10, 11}."""
    cores = set()
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        cores.update(range(int(lo), int(hi or lo) + 1))
    return cores


def gpu_local_cores(props):
    """The cores local to the GPU whose torch device properties are `props`, or None (a
    virtual machine's PCI devices often have no local_cpulist)."""
    try:
        bus = "%04x:%02x:%02x.0" % (props.pci_domain_id, props.pci_bus_id, props.pci_device_id)
        with open("/sys/bus/pci/devices/%s/local_cpulist" % bus) as f:
            return parse_cpulist(f.read())
    except (AttributeError, OSError, ValueError):
        return None


def siblings(cpu):
    """The hardware threads of `cpu`'s physical core (itself alone where sysfs does not say)."""
    try:
        with open("/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list" % cpu) as f:
            return frozenset(parse_cpulist(f.read()))
    except (OSError, ValueError):
        return frozenset([cpu])


def split(local, world, allowed, siblings_of=siblings):
    """local: per rank, its GPU's cores; each rank gets an even share of the physical cores
    of its node that are in `allowed` (whole cores: two ranks never share one through its
    hardware threads); None when a share would be empty."""
    out = []
    for rank, cores in enumerate(local):
        mates = [r for r in range(world) if local[r] == cores]
        usable = cores & allowed
        phys = sorted({siblings_of(c) & usable for c in usable}, key=min)
        k, m = mates.index(rank), len(mates)
        share = set().union(*phys[k * len(phys) // m:(k + 1) * len(phys) // m])
        if not share:
            return None
        out.append(share)
    return out


def cores_per_rank(torch, world):
    """Per rank, the cores to pin it to, or None with a line saying why not. Where the GPUs'
    local cores are not known, every allowed core counts as local to every GPU."""
    allowed = os.sched_getaffinity(0)
    local = [gpu_local_cores(torch.cuda.get_device_properties(r)) for r in range(world)]
    if any(c is None for c in local):
        local = [set(allowed)] * world
    shares = split(local, world, allowed)
    if shares is None:
        print("gpu_affinity: too few allowed cores to share; ranks not pinned", flush=True)
    return shares


def add_flag(parser):
    """The programs' --no-pin flag."""
    parser.add_argument("--no-pin", action="store_true",
                        help="leave the ranks unpinned (default: each on cores local to its GPU)")


def for_run(args, torch, world):
    """Per rank, its cores, or None where --no-pin was given or no share could be made."""
    return None if args.no_pin else cores_per_rank(torch, world)


def pin(cores, rank):
    """In a rank's process, before torch starts its threads (they inherit it)."""
    if cores:
        os.sched_setaffinity(0, cores[rank])


def describe_all(cores):
    """Per rank, its cores as describe() prints them; None for unpinned ranks."""
    return [describe(c) for c in cores] if cores else None


def describe(cores):
    """{0, 1, 2, 5} -> '0-2,5'."""
    runs, start, prev = [], None, None
    for c in sorted(cores):
        if start is None:
            start = prev = c
        elif c == prev + 1:
            prev = c
        else:
            runs.append((start, prev))
            start = prev = c
    if start is not None:
        runs.append((start, prev))
    return ",".join("%d" % a if a == b else "%d-%d" % (a, b) for a, b in runs)
