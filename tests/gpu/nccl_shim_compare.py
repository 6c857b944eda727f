"""Compares torch_programs.py outputs bitwise (issue 22): the run without libccltune-nccl is
the reference; every other run must hold the same tensors with the same bits.

  python3 nccl_shim_compare.py REFERENCE.pt OTHER.pt [OTHER.pt ...]
"""
import sys

import torch


def main():
    ref = torch.load(sys.argv[1])
    bad = 0
    for path in sys.argv[2:]:
        other = torch.load(path)
        missing = sorted(set(ref) ^ set(other))
        diff = [k for k in ref if k in other and not torch.equal(
            ref[k].view(torch.uint8) if ref[k].dtype != torch.bool else ref[k],
            other[k].view(torch.uint8) if other[k].dtype != torch.bool else other[k])]
        print("%s: %d tensors, %d bitwise equal, %d differ%s%s" % (
            path, len(ref), len(ref) - len(diff) - len(missing), len(diff),
            (" (" + ", ".join(diff[:5]) + ")") if diff else "",
            (", missing " + ", ".join(missing[:5])) if missing else ""))
        bad += len(diff) + len(missing)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
