#!/usr/bin/env python3
"""The modules of runtime/python/ccltune import one another without a circle (issue 35:
compile_pass.py and torch.py did). Read from the sources with ast, so it runs where PyTorch is
missing (CI): every import counts, at the top of a file or inside a function, since a lazy
import is still a dependency.

Run by ctest (runtime_python_imports) with the package folder as the argument.
"""
import ast
import os
import sys
import tempfile
import unittest

PACKAGE_DIR = None  # set from argv in __main__


def package_modules(folder):
    """{module name: path} of the package's .py files (package name: the folder's)."""
    pkg = os.path.basename(os.path.normpath(folder))
    mods = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith('.py'):
            stem = name[:-3]
            mods[pkg if stem == '__init__' else pkg + '.' + stem] = os.path.join(folder, name)
    return pkg, mods


def imported(pkg, module, tree, known):
    """The names in `known` that `tree` (the source of `module`) imports, anywhere in it."""
    out = set()
    here = module if module == pkg else module.rsplit('.', 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:  # relative: from . import x / from .x import y
                base = '.'.join([here] + ([base] if base else []))
            if base in known:
                out.add(base)
            out.update(base + '.' + a.name for a in node.names if base + '.' + a.name in known)
    out.discard(module)
    out.discard(pkg)  # every submodule imports its package first: no edge worth drawing
    return out


def import_graph(folder):
    pkg, mods = package_modules(folder)
    graph = {}
    for module, path in mods.items():
        with open(path) as f:
            graph[module] = imported(pkg, module, ast.parse(f.read(), path), set(mods))
    return graph


def find_cycle(graph):
    """One import circle as [a, b, ..., a], or None."""
    state = {}  # module -> 'open' (on the path) or 'done'

    def visit(m, path):
        state[m] = 'open'
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 'open':
                return path[path.index(n):] + [n]
            if n not in state:
                found = visit(n, path + [n])
                if found:
                    return found
        state[m] = 'done'
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m, [m])
            if found:
                return found
    return None


class ImportCircleTest(unittest.TestCase):
    def test_ccltune_package_has_no_import_circle(self):
        graph = import_graph(PACKAGE_DIR)
        self.assertIn('ccltune.torch', graph)
        self.assertIn('ccltune.compile_pass', graph)
        cycle = find_cycle(graph)
        self.assertIsNone(cycle, 'import circle: ' + ' -> '.join(cycle or []))
        # The edges this test is about: enable() reaches the pass; both use the communicator.
        self.assertIn('ccltune.compile_pass', graph['ccltune.torch'])
        self.assertIn('ccltune.communicator', graph['ccltune.compile_pass'])

    def test_a_lazy_import_back_is_found(self):
        with tempfile.TemporaryDirectory() as d:
            folder = os.path.join(d, 'pkg')
            os.mkdir(folder)
            sources = {'__init__.py': '',
                       'a.py': 'import os\nfrom pkg import b\n',
                       'b.py': 'def f():\n    from . import c\n',
                       'c.py': 'def g():\n    import pkg.a as a\n',
                       'd.py': 'from pkg.c import g\n'}
            for name, text in sources.items():
                with open(os.path.join(folder, name), 'w') as f:
                    f.write(text)
            graph = import_graph(folder)
            self.assertEqual(graph['pkg.d'], {'pkg.c'})
            self.assertEqual(find_cycle(graph), ['pkg.a', 'pkg.b', 'pkg.c', 'pkg.a'])


if __name__ == '__main__':
    if len(sys.argv) < 2 or not os.path.isdir(sys.argv[1]):
        sys.exit('usage: python_imports_test.py PACKAGE_DIR')
    PACKAGE_DIR = sys.argv.pop(1)
    unittest.main()
