"""The functions an nccl.h declares, read from the header text (libccltune-nccl's build).

Used by gen_forwarders.py. A declaration is `<return type> <name>(<params>);` at file
level, where the name is ncclX or pncclX; comments and preprocessor lines are skipped.
"""
import re
from dataclasses import dataclass


@dataclass
class Param:
    decl: str  # as written: "const void* sendbuff"
    name: str  # "sendbuff"


@dataclass
class Function:
    ret: str  # "ncclResult_t", "const char*", "void"
    name: str
    params: list

    def signature(self):
        return "%s %s(%s)" % (self.ret, self.name, ", ".join(p.decl for p in self.params))

    def arg_names(self):
        return ", ".join(p.name for p in self.params)


# One statement (the text between two semicolons or braces).
_DECL = re.compile(r"^\s*((?:const\s+)?[A-Za-z_]\w*\s*\**)\s*(p?nccl[A-Z]\w*)\s*\(([^()]*)\)\s*$",
                   re.S)


def _strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", " ", text)
    lines = [l for l in text.split("\n") if not l.lstrip().startswith("#")]
    return "\n".join(lines)


def _param(decl, func, index):
    decl = " ".join(decl.split())
    m = re.search(r"([A-Za-z_]\w*)\s*$", decl)
    words = re.findall(r"[A-Za-z_]\w*", decl)
    if not m or len(words) < 2 or decl.endswith("*"):
        raise ValueError("%s: parameter %d (%r) has no name" % (func, index, decl))
    return Param(decl, m.group(1))


def parse(text):
    """Every function declared in `text`, in order; raises ValueError on one it cannot read."""
    out = []
    for statement in re.split(r"[;{}]", _strip(text)):
        m = _DECL.match(statement)
        if not m:
            continue
        ret, name, params = " ".join(m.group(1).split()), m.group(2), m.group(3).strip()
        ret = ret.replace(" *", "*")
        plist = [] if params in ("", "void") else [
            _param(p, name, i) for i, p in enumerate(params.split(","))]
        out.append(Function(ret, name, plist))
    if not out:
        raise ValueError("no nccl functions found: is this nccl.h?")
    return out


def version(text):
    """(major, minor, patch) from the NCCL_MAJOR/MINOR/PATCH defines."""
    got = {}
    for key in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(r"#define\s+NCCL_%s\s+(\d+)" % key, text)
        if not m:
            raise ValueError("NCCL_%s not defined" % key)
        got[key] = int(m.group(1))
    return got["MAJOR"], got["MINOR"], got["PATCH"]
